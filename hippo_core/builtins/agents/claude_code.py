"""Claude Code: its transcripts, its hooks in ``.claude/settings.json`` and its MCP servers.

Claude Code reads hooks from ``.claude/settings.json`` in the project, or the user's
``~/.claude/settings.json`` (below ``$CLAUDE_CONFIG_DIR`` when set). Its MCP servers are
``.mcp.json`` in the project; the user's are the top-level ``mcpServers`` of
``~/.claude.json``, which is ``$CLAUDE_CONFIG_DIR/.claude.json`` when that is set (``claude
mcp add --scope user`` writes there: anthropics/claude-code#4193 and #48448). It names its
sessions by their own ids, and is the ``--tool`` ``hippo hook`` takes when none is given.
"""

from __future__ import annotations

from hippo_core.plugins.agent import Agent
from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from hippo_core.transcripts.model import TranscriptSource


def _sources() -> list[TranscriptSource]:
    from hippo_core.transcripts.sources.claude_code import ClaudeCodeSource

    return [ClaudeCodeSource()]


def _home() -> Path:
    import os
    from pathlib import Path

    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def _hooks_file(user: bool, project: Path) -> Path:
    return _home() / "settings.json" if user else project / ".claude" / "settings.json"


def _mcp_file(user: bool, project: Path) -> Path:
    import os
    from pathlib import Path

    if not user:
        return project / ".mcp.json"
    folder = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(folder) if folder else Path.home()) / ".claude.json"


AGENT = Agent(
    "claude-code",
    sources=_sources,
    hooks_file=_hooks_file,
    hook_events={
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "SessionEnd": "session-end",
    },
    compact_events={"PreCompact": "compact"},
    session_prefix="",
    mcp_file=_mcp_file,
    mcp_note="Claude Code asks you to approve a project's .mcp.json servers once",
    env_marks=(("CLAUDECODE", ("1",)), ("CLAUDE_CODE_SESSION_ID", ())),
    session_variable="CLAUDE_CODE_SESSION_ID",
)


@hookimpl
def hippo_register_agents(register: Callable[[Agent], None]) -> None:
    register(AGENT)
