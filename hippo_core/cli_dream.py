"""The dreaming commands: ``hippo dream``, ``hippo revert``, ``hippo review``.

Registered on the main app by :mod:`hippo_core.cli`; the dream's modules (SQLAlchemy,
jinja2, pydantic) are imported inside them.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import typer

from hippo_core.errors import UsageError

JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of text.")


def _workspace() -> Any:
    from hippo_core.workspace import Workspace

    workspace = Workspace.find()
    for line in workspace.loaded.warnings:
        typer.echo(f"warning: {line}", err=True)
    return workspace


def dream(
    pass_name: str | None = typer.Option(
        None, "--pass", metavar="NAME", help="Run only the pass with this file name (verify)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Build every prompt and write only the report: no model call."
    ),
    since: str | None = typer.Option(
        None,
        "--since",
        metavar="WHEN",
        help="Start the window here instead of at the last success (a date, or 24h/7d/2w ago).",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print each step on stderr."),
) -> None:
    """Check notes against transcripts and fold in what sessions learned, with review."""
    from hippo_core.dream.run import Options
    from hippo_core.dream.run import dream as run_dream
    from hippo_core.dream.state import parse_time
    from hippo_core.index.search import parse_since

    start = parse_time(parse_since(since) + "Z") if since else None
    workspace = _workspace()
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("dream: %(message)s"))
        logger = logging.getLogger("hippo.dream")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    outcome = run_dream(
        workspace,
        Options(only=pass_name, dry_run=dry_run, since=start),
        say=lambda line: typer.echo(line, err=True),
    )
    typer.echo(f"dream {outcome.status}: report {workspace.relative(outcome.report)}")
    if outcome.status != "ok":
        typer.echo(f"error: {outcome.error}", err=True)
        raise typer.Exit(1)


def revert(
    receipt: str = typer.Argument(..., metavar="RECEIPT", help="A receipt's id or path."),
    force: bool = typer.Option(
        False, "--force", help="Revert even though the note was edited after the change."
    ),
) -> None:
    """Put a note back as it was before a dreamed change, with a revert receipt."""
    from hippo_core.dream.revert import revert as run_revert
    from hippo_core.plugins import load_plugins

    workspace = _workspace()
    done = run_revert(workspace, load_plugins(), receipt, force=force)
    note = workspace.relative(workspace.notes_dir / done.note)
    typer.echo(f"reverted {note}; receipt {workspace.relative(done.receipt)}")


def review(
    proposal: str | None = typer.Argument(
        None, metavar="[PROPOSAL]", help="A pending proposal's id; none lists them."
    ),
    confirm: bool = typer.Option(False, "--confirm", help="Confirm it: apply the change."),
    reject: bool = typer.Option(False, "--reject", help="Reject it: the note stays as it is."),
    notes: str = typer.Option("", "--notes", metavar="TEXT", help="Why, for the receipt."),
    as_json: bool = JSON_OPTION,
) -> None:
    """List proposals waiting for a verdict, show one, or give its verdict."""
    from hippo_core.dream import queue

    workspace = _workspace()
    if confirm and reject:
        raise UsageError("give --confirm or --reject, not both")
    if proposal is None:
        if confirm or reject:
            raise UsageError("name the proposal to decide: hippo review PROPOSAL --confirm")
        waiting = queue.pending(workspace)
        if as_json:
            typer.echo(json.dumps(waiting, indent=2, ensure_ascii=False))
            return
        for record in waiting:
            typer.echo(f"{record['id']}  {record.get('pass')}  {record['kind']}  {record['note']}")
        if not waiting:
            typer.echo("no proposal is waiting for a verdict", err=True)
        return
    if not (confirm or reject):
        record = queue.load(workspace, proposal)
        if as_json:
            typer.echo(json.dumps(record, indent=2, ensure_ascii=False))
            return
        _show(record)
        return
    from hippo_core.plugins import load_plugins

    settled = queue.decide(
        workspace, load_plugins(), proposal, "confirm" if confirm else "reject", notes
    )
    typer.echo(
        f"{settled.state}: {settled.proposal.note}; receipt {workspace.relative(settled.receipt)}"
    )


def _show(record: dict[str, Any]) -> None:
    typer.echo(f"proposal {record['id']} ({record.get('pass')}, {record['kind']})")
    typer.echo(f"note: {record['note']}")
    evidence = ", ".join(f"{e['session']} turn {e['ordinal']}" for e in record.get("evidence", []))
    typer.echo(f"evidence: {evidence}")
    typer.echo(f"reason: {record.get('reason', '')}")
    if record.get("old"):
        typer.echo("--- old")
        typer.echo(record["old"])
    typer.echo("+++ new")
    typer.echo(record.get("new", ""))


def register(app: typer.Typer) -> None:
    app.command()(dream)
    app.command()(revert)
    app.command()(review)
