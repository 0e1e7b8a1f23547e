"""``hippo pack``: the packs that run here, and installing, sharing and writing them.

The commands are split by who uses them: :mod:`hippo_core.cli.pack_install` (search, add,
update, remove: teams installing packs) and :mod:`hippo_core.cli.pack_author` (new, check:
pack authors); listing and vendoring are here.
"""

from __future__ import annotations

import json

import typer

from hippo_core.cli import pack_author, pack_install
from hippo_core.cli.common import JSON_OPTION, command_group, subcommand

app = command_group("List, install, update and write packs.")


@subcommand(app, "list")
def list_(
    as_json: bool = JSON_OPTION,
) -> None:
    """List every pack and theme here: source, version, edits, passes, themes."""
    from hippo_core.packs.listing import list_packs, render
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.workspace.folder import Workspace

    rows, problems = list_packs(Workspace.find(), load_plugins())
    if as_json:
        data = {"packs": [row.as_dict() for row in rows], "problems": problems}
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for line in render(rows) if rows else ["no packs here; `hippo init` installs core"]:
            typer.echo(line)
        for problem in problems:
            typer.echo(f"error: {problem}", err=True)
    raise typer.Exit(1 if problems or any(row.error for row in rows) else 0)


@subcommand(app, "vendor")
def vendor(
    name: str = typer.Argument(
        ..., metavar="NAME", help="The pack an installed distribution ships."
    ),
) -> None:
    """Copy an installed distribution's pack into .hippo/packs/ to edit it."""
    from hippo_core.packs.vendor import vendor as copy
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.workspace.folder import Workspace

    workspace = Workspace.find()
    entry = copy(workspace, load_plugins(), name)
    folder = workspace.relative(workspace.packs_dir / name)
    typer.echo(f"copied {name} {entry.version} from {entry.source} to {folder}")
    typer.echo("the copy runs here now; edit it, and commit the folder and .hippo/packs.lock")


pack_install.register(app)
pack_author.register(app)
