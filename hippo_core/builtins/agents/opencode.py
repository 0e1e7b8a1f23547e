"""OpenCode: its transcripts, the plugin hippo writes it for hooks, its MCP servers in
``opencode.json``.

OpenCode runs no shell hooks: hippo writes it a plugin (``opencode.js`` beside this module)
that calls them, into its plugins folder, which it loads whole: ``.opencode/plugins/`` in
the project, then ``~/.config/opencode/plugins/`` (``$XDG_CONFIG_HOME``). Its MCP servers
are ``"mcp": {"hippo": {"type": "local", "command": [...], "enabled": true}}`` in
``opencode.json`` in the project or ``~/.config/opencode/opencode.json``
(opencode.ai/docs/mcp-servers).
"""

from __future__ import annotations

from hippo_core.plugins.agent import Agent
from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from hippo_core.transcripts.model import TranscriptSource


def _sources() -> list[TranscriptSource]:
    from hippo_core.transcripts.sources.opencode import OpenCodeSource

    return [OpenCodeSource()]


def _config() -> Path:
    import os
    from pathlib import Path

    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "opencode"


def _hooks_file(user: bool, project: Path) -> Path:
    return (_config() if user else project / ".opencode") / "plugins" / "hippo.js"


def _plugin(argv: list[str]) -> str:
    """The plugin's text, calling hippo as ``argv``; its first line marks it hippo's."""
    import json
    from importlib.resources import files

    template = files(__package__ or "").joinpath("opencode.js").read_text("utf-8")
    return template.replace("__HIPPO_ARGV__", json.dumps(argv))


def _mcp_file(user: bool, project: Path) -> Path:
    return _config() / "opencode.json" if user else project / "opencode.json"


def _mcp_entry(argv: list[str]) -> dict[str, Any]:
    return {"type": "local", "command": argv, "enabled": True}


AGENT = Agent(
    "opencode",
    sources=_sources,
    hooks_file=_hooks_file,
    hook_plugin=_plugin,
    plugin_event="chat.message",
    plugin_said="the plugin that hands OpenCode hippo's context",
    mcp_file=_mcp_file,
    mcp_servers="mcp",
    mcp_entry=_mcp_entry,
    env_marks=(("OPENCODE", ("1",)), ("OPENCODE_PID", ())),
)


@hookimpl
def hippo_register_agents(register: Callable[[Agent], None]) -> None:
    register(AGENT)
