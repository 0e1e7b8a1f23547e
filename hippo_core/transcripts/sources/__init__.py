"""The agents' transcript formats, one module per agent, each a
:class:`~hippo_core.transcripts.model.TranscriptSource`.

Each agent's plugin in :mod:`hippo_core.builtins.agents` registers its source with the
agent, through ``hippo_register_agents``, the hook a third-party agent uses too.
"""
