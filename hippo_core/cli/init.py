"""``hippo init``: set up a workspace."""

from __future__ import annotations

from pathlib import Path

import typer


def init(
    force: bool = typer.Option(
        False, "--force", help="Overwrite the core pack's files, including your edits."
    ),
    nested: bool = typer.Option(
        False, "--nested", help="Make a workspace here although a folder above is one."
    ),
) -> None:
    """Set up a workspace in the current folder, or complete one."""
    from hippo_core.actions.init import init_workspace
    from hippo_core.base.errors import HippoError
    from hippo_core.workspace.folder import find_root

    here = Path.cwd()
    above = find_root(here.parent) if not (here / ".hippo").is_dir() else None
    if above is not None and not nested:
        # Every command below here would use the new workspace instead of that one.
        raise HippoError(
            f"{above} is already a hippo workspace, and this folder is inside it; run hippo "
            "there, or give --nested to make a workspace of its own here"
        )
    for action in init_workspace(here, force=force):
        typer.echo(f"{action.verb:<9} {action.path}")
