"""``hippo ingest``: new transcript turns into the index, and the workspace's session records.

Its body is :func:`hippo_core.cli.hot.ingest`, which a call reaches before typer is
imported; this command serves ``--help`` and the calls the fast reader leaves to typer.
"""

from __future__ import annotations

import typer

from hippo_core.cli import hot


def ingest(
    full: bool = typer.Option(False, "--full", help="Delete the index and read every file again."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Index new transcript turns from every agent into $HIPPO_HOME/index.sqlite."""
    raise typer.Exit(hot.ingest(full, as_json))
