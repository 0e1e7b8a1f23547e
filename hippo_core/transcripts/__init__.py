"""Agent transcripts: the records each agent writes, read into sessions and turns.

Every agent's format is a *source* (:mod:`hippo_core.transcripts.sources`), registered
with its agent through ``hippo_register_agents`` by :mod:`hippo_core.builtins.agents`; this
package holds what they share.
"""
