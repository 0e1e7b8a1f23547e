"""``hippo hooks install|uninstall``: hippo's entries in an agent's hook settings.

Claude Code reads ``.claude/settings.json`` (or the user's ``~/.claude/settings.json``);
Codex reads ``.codex/hooks.json`` (or ``~/.codex/hooks.json``) in the same schema:
event -> matcher groups -> handlers. Installing adds one group per event unless hippo's
command is already there, and keeps every other hook and key; uninstalling removes only
hippo's handlers. Both are idempotent, and a file that is not valid JSON is left alone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hippo_core.atomic import atomic_write
from hippo_core.errors import HippoError, UsageError

#: The agent's hook event -> hippo's hook command.
EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt",
    "SessionEnd": "session-end",
}
TIMEOUT_SECONDS = 30
AGENTS = ("claude-code", "codex")
_OURS = re.compile(
    r"(?:^|[\s/\\])(?:hippo|hippo_core)(?:\.exe)?\s+hook\s+(?:session-start|prompt|session-end)\b"
)


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did to one file."""

    path: Path
    added: tuple[str, ...] = ()
    removed: int = 0


def settings_file(agent: str, *, user: bool, project: Path) -> Path:
    """The hook settings file of ``agent``, for the project or the user."""
    if agent == "claude-code":
        home = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
        return home / "settings.json" if user else project / ".claude" / "settings.json"
    if agent == "codex":
        home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        return home / "hooks.json" if user else project / ".codex" / "hooks.json"
    raise UsageError(f"hooks can be installed for {' and '.join(AGENTS)}, not '{agent}'")


def hippo_command() -> str:
    """How the agent should call hippo: ``hippo`` when it is on PATH, else its full path."""
    if shutil.which("hippo"):
        return "hippo"
    script = Path(sys.argv[0])
    if script.name.startswith("hippo") and script.exists():
        return str(script.resolve())
    return f"{sys.executable} -m hippo_core"


def _command(agent: str, event: str) -> str:
    tool = " --tool codex" if agent == "codex" else ""
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


def install(agent: str, path: Path) -> Change:
    """Add hippo's hooks to ``path`` where they are missing."""
    data = _read(path)
    hooks = data.setdefault("hooks", {})
    added = []
    for event, name in EVENTS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise HippoError(f"{path}: hooks.{event} is not a list; nothing was changed")
        present = any(
            is_hippo_handler(handler)
            for group in groups
            if isinstance(group, dict)
            for handler in group.get("hooks", [])
        )
        if not present:
            handler = {
                "type": "command",
                "command": _command(agent, name),
                "timeout": TIMEOUT_SECONDS,
            }
            groups.append({"hooks": [handler]})
            added.append(event)
    if added:
        _write(path, data)
    return Change(path, tuple(added))


def uninstall(path: Path) -> Change:
    """Remove hippo's handlers from ``path``; groups and events left empty go too."""
    if not path.exists():
        return Change(path)
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
