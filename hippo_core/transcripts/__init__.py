"""Agent transcripts: the records each agent writes, read into sessions and turns.

Every agent's format is a *source* (:mod:`hippo_core.transcripts.sources`), registered
through ``hippo_register_sources`` by :mod:`hippo_core.builtins.sources`; this package
holds what they share.
"""
