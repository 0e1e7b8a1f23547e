"""What a command and an MCP tool alike do, above the rooms they use: what an agent's hook
does, review, init, doctor, forget, the session log, and what ``hippo config set`` checks."""
