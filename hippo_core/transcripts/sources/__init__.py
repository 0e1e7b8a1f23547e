"""The agents' transcript formats, one module per agent, each a
:class:`~hippo_core.transcripts.model.TranscriptSource`.

:mod:`hippo_core.builtins.sources` registers them through ``hippo_register_sources``, the
hook a third-party source uses too.
"""
