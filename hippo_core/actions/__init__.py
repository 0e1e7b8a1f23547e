"""What a command and an MCP tool alike do, above the rooms they use."""
