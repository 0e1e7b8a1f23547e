"""Gemini CLI: its transcripts, its hooks and MCP servers in ``.gemini/settings.json``.

Gemini CLI reads both from ``.gemini/settings.json`` in the project, or the user's below
``$GEMINI_CLI_HOME`` (the home folder when unset) (geminicli.com/docs/tools/mcp-server). Its
``BeforeAgent`` fires on each prompt, before the model plans; a hook's timeout is in
milliseconds, its handlers have names, and what a hook prints must be JSON
(``hookSpecificOutput``). A resumed session's history drops every user message that begins
with a hook's context, so a resume prints the start's block again.
"""

from __future__ import annotations

from hippo_core.plugins.agent import TIMEOUT_SECONDS, Agent
from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from hippo_core.transcripts.model import TranscriptSource


def _sources() -> list[TranscriptSource]:
    from hippo_core.transcripts.sources.gemini import GeminiSource

    return [GeminiSource()]


def _settings(user: bool, project: Path) -> Path:
    import os
    from pathlib import Path

    base = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home())
    return (base if user else project) / ".gemini" / "settings.json"


AGENT = Agent(
    "gemini",
    sources=_sources,
    hooks_file=_settings,
    hook_events={
        "SessionStart": "session-start",
        "BeforeAgent": "prompt",
        "SessionEnd": "session-end",
    },
    compact_events={"PreCompress": "compact"},
    hook_timeout=TIMEOUT_SECONDS * 1000,
    named_handlers=True,
    hook_output="json",
    fresh_resume=True,
    mcp_file=_settings,
    env_marks=(("GEMINI_CLI", ("1",)),),
)


@hookimpl
def hippo_register_agents(register: Callable[[Agent], None]) -> None:
    register(AGENT)
