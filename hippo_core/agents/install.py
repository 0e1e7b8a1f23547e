"""``hippo hooks install|uninstall``: hippo's entries in an agent's hook settings.

Claude Code reads ``.claude/settings.json`` (or the user's ``~/.claude/settings.json``),
Codex ``.codex/hooks.json`` (or ``~/.codex/hooks.json``) and Gemini CLI
``.gemini/settings.json`` (or ``~/.gemini/settings.json``), all in one schema: event ->
matcher groups -> handlers. Installing adds one group per event unless hippo's command is
already there (and puts right the timeout of one that is), keeping every other hook and
key; uninstalling removes only hippo's handlers. Both are idempotent, and a file that is
not valid JSON is left alone.
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

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.files.atomic import atomic_write

#: The agent's hook event -> hippo's hook command, for each agent.
CLAUDE_EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt",
    "SessionEnd": "session-end",
}
EVENTS = {
    "claude-code": CLAUDE_EVENTS,
    "codex": CLAUDE_EVENTS,
    # Gemini CLI's BeforeAgent fires on each prompt, before the model plans.
    "gemini": {
        "SessionStart": "session-start",
        "BeforeAgent": "prompt",
        "SessionEnd": "session-end",
    },
}
#: The event before an agent compacts its context -> hippo's hook, added when the
#: workspace's activity triggers dream on compaction (``[triggers] on_compact``).
COMPACT_EVENTS = {
    "claude-code": {"PreCompact": "compact"},
    "codex": {"PreCompact": "compact"},
    "gemini": {"PreCompress": "compact"},
}
#: OpenCode runs no shell hooks: hippo writes it a plugin that calls them.
AGENTS = (*EVENTS, "opencode")
#: The first line of the plugin hippo writes for OpenCode, by which it knows its own.
PLUGIN_MARK = "// hippo's plugin for OpenCode, written by `hippo hooks install opencode`"
TIMEOUT_SECONDS = 30
#: Codex clamps a SessionEnd hook's timeout to 3 seconds, with a warning on every run.
CODEX_SESSION_END_SECONDS = 3
_OURS = re.compile(
    r"(?:^|[\s/\\])(?:hippo|hippo_core)(?:\.exe)?\s+hook\s+"
    r"(?:session-start|prompt|session-end|compact)\b"
)


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did to one file: events added, events whose hippo
    handler got its timeout put right, handlers removed."""

    path: Path
    added: tuple[str, ...] = ()
    removed: int = 0
    updated: tuple[str, ...] = ()


def settings_file(agent: str, *, user: bool, project: Path) -> Path:
    """The hook settings file of ``agent``, for the project or the user."""
    if agent == "claude-code":
        home = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
        return home / "settings.json" if user else project / ".claude" / "settings.json"
    if agent == "codex":
        return codex_home() / "hooks.json" if user else project / ".codex" / "hooks.json"
    if agent == "gemini":
        # Gemini CLI's home folder is $GEMINI_CLI_HOME when set; its settings are below it.
        base = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home())
        folder = base if user else project
        return folder / ".gemini" / "settings.json"
    if agent == "opencode":
        # OpenCode loads every file of its plugins folder: the project's, then the user's.
        config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        folder = Path(config) / "opencode" if user else project / ".opencode"
        return folder / "plugins" / "hippo.js"
    known = ", ".join(AGENTS[:-1]) + f" and {AGENTS[-1]}"
    raise UsageError(f"hooks can be installed for {known}, not '{agent}'")


def codex_home() -> Path:
    """Codex's own folder: ``$CODEX_HOME``, else ``~/.codex``."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def hippo_command() -> str:
    """How the agent should call hippo: ``hippo`` when it is on PATH, else its full path."""
    if shutil.which("hippo"):
        return "hippo"
    script = Path(sys.argv[0])
    if script.name.startswith("hippo") and script.exists():
        return str(script.resolve())
    return f"{sys.executable} -m hippo_core"


def _command(agent: str, event: str) -> str:
    tool = "" if agent == "claude-code" else f" --tool {agent}"
    return f"{hippo_command()} hook {event}{tool}"


def _timeout(agent: str, event: str) -> int:
    """The handler's timeout, in the unit the agent reads (Gemini CLI: milliseconds)."""
    if agent == "gemini":
        return TIMEOUT_SECONDS * 1000
    if agent == "codex" and event == "SessionEnd":
        return CODEX_SESSION_END_SECONDS
    return TIMEOUT_SECONDS


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


def install(agent: str, path: Path, *, compact: bool = False) -> Change:
    """Add hippo's hooks to ``path`` where they are missing; with ``compact``, its hook
    before the agent compacts its context too."""
    if agent == "opencode":
        return _install_plugin(path)
    data = _read(path)
    hooks = data.setdefault("hooks", {})
    added, updated = [], []
    wanted = {**EVENTS[agent], **(COMPACT_EVENTS[agent] if compact else {})}
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
        timeout = _timeout(agent, event)
        if not ours:
            handler = {"type": "command", "command": _command(agent, name), "timeout": timeout}
            if agent == "gemini":
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


def uninstall(path: Path) -> Change:
    """Remove hippo's handlers from ``path``; groups and events left empty go too."""
    if not path.exists():
        return Change(path)
    if path.suffix == ".js":
        _ours(path)
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


def installed(path: Path) -> list[tuple[str, int, int]]:
    """hippo's handlers in the hook file ``path``: ``(event, group, handler)`` positions;
    none when the file is missing or not a hooks file. hippo's OpenCode plugin is one
    handler, of OpenCode's ``chat.message``."""
    if path.suffix == ".js":
        try:
            _ours(path)
        except HippoError:
            return []
        return [("chat.message", 0, 0)] if path.exists() else []
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


def codex_trust(path: Path, project: Path | None) -> str | None:
    """Why Codex would skip hippo's hooks in ``path`` (``project``'s, or the user's when
    None), or None when nothing says it would.

    Codex runs a hook only once the person has trusted its exact definition: it keeps a
    ``trusted_hash`` per hook in its own ``config.toml``, under ``[hooks.state."<hooks
    file>:<event in snake case>:<group>:<handler>"]``, and skips an untrusted hook without
    a word. It loads a project's hooks only in a project it trusts. hippo only reads that
    file: the hash is Codex's to compute.
    """
    import tomllib

    ours = installed(path)
    if not ours:
        return None
    config_path = codex_home() / "config.toml"
    try:
        config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        config = {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return f"{config_path} cannot be read ({exc}), so whether Codex trusts them is unknown"
    if _table(config, "features").get("hooks") is False:
        return f"{config_path} turns hooks off (hooks = false under [features])"
    if project is not None:
        trusted = _table(_table(config, "projects"), str(project)).get("trust_level")
        if trusted != "trusted":
            return (
                f"Codex loads a project's hooks only in a project it trusts, and {config_path} "
                f"does not trust {project}: run `codex` there once and trust the folder"
            )
    state = _table(_table(config, "hooks"), "state")
    names = {str(path), str(path.resolve())}
    untrusted = sorted(
        {
            event
            for event, group, at in ours
            if not any(
                _table(state, f"{name}:{_snake(event)}:{group}:{at}").get("trusted_hash")
                for name in names
            )
        }
    )
    if not untrusted:
        return None
    return (
        f"Codex has not trusted them ({', '.join(untrusted)}), so it skips them without a "
        "word: run `codex` in the project and choose to trust them when it asks to review "
        "hooks (or open /hooks there); `codex exec` runs untrusted hooks only with "
        "--dangerously-bypass-hook-trust"
    )


def _table(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _snake(event: str) -> str:
    """Codex's label of an event in its hook state keys: ``SessionStart`` -> ``session_start``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _install_plugin(path: Path) -> Change:
    """Write hippo's OpenCode plugin to ``path``, or bring it up to date; never over a file
    that is not hippo's."""
    import shlex
    from importlib.resources import files

    template = files("hippo_core").joinpath("agents", "opencode.js").read_text("utf-8")
    argv = shlex.split(hippo_command())
    text = template.replace("__HIPPO_ARGV__", json.dumps(argv))
    current = _ours(path)
    if current == text:
        return Change(path)
    atomic_write(path, text)
    return Change(
        path,
        ("chat.message",) if current is None else (),
        updated=() if current is None else ("chat.message",),
    )


def _ours(path: Path) -> str | None:
    """The text of hippo's plugin at ``path``, None when there is none; an error for a file
    there that is not hippo's."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise HippoError(f"{path}: cannot be read ({exc}); nothing was changed") from None
    if not text.startswith(PLUGIN_MARK):
        raise HippoError(
            f"{path} is not hippo's plugin (its first line is not hippo's); move it away, "
            "then run this again"
        )
    return text
