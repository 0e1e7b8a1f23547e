"""``hippo mcp``: hippo's tools for an agent mid-session, served over MCP on stdio.

:mod:`~hippo_core.mcp.tool` holds how a call of a tool (what a plugin registers,
:mod:`~hippo_core.plugins.tools`) is checked and run (no MCP SDK needed),
:mod:`~hippo_core.mcp.tools` hippo's own tools, :mod:`~hippo_core.mcp.server`
the server built on the SDK (the optional ``mcp`` extra), and :mod:`~hippo_core.mcp.install`
the entries that register the server in each agent's own config.
"""
