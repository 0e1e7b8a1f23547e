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
    from hippo_core import sessions
    from hippo_core.workspace import Workspace

    workspace = Workspace.find()
    raw = session or f"s-{uuid.uuid4().hex[:16]}"
    with sessions.records_lock(workspace):
        record = sessions.declare(workspace, raw, tool, task=task, cwd=str(Path.cwd()))
    typer.echo(record["id"])


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
    from hippo_core.sessions import end_session
    from hippo_core.workspace import Workspace

    record = end_session(
        Workspace.find(), session, notes=notes, handoff=handoff, no_change=no_change
    )
    typer.echo(f"ended {record['id']} ({record['end_reason']})")
