"""``hippo session start|end``: declared agent sessions."""

from __future__ import annotations

import uuid
from pathlib import Path

import typer

from hippo_core.cli.common import command, group

app = group("Declare agent sessions and record how they ended.")


@command(app, "start")
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


@command(app, "end")
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
    from hippo_core import sessions
    from hippo_core.errors import HippoError
    from hippo_core.workspace import Workspace

    workspace = Workspace.find()
    notes = [sessions.touched_note(workspace, note) for note in notes]
    with sessions.records_lock(workspace):
        if session is None:
            record = sessions.latest_open(workspace)
            if record is None:
                raise HippoError("no open session here: give --id ID (see `hippo session start`)")
        else:
            record = sessions.read_record(workspace, session)
            if record.get("kind") != sessions.DECLARED:
                record = sessions.declare(workspace, session, str(record.get("tool") or "manual"))
        record = sessions.end(workspace, record, notes=notes, handoff=handoff, no_change=no_change)
    typer.echo(f"ended {record['id']} ({record['end_reason']})")
