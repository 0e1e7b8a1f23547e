"""``hippo context``: the block an agent session starts with.

Its body is :func:`hippo_core.cli.hot.context`, which an agent's call reaches before typer
is imported; this command serves ``--help`` and the calls the fast reader leaves to typer.
"""

from __future__ import annotations

import typer

from hippo_core.cli import hot


def context(
    task: str | None = typer.Option(
        None, "--task", metavar="TEXT", help="What the session is about."
    ),
    session: str | None = typer.Option(None, "--session", metavar="ID", help="The session's id."),
    budget: int | None = typer.Option(
        None,
        "--budget",
        metavar="N",
        help="Budget in bytes (default: budget_bytes from the settings).",
    ),
) -> None:
    """Print the context block for the start of an agent session."""
    raise typer.Exit(hot.context(task, session, budget))
