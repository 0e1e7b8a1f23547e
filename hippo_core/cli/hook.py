"""``hippo hook session-start|prompt|session-end|compact``: what an agent's session hooks run.

Their body is :func:`hippo_core.cli.hot.hook`, which an agent's call reaches before typer is
imported; these commands serve ``--help`` and the calls the fast reader leaves to typer.
"""

from __future__ import annotations

import typer

from hippo_core.cli import hot
from hippo_core.cli.common import command_group, subcommand

app = command_group(
    "Run by an agent's session hooks: read the hook's JSON on stdin. Always exits 0."
)

TOOL_OPTION = typer.Option(
    "claude-code",
    "--tool",
    metavar="NAME",
    help="The agent calling (claude-code, codex or gemini).",
)


@subcommand(app, "session-start")
def session_start(tool: str = TOOL_OPTION) -> None:
    """SessionStart: declare the session, print the required context parts."""
    hot.hook("session-start", tool)


@subcommand(app, "prompt")
def prompt(tool: str = TOOL_OPTION) -> None:
    """UserPromptSubmit (Gemini: BeforeAgent): on the first prompt only, print relevant notes."""
    hot.hook("prompt", tool)


@subcommand(app, "session-end")
def session_end(tool: str = TOOL_OPTION) -> None:
    """SessionEnd: record the session as ended (reason unspecified)."""
    hot.hook("session-end", tool)


@subcommand(app, "compact")
def compact(tool: str = TOOL_OPTION) -> None:
    """PreCompact (Gemini: PreCompress): the context is about to be compacted; a trigger may
    start a dream."""
    hot.hook("compact", tool)
