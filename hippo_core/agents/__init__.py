"""What hippo knows of coding agents: which one runs us, the install of its hooks, the
records of its sessions, and who acts (a person, an agent's shell, an agent's tool call)."""
