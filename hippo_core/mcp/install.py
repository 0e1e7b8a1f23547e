"""``hippo mcp install|uninstall``: hippo's server in each agent's own MCP config.

Each registered :class:`~hippo_core.plugins.agent.Agent` says where it reads its MCP servers
(``mcp_file``, the project's or the user's), under which key (``mcp_servers``) and in what
shape (``mcp_entry``): Claude Code's ``.mcp.json`` and ``~/.claude.json``, Codex's
``config.toml`` (TOML, known by its suffix), Gemini CLI's ``.gemini/settings.json``,
OpenCode's ``opencode.json``; each agent's module says where that was checked.

Installing adds hippo's entry, or brings its command up to date keeping any key a person
added to it; every other server, key and (in TOML) comment stays. Installing twice leaves
one entry; uninstalling removes hippo's entry alone. A file that is not valid JSON or TOML
is refused with one line naming it, and left byte for byte as it was.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.files.atomic import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.plugins.agent import Agent

#: The server's name in every agent's config.
NAME = "hippo"


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


def mcp_agents() -> dict[str, Agent]:
    """The registered agents that read MCP servers from a config file, by name."""
    from hippo_core.plugins.manager import load_plugins

    return {name: a for name, a in load_plugins().agents().items() if a.mcp_file is not None}


def config_file(agent: str, *, user: bool, project: Path) -> Path:
    """The MCP config of ``agent``: the user's, or the project's (``project`` is its root)."""
    where = check_agent(agent).mcp_file
    assert where is not None
    return where(user, project)


def check_agent(agent: str) -> Agent:
    """The registered agent ``agent``; refuse one hippo does not know, naming those it does."""
    agents = mcp_agents()
    if agent not in agents:
        raise UsageError(f"hippo mcp installs for {', '.join(agents)}, not {agent!r}")
    return agents[agent]


def server_argv() -> list[str]:
    """How the agent starts the server: the command the hooks use, then ``mcp``."""
    from hippo_core.agents.install import hippo_command

    command = hippo_command()
    if command == f"{sys.executable} -m hippo_core":
        return [sys.executable, "-m", "hippo_core", "mcp"]
    return [command, "mcp"]


def entry(agent: str) -> dict[str, Any]:
    """hippo's entry in ``agent``'s config."""
    return check_agent(agent).mcp_entry(server_argv())


def install(agent: str, path: Path) -> Change:
    """Add hippo's server to ``path``, or bring its entry up to date."""
    found = check_agent(agent)
    wanted = found.mcp_entry(server_argv())
    if _toml(path):
        return _install_toml(path, found.mcp_servers, wanted)
    key = found.mcp_servers
    data = _read_json(path, key)
    servers = data.setdefault(key, {})
    current = servers.get(NAME)
    merged = {**current, **wanted} if isinstance(current, dict) else wanted
    if merged == current:
        return Change(path, "unchanged")
    servers[NAME] = merged
    _write_json(path, data)
    return Change(path, "added" if current is None else "updated")


def uninstall(agent: str, path: Path) -> Change:
    """Remove hippo's entry from ``path``; an object of servers left empty goes too."""
    key = check_agent(agent).mcp_servers
    if not path.exists():
        return Change(path, "absent")
    if _toml(path):
        return _uninstall_toml(path, key)
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
    for agent in mcp_agents().values():
        for scope in ("project", "user"):
            assert agent.mcp_file is not None
            path = agent.mcp_file(scope == "user", project)
            try:
                registered = NAME in _servers(agent.mcp_servers, path)
            except HippoError as exc:
                found.append(Registration(agent.name, scope, path, False, str(exc)))
                continue
            found.append(Registration(agent.name, scope, path, registered))
    return found


def _toml(path: Path) -> bool:
    """Whether the config at ``path`` is TOML (Codex's ``config.toml``), not JSON."""
    return path.suffix == ".toml"


def _servers(key: str, path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    if _toml(path):
        servers = _read_toml(path, key).get(key)
        return dict(servers) if servers is not None else {}
    return dict(_read_json(path, key).get(key, {}))


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


# -- TOML (Codex's) --------------------------------------------------------------------------


def _read_toml(path: Path, key: str) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(_text(path))
    except TOMLKitError as exc:
        raise HippoError(
            f"{path}: not valid TOML ({exc}); nothing was changed: fix it, then run this again"
        ) from None
    servers = doc.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise HippoError(f"{path}: {key} is not a table; nothing was changed")
    return doc


def _install_toml(path: Path, key: str, wanted: dict[str, Any]) -> Change:
    import tomlkit

    doc = _read_toml(path, key)
    servers = doc.get(key)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add(key, servers)
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


def _uninstall_toml(path: Path, key: str) -> Change:
    import tomlkit

    doc = _read_toml(path, key)
    servers = doc.get(key)
    if servers is None or NAME not in servers:
        return Change(path, "absent")
    del servers[NAME]
    if not servers:
        del doc[key]
    # The blank line that set hippo's table apart goes with it.
    text = tomlkit.dumps(doc).rstrip("\n")
    _write(path, text + "\n" if text else "")
    return Change(path, "removed")
