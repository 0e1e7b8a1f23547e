"""``hippo session start|end``: declared agent sessions."""

from __future__ import annotations

import uuid
from pathlib import Path

import typer

from hippo_core.cli.common import command_group, subcommand

app = command_group("Declare agent sessions and record how they ended.")


@subcommand(app, "start")
def start(
    session: str | None = typer.Option(
        None, "--id", metavar="ID", help="The agent's own session id (default: a new id)."
    ),
    tool: str = typer.Option("manual", "--tool", metavar="NAME", help="The agent running it."),
    task: str | None = typer.Option(None, "--task", metavar="TEXT", help="What it is about."),
) -> None:
    """Declare a session; print its id."""
    from hippo_core.agents import sessions
    from hippo_core.workspace.folder import Workspace

    workspace = Workspace.find()
    _close_to_a_known_tool(tool)
    raw = session or f"s-{uuid.uuid4().hex[:16]}"
    with sessions.records_lock(workspace):
        record = sessions.declare(workspace, raw, tool, task=task, cwd=str(Path.cwd()))
    typer.echo(record["id"])


def _close_to_a_known_tool(tool: str) -> None:
    """Any name is an agent's (one hippo reads no transcripts of, too), but one a letter off
    a known agent's is likely a typo: say so, and record it as given."""
    import difflib

    from hippo_core.cli.common import say
    from hippo_core.plugins.manager import load_plugins

    known = sorted(load_plugins().sources())
    close = difflib.get_close_matches(tool, known, n=1, cutoff=0.7)
    if tool not in known and close:
        say(f"warning: --tool '{tool}' is recorded as given; did you mean '{close[0]}'?")


@subcommand(app, "end")
def end(
    session: str | None = typer.Option(
        None, "--id", metavar="ID", help="The session's id (default: the latest open session)."
    ),
    notes: list[str] = typer.Option(
        [], "--note", metavar="PATH", help="A note the session touched (repeatable)."
    ),
    handoff: str | None = typer.Option(
        None, "--handoff", metavar="TEXT", help="What the next session should know, in Markdown."
    ),
    no_change: str | None = typer.Option(
        None, "--no-change", metavar="REASON", help="Why the session changed nothing."
    ),
) -> None:
    """End a declared session: the notes it touched, a handoff, or why nothing changed."""
    from hippo_core.agents.sessions import end_session
    from hippo_core.workspace.folder import Workspace

    record = end_session(
        Workspace.find(), session, notes=notes, handoff=handoff, no_change=no_change
    )
    typer.echo(f"ended {record['id']} ({record['end_reason']})")
