"""``hippo pack search``, ``add``, ``update`` and ``remove``: installing packs from registries.

Registered on ``hippo pack`` by :mod:`hippo_core.cli.pack`; the kernel is
:mod:`hippo_core.packs.search`, :mod:`~hippo_core.packs.install`,
:mod:`~hippo_core.packs.update` and :mod:`~hippo_core.packs.remove` (imported inside the
commands, with pydantic).
"""

from __future__ import annotations

import json

import typer

from hippo_core.cli.common import JSON_OPTION, current_workspace, say, subcommand, workspace_if_any


def search(
    query: str = typer.Argument(
        "",
        metavar="[QUERY]",
        help="Text to find in names, summaries and tags (any case); none lists every pack.",
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Find packs in the registries by name, summary or tag."""
    from hippo_core.packs.search import search as run_search

    hits = run_search(workspace_if_any(), query, say=say)
    if as_json:
        typer.echo(json.dumps([hit.as_dict() for hit in hits], indent=2, ensure_ascii=False))
        return
    if not hits:
        say(f"no pack matches '{query}'" if query else "the registries list no packs")
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

    found = current_workspace()
    added = run_add(found, request, registry=registry, say=say)
    entry = added.entry
    typer.echo(f"added {entry.name} {entry.version} from {entry.registry or entry.source}")
    typer.echo(f"  runs from {added.where}")
    if added.theme:
        typer.echo(
            f"  a theme over '{added.theme}'; to turn it on: {theme_hint(found, entry.name)}"
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

    found = current_workspace()
    lines = run_update(found, name, force=force, say=say, done=typer.echo)
    if not lines:
        say("no pack is recorded in .hippo/packs.lock")


def remove(
    name: str = typer.Argument(..., metavar="NAME", help="The pack to remove."),
    force: bool = typer.Option(
        False, "--force", help="Remove it even though its files were edited here."
    ),
) -> None:
    """Delete an installed pack from .hippo/packs/ and from the lock file."""
    from hippo_core.packs.remove import remove as run_remove

    found = current_workspace()
    typer.echo(run_remove(found, name, force=force))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``hippo pack``."""
    for function in (search, add, update, remove):
        subcommand(app)(function)
