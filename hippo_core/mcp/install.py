"""``hippo mcp install|uninstall``: hippo's server in each agent's own MCP config.

Where each agent reads its MCP servers (checked against each agent's documentation and
issue tracker in 2026; the project file first, then the user's):

- Claude Code: ``.mcp.json`` in the project; the user's servers are the top-level
  ``mcpServers`` of ``~/.claude.json``, which is ``$CLAUDE_CONFIG_DIR/.claude.json`` when that
  is set (``claude mcp add --scope user`` writes there: anthropics/claude-code#4193 and
  #48448). ``{"mcpServers": {"hippo": {"command": ..., "args": [...]}}}``.
- Codex: ``[mcp_servers.hippo]`` with ``command``, ``args`` and ``env_vars`` (Codex starts a
  server with only a few of its own variables, ``HOME`` and ``PATH`` among them, and these
  besides) in ``~/.codex/config.toml`` (``$CODEX_HOME/config.toml``), or
  ``.codex/config.toml`` in a project Codex trusts (developers.openai.com/codex/mcp).
- Gemini CLI: ``mcpServers`` in ``.gemini/settings.json``, or ``~/.gemini/settings.json``
  below ``$GEMINI_CLI_HOME`` when set (geminicli.com/docs/tools/mcp-server).
- OpenCode: ``"mcp": {"hippo": {"type": "local", "command": [...], "enabled": true}}`` in
  ``opencode.json`` in the project or ``~/.config/opencode/opencode.json``
  (``$XDG_CONFIG_HOME``) (opencode.ai/docs/mcp-servers).

Installing adds hippo's entry, or brings its command up to date keeping any key a person
added to it; every other server, key and (in TOML) comment stays. Installing twice leaves
one entry; uninstalling removes hippo's entry alone. A file that is not valid JSON or TOML
is refused with one line naming it, and left byte for byte as it was.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.files.atomic import atomic_write

AGENTS = ("claude-code", "codex", "gemini", "opencode")
#: The server's name in every agent's config.
NAME = "hippo"
#: What Codex passes on to the server from its own environment besides its short default
#: list (``HOME``, ``PATH`` ...): the variables that say which index and plugins hippo uses.
#: Without them a server Codex starts reads another index than ``hippo ingest`` wrote.
CODEX_ENV_VARS = ("HIPPO_HOME", "HIPPO_LOAD_PLUGINS", "XDG_DATA_HOME")
#: The key holding the servers, by agent (Codex's is a TOML table).
SERVERS = {
    "claude-code": "mcpServers",
    "codex": "mcp_servers",
    "gemini": "mcpServers",
    "opencode": "mcp",
}


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did to one file: ``added``, ``updated``, ``unchanged``
    (install) or ``removed``, ``absent`` (uninstall)."""

    path: Path
    action: str


@dataclass(frozen=True)
class Registration:
    """Whether hippo's server is in one agent's config, for ``hippo doctor``: ``problem`` is
    the one line saying why the file could not be read, when it could not."""

    agent: str
    scope: str
    path: Path
    registered: bool
    problem: str = ""


def config_file(agent: str, *, user: bool, project: Path) -> Path:
    """The MCP config of ``agent``: the user's, or the project's (``project`` is its root)."""
    check_agent(agent)
    env = os.environ
    home = Path.home()
    if agent == "claude-code":
        user_file = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home
        return user_file / ".claude.json" if user else project / ".mcp.json"
    if agent == "codex":
        codex = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return codex / "config.toml" if user else project / ".codex" / "config.toml"
    if agent == "gemini":
        base = Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home
        return (base if user else project) / ".gemini" / "settings.json"
    if agent == "opencode":
        config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        return config / "opencode" / "opencode.json" if user else project / "opencode.json"
    raise AssertionError(agent)


def check_agent(agent: str) -> None:
    """Refuse an agent hippo does not know, naming those it does."""
    if agent not in AGENTS:
        raise UsageError(f"hippo mcp installs for {', '.join(AGENTS)}, not {agent!r}")


def server_argv() -> list[str]:
    """How the agent starts the server: the command the hooks use, then ``mcp``."""
    from hippo_core.agents.install import hippo_command

    command = hippo_command()
    if command == f"{sys.executable} -m hippo_core":
        return [sys.executable, "-m", "hippo_core", "mcp"]
    return [command, "mcp"]


def entry(agent: str) -> dict[str, Any]:
    """hippo's entry in ``agent``'s config."""
    argv = server_argv()
    if agent == "opencode":
        return {"type": "local", "command": argv, "enabled": True}
    if agent == "codex":
        return {"command": argv[0], "args": argv[1:], "env_vars": list(CODEX_ENV_VARS)}
    return {"command": argv[0], "args": argv[1:]}


def install(agent: str, path: Path) -> Change:
    """Add hippo's server to ``path``, or bring its entry up to date."""
    check_agent(agent)
    wanted = entry(agent)
    if agent == "codex":
        return _install_toml(path, wanted)
    data = _read_json(path, SERVERS[agent])
    servers = data.setdefault(SERVERS[agent], {})
    current = servers.get(NAME)
    merged = {**current, **wanted} if isinstance(current, dict) else wanted
    if merged == current:
        return Change(path, "unchanged")
    servers[NAME] = merged
    _write_json(path, data)
    return Change(path, "added" if current is None else "updated")


def uninstall(agent: str, path: Path) -> Change:
    """Remove hippo's entry from ``path``; an object of servers left empty goes too."""
    check_agent(agent)
    if not path.exists():
        return Change(path, "absent")
    if agent == "codex":
        return _uninstall_toml(path)
    key = SERVERS[agent]
    data = _read_json(path, key)
    servers = data.get(key, {})
    if NAME not in servers:
        return Change(path, "absent")
    del servers[NAME]
    if not servers:
        del data[key]
    _write_json(path, data)
    return Change(path, "removed")


def registrations(project: Path) -> list[Registration]:
    """Every agent's project and user config, and whether hippo's server is in each."""
    found = []
    for agent in AGENTS:
        for scope in ("project", "user"):
            path = config_file(agent, user=scope == "user", project=project)
            try:
                registered = NAME in _servers(agent, path)
            except HippoError as exc:
                found.append(Registration(agent, scope, path, False, str(exc)))
                continue
            found.append(Registration(agent, scope, path, registered))
    return found


def _servers(agent: str, path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    if agent == "codex":
        servers = _read_toml(path).get(SERVERS[agent])
        return dict(servers) if servers is not None else {}
    return dict(_read_json(path, SERVERS[agent]).get(SERVERS[agent], {}))


# -- JSON -----------------------------------------------------------------------------------


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise HippoError(f"{path}: cannot be read ({exc}); nothing was changed") from None


def _read_json(path: Path, key: str) -> dict[str, Any]:
    raw = _text(path)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise HippoError(
            f"{path}: not valid JSON ({exc}); nothing was changed: fix it, then run this again"
        ) from None
    if not isinstance(data, dict):
        raise HippoError(f"{path}: expected a JSON object; nothing was changed")
    if not isinstance(data.get(key, {}), dict):
        raise HippoError(f'{path}: "{key}" is not a JSON object; nothing was changed')
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    _write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _write(path: Path, text: str) -> None:
    try:
        atomic_write(path, text)
    except OSError as exc:
        raise HippoError(f"{path}: cannot be written ({exc}); nothing was changed") from None


# -- TOML (Codex) ---------------------------------------------------------------------------


def _read_toml(path: Path) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(_text(path))
    except TOMLKitError as exc:
        raise HippoError(
            f"{path}: not valid TOML ({exc}); nothing was changed: fix it, then run this again"
        ) from None
    servers = doc.get(SERVERS["codex"])
    if servers is not None and not isinstance(servers, dict):
        raise HippoError(f"{path}: mcp_servers is not a table; nothing was changed")
    return doc


def _install_toml(path: Path, wanted: dict[str, Any]) -> Change:
    import tomlkit

    doc = _read_toml(path)
    servers = doc.get(SERVERS["codex"])
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add(SERVERS["codex"], servers)
    current = servers.get(NAME)
    if isinstance(current, dict):
        if all(current.get(key) == value for key, value in wanted.items()):
            return Change(path, "unchanged")
        for key, value in wanted.items():
            current[key] = value
        action = "updated"
    else:
        if current is not None:
            del servers[NAME]
        table = tomlkit.table()
        for key, value in wanted.items():
            table.add(key, value)
        servers.add(NAME, table)
        action = "added" if current is None else "updated"
    _write(path, tomlkit.dumps(doc))
    return Change(path, action)


def _uninstall_toml(path: Path) -> Change:
    import tomlkit

    doc = _read_toml(path)
    servers = doc.get(SERVERS["codex"])
    if servers is None or NAME not in servers:
        return Change(path, "absent")
    del servers[NAME]
    if not servers:
        del doc[SERVERS["codex"]]
    # The blank line that set hippo's table apart goes with it.
    text = tomlkit.dumps(doc).rstrip("\n")
    _write(path, text + "\n" if text else "")
    return Change(path, "removed")
