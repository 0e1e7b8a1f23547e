"""``hippo init``: set up a workspace."""

from __future__ import annotations

from pathlib import Path

import typer


def init(
    force: bool = typer.Option(
        False, "--force", help="Overwrite the core pack's files, including your edits."
    ),
) -> None:
    """Set up a workspace in the current folder, or complete one."""
    from hippo_core.init import init_workspace

    for action in init_workspace(Path.cwd(), force=force):
        typer.echo(f"{action.verb:<9} {action.path}")
