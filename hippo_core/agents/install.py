"""``hippo hooks install|uninstall``: hippo's entries in an agent's hook settings.

Each registered :class:`~hippo_core.plugins.agent.Agent` names its settings file and events
(Claude Code's ``.claude/settings.json``, Codex's ``.codex/hooks.json``, Gemini CLI's
``.gemini/settings.json``), all in one schema: event -> matcher groups -> handlers; an agent
that runs no shell hooks (OpenCode) gets a plugin file hippo writes whole. Installing adds
one group per event unless hippo's command is already there (and puts right the timeout of
one that is), keeping every other hook and key; uninstalling removes only hippo's handlers.
Both are idempotent, and a file that is not valid JSON is left alone.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.files.atomic import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.plugins.agent import Agent

#: hippo's hook command in a handler, by which it knows its own.
_OURS = re.compile(
    r"(?:^|[\s/\\])(?:hippo|hippo_core)(?:\.exe)?\s+hook\s+"
    r"(?:session-start|prompt|session-end|compact)\b"
)
#: The agent ``hippo hook`` runs for when no ``--tool`` is given (cli/hot.py's default).
DEFAULT_TOOL = "claude-code"


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did to one file: events added, events whose hippo
    handler got its timeout put right, handlers removed."""

    path: Path
    added: tuple[str, ...] = ()
    removed: int = 0
    updated: tuple[str, ...] = ()


def hook_agents() -> dict[str, Agent]:
    """The registered agents that have hooks for ``hippo hooks install``, by name."""
    from hippo_core.plugins.manager import load_plugins

    return {name: a for name, a in load_plugins().agents().items() if a.has_hooks}


def hook_agent(name: str) -> Agent:
    """The registered agent ``name`` with hooks; a usage error naming those there are."""
    agents = hook_agents()
    if name in agents:
        return agents[name]
    names = list(agents)
    known = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)
    raise UsageError(f"hooks can be installed for {known}, not '{name}'")


def settings_file(agent: Agent, *, user: bool, project: Path) -> Path:
    """The hook settings file of ``agent``, for the project or the user."""
    assert agent.hooks_file is not None, agent.name
    return agent.hooks_file(user, project)


def hippo_command() -> str:
    """How the agent should call hippo: ``hippo`` when it is on PATH, else its full path."""
    if shutil.which("hippo"):
        return "hippo"
    script = Path(sys.argv[0])
    if script.name.startswith("hippo") and script.exists():
        return str(script.resolve())
    return f"{sys.executable} -m hippo_core"


def _command(agent: Agent, event: str) -> str:
    tool = "" if agent.name == DEFAULT_TOOL else f" --tool {agent.name}"
    return f"{hippo_command()} hook {event}{tool}"


def is_hippo_handler(handler: Any) -> bool:
    return isinstance(handler, dict) and bool(_OURS.search(str(handler.get("command", ""))))


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise HippoError(f"{path}: cannot be read ({exc}); nothing was changed") from None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise HippoError(f"{path}: not valid JSON ({exc}); fix it, then run this again") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise HippoError(
            f'{path}: expected a JSON object with a "hooks" object; nothing was changed'
        )
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def install(agent: Agent, path: Path, *, compact: bool = False) -> Change:
    """Add hippo's hooks to ``path`` where they are missing; with ``compact``, its hook
    before the agent compacts its context too."""
    if agent.hook_plugin is not None:
        return _install_plugin(agent, path)
    data = _read(path)
    hooks = data.setdefault("hooks", {})
    added, updated = [], []
    wanted = {**agent.hook_events, **(agent.compact_events if compact else {})}
    for event, name in wanted.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise HippoError(f"{path}: hooks.{event} is not a list; nothing was changed")
        ours = [
            handler
            for group in groups
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for handler in group["hooks"]
            if is_hippo_handler(handler)
        ]
        timeout = agent.hook_timeouts.get(event, agent.hook_timeout)
        if not ours:
            handler = {"type": "command", "command": _command(agent, name), "timeout": timeout}
            if agent.named_handlers:
                handler = {"name": f"hippo-{name}", **handler}
            groups.append({"hooks": [handler]})
            added.append(event)
        for handler in ours:
            if handler.get("timeout") != timeout:
                handler["timeout"] = timeout
                updated.append(event)
    if added or updated:
        _write(path, data)
    return Change(path, tuple(added), updated=tuple(dict.fromkeys(updated)))


def uninstall(agent: Agent, path: Path) -> Change:
    """Remove hippo's handlers from ``path``; groups and events left empty go too. An
    agent's plugin file is removed whole."""
    if not path.exists():
        return Change(path)
    if agent.hook_plugin is not None:
        _ours(agent, path)
        path.unlink()
        return Change(path, removed=1)
    data = _read(path)
    hooks = data.get("hooks", {})
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept_groups.append(group)
                continue
            kept = [h for h in handlers if not is_hippo_handler(h)]
            removed += len(handlers) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
            elif len(kept) == len(handlers):
                kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if removed:
        if not hooks:
            data.pop("hooks", None)
        _write(path, data)
    return Change(path, removed=removed)


def installed(path: Path, agent: Agent | None = None) -> list[tuple[str, int, int]]:
    """hippo's handlers in the hook file ``path``: ``(event, group, handler)`` positions;
    none when the file is missing or not a hooks file. hippo's plugin file for an agent
    that takes one (OpenCode) is one handler, of the agent's ``plugin_event``."""
    if agent is not None and agent.hook_plugin is not None:
        try:
            text = _ours(agent, path)
        except HippoError:
            return []
        return [(agent.plugin_event, 0, 0)] if text is not None else []
    try:
        data = _read(path)
    except HippoError:
        return []
    found = []
    for event, groups in data.get("hooks", {}).items():
        for at_group, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for at, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if is_hippo_handler(handler):
                    found.append((event, at_group, at))
    return found


def _install_plugin(agent: Agent, path: Path) -> Change:
    """Write hippo's plugin for ``agent`` to ``path``, or bring it up to date; never over a
    file that is not hippo's."""
    import shlex

    assert agent.hook_plugin is not None
    text = agent.hook_plugin(shlex.split(hippo_command()))
    current = _ours(agent, path)
    if current == text:
        return Change(path)
    atomic_write(path, text)
    event = (agent.plugin_event,)
    return Change(path, event if current is None else (), updated=() if current is None else event)


def _ours(agent: Agent, path: Path) -> str | None:
    """The text of hippo's plugin at ``path``, None when there is none; an error for a file
    there that is not hippo's (its first line is not the one hippo writes)."""
    assert agent.hook_plugin is not None
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise HippoError(f"{path}: cannot be read ({exc}); nothing was changed") from None
    mark = agent.hook_plugin([]).partition("\n")[0]
    if not text.startswith(mark):
        raise HippoError(
            f"{path} is not hippo's plugin (its first line is not hippo's); move it away, "
            "then run this again"
        )
    return text
