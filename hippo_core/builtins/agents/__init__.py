"""The coding agents hippo ships, one plugin module each, registered through
``hippo_register_agents`` as a third party's agent is: Claude Code, Codex, Gemini CLI and
OpenCode with hooks and MCP configs, Command Code, dsh and muse for their transcripts."""
