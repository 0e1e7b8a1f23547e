"""``hippo revert``: a dreamed change undone from its snapshot."""

from __future__ import annotations

import typer

from hippo_core.cli.common import current_workspace


def revert(
    receipt: str = typer.Argument(..., metavar="RECEIPT", help="A receipt's id or path."),
    force: bool = typer.Option(
        False, "--force", help="Revert even though the note was edited after the change."
    ),
) -> None:
    """Put a note back as it was before a dreamed change, with a revert receipt."""
    from hippo_core.dream.revert import revert as run_revert
    from hippo_core.plugins import load_plugins

    found = current_workspace()
    done = run_revert(found, load_plugins(), receipt, force=force)
    note = found.relative(found.notes_dir / done.note)
    typer.echo(f"reverted {note}; receipt {found.relative(done.receipt)}")
