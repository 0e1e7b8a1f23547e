"""The built-in transcript sources, one plugin module per agent.

Each module registers its :class:`~hippo_core.transcripts.model.TranscriptSource` through
``hippo_register_sources``, the hook a third-party source uses too. Modules import only
the standard library at import time (they are loaded on the agent's hot path); anything
heavier is imported inside ``parse``.
"""
