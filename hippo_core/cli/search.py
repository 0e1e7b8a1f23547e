"""``hippo search``: turns from the index, with snippets."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer

from hippo_core.cli.common import JSON_OPTION

#: The most turns one search may ask for.
MAX_LIMIT = 100_000


def search(
    query: str = typer.Argument(..., metavar="QUERY", help="Words to find (word* for a prefix)."),
    tool: str | None = typer.Option(
        None, "--tool", metavar="NAME", help="Only this agent's turns."
    ),
    session: str | None = typer.Option(None, "--session", metavar="ID", help="Only this session."),
    since: str | None = typer.Option(
        None, "--since", metavar="WHEN", help="Only turns since a date, a time or 24h/7d/2w ago."
    ),
    limit: int = typer.Option(
        20, "--limit", min=1, max=MAX_LIMIT, metavar="N", help="At most N turns."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Search the indexed turns and print the best matches with snippets."""
    from hippo_core.index.search import find_turns

    hits = find_turns(query, tool=tool, session=session, since=since, limit=limit)
    if as_json:
        typer.echo(json.dumps([asdict(h) for h in hits], indent=2, ensure_ascii=False))
        return
    for hit in hits:
        typer.echo(f"{hit.session} #{hit.ordinal}  {hit.started or 'unknown time'}  {hit.tool}")
        typer.echo(f"    {hit.snippet}")
    if not hits:
        typer.echo("no turns match", err=True)
        raise typer.Exit(1)
