"""Codex: its transcripts, its hooks in ``.codex/hooks.json``, its MCP servers in
``config.toml``, and whether it will run hippo's hooks at all.

Codex reads hooks from ``.codex/hooks.json`` in the project or ``~/.codex/hooks.json``
(``$CODEX_HOME``), in Claude Code's schema; it clamps a SessionEnd hook's timeout to 3
seconds, with a warning on every run. Its MCP servers are ``[mcp_servers.<name>]`` with
``command``, ``args`` and ``env_vars`` in ``$CODEX_HOME/config.toml``, or
``.codex/config.toml`` in a project Codex trusts (developers.openai.com/codex/mcp). It names
sessions ``codex-<thread id>`` in hippo's records.
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

#: Codex clamps a SessionEnd hook's timeout to 3 seconds, with a warning on every run.
SESSION_END_SECONDS = 3
#: What Codex passes on to the server from its own environment besides its short default
#: list (``HOME``, ``PATH`` ...): the variables that say which index and plugins hippo uses.
#: Without them a server Codex starts reads another index than ``hippo ingest`` wrote.
ENV_VARS = ("HIPPO_HOME", "HIPPO_LOAD_PLUGINS", "XDG_DATA_HOME")


def _sources() -> list[TranscriptSource]:
    from hippo_core.transcripts.sources.codex import CodexSource

    return [CodexSource()]


def codex_home() -> Path:
    """Codex's own folder: ``$CODEX_HOME``, else ``~/.codex``."""
    import os
    from pathlib import Path

    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _hooks_file(user: bool, project: Path) -> Path:
    return codex_home() / "hooks.json" if user else project / ".codex" / "hooks.json"


def _mcp_file(user: bool, project: Path) -> Path:
    return codex_home() / "config.toml" if user else project / ".codex" / "config.toml"


def _mcp_entry(argv: list[str]) -> dict[str, Any]:
    return {"command": argv[0], "args": argv[1:], "env_vars": list(ENV_VARS)}


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

    from hippo_core.agents.install import installed

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
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


AGENT = Agent(
    "codex",
    sources=_sources,
    hooks_file=_hooks_file,
    hook_events={
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "SessionEnd": "session-end",
    },
    compact_events={"PreCompact": "compact"},
    hook_timeouts={"SessionEnd": SESSION_END_SECONDS},
    hooks_problem=codex_trust,
    mcp_file=_mcp_file,
    mcp_servers="mcp_servers",
    mcp_entry=_mcp_entry,
    mcp_note="Codex reads a project's .codex/config.toml only once you trust the project",
    env_marks=(
        ("CODEX_THREAD_ID", ()),
        ("CODEX_SESSION_ID", ()),
        ("CODEX_CI", ("1",)),
        ("CODEX_SANDBOX", ()),
        ("CODEX_SANDBOX_NETWORK_DISABLED", ()),
    ),
    session_variable="CODEX_THREAD_ID",
)


@hookimpl
def hippo_register_agents(register: Callable[[Agent], None]) -> None:
    register(AGENT)
