"""Agent transcripts: the records each agent writes, read into sessions and turns.

Every agent's format is read by a *source* plugin (:mod:`hippo_core.builtins.sources`)
registered through ``hippo_register_sources``; this package holds what they share.
"""
