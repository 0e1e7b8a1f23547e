"""``hippo pack search``, ``add``, ``update`` and ``remove``: installing packs from registries.

Registered on ``hippo pack`` by :mod:`hippo_core.cli_packs`; the kernel is
:mod:`hippo_core.packs.search`, :mod:`~hippo_core.packs.install`,
:mod:`~hippo_core.packs.update` and :mod:`~hippo_core.packs.remove` (imported inside the
commands, with pydantic).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from hippo_core.workspace import Workspace


def _say(line: str) -> None:
    typer.echo(line, err=True)


def _workspace() -> Workspace:
    from hippo_core.workspace import Workspace

    workspace = Workspace.find()
    for line in workspace.loaded.warnings:
        _say(f"warning: {line}")
    return workspace


def _workspace_if_any() -> Workspace | None:
    from pathlib import Path

    from hippo_core.workspace import find_root

    return _workspace() if find_root(Path.cwd()) is not None else None


def search(
    query: str = typer.Argument(
        "",
        metavar="[QUERY]",
        help="Text to find in names, summaries and tags (any case); none lists every pack.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Find packs in the registries by name, summary or tag."""
    from hippo_core.packs.search import search as run_search

    hits = run_search(_workspace_if_any(), query, say=_say)
    if as_json:
        typer.echo(json.dumps([hit.as_dict() for hit in hits], indent=2, ensure_ascii=False))
        return
    if not hits:
        _say(f"no pack matches '{query}'" if query else "the registries list no packs")
        return
    rows = [
        (
            hit.name,
            hit.version or "-",
            hit.registry,
            f"installed {hit.installed}" if hit.installed else "",
            hit.summary,
        )
        for hit in hits
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        typer.echo("  ".join([*cells, row[4]]).rstrip())


def add(
    request: str = typer.Argument(..., metavar="NAME[==VERSION]", help="The pack to install."),
    registry: str | None = typer.Option(
        None,
        "--registry",
        metavar="WHERE",
        help="Look only in this registry: hippo, one from the settings, a path or a URL.",
    ),
) -> None:
    """Install a pack from a registry into .hippo/packs/ and record it in the lock file."""
    from hippo_core.packs.install import add as run_add
    from hippo_core.packs.install import theme_hint

    workspace = _workspace()
    added = run_add(workspace, request, registry=registry, say=_say)
    entry = added.entry
    typer.echo(f"added {entry.name} {entry.version} from {entry.registry or entry.source}")
    typer.echo(f"  runs from {added.where}")
    if added.theme:
        typer.echo(
            f"  a theme over '{added.theme}'; to turn it on: {theme_hint(workspace, entry.name)}"
        )


def update(
    name: str | None = typer.Argument(
        None, metavar="[NAME]", help="The pack to update; none updates every pack in the lock."
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace packs whose files were edited here (the edits are lost)."
    ),
) -> None:
    """Fetch the registries again and bring installed packs up to date."""
    from hippo_core.packs.update import update as run_update

    workspace = _workspace()
    lines = run_update(workspace, name, force=force, say=_say, done=typer.echo)
    if not lines:
        _say("no pack is recorded in .hippo/packs.lock")


def remove(
    name: str = typer.Argument(..., metavar="NAME", help="The pack to remove."),
    force: bool = typer.Option(
        False, "--force", help="Remove it even though its files were edited here."
    ),
) -> None:
    """Delete an installed pack from .hippo/packs/ and from the lock file."""
    from hippo_core.packs.remove import remove as run_remove

    workspace = _workspace()
    typer.echo(run_remove(workspace, name, force=force))


def register(pack_app: typer.Typer) -> None:
    """Add this module's commands to ``hippo pack``."""
    pack_app.command()(search)
    pack_app.command()(add)
    pack_app.command()(update)
    pack_app.command()(remove)
