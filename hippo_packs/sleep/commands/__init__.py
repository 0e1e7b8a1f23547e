"""The ways in a person or an agent types: the commands (:mod:`.cli`, registered through
``hippo_register_commands``) and the MCP tools (:mod:`.tools`, through
``hippo_register_tools``), each thin over the actions (:mod:`hippo_packs.sleep.actions`)."""
