"""``hippo review``: proposals waiting for a person's verdict."""

from __future__ import annotations

import json
from typing import Any

import typer

from hippo_core.cli.common import JSON_OPTION, workspace
from hippo_core.errors import UsageError


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

    found = workspace()
    if confirm and reject:
        raise UsageError("give --confirm or --reject, not both")
    if proposal is None:
        if confirm or reject:
            raise UsageError("name the proposal to decide: hippo review PROPOSAL --confirm")
        waiting = queue.pending(found)
        if as_json:
            typer.echo(json.dumps(waiting, indent=2, ensure_ascii=False))
            return
        for record in waiting:
            typer.echo(f"{record['id']}  {record.get('pass')}  {record['kind']}  {record['note']}")
        if not waiting:
            typer.echo("no proposal is waiting for a verdict", err=True)
        return
    if not (confirm or reject):
        record = queue.load(found, proposal)
        if as_json:
            typer.echo(json.dumps(record, indent=2, ensure_ascii=False))
            return
        _show(record)
        return
    from hippo_core.plugins import load_plugins

    settled = queue.decide(
        found, load_plugins(), proposal, "confirm" if confirm else "reject", notes
    )
    typer.echo(
        f"{settled.state}: {settled.proposal.note}; receipt {found.relative(settled.receipt)}"
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
