"""``hippo pack search``, ``add``, ``update``, ``sync`` and ``remove``: installing packs from
registries, and making a workspace match its lock file.

Registered on ``hippo pack`` by :mod:`hippo_core.cli.pack`; the kernel is
:mod:`hippo_core.packs.search`, :mod:`~hippo_core.packs.install`,
:mod:`~hippo_core.packs.update`, :mod:`~hippo_core.packs.sync` and
:mod:`~hippo_core.packs.remove` (imported inside the commands, with pydantic).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import typer

from hippo_core.cli.common import JSON_OPTION, current_workspace, say, subcommand, workspace_if_any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace


def search(
    query: str = typer.Argument(
        "",
        metavar="[QUERY]",
        help="Text to find in names, summaries and tags (any case); none lists every pack.",
    ),
    refresh: bool = typer.Option(
        False, "--refresh", help="Fetch every registry at a URL again first (as update does)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Find packs in the registries by name, summary or tag."""
    from hippo_core.packs.search import search as run_search

    hits = run_search(workspace_if_any(), query, refresh=refresh, say=say)
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
            "pip" if hit.code else "",
            f"installed {hit.installed}" if hit.installed else "",
            hit.summary,
        )
        for hit in hits
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False) if width]
        typer.echo("  ".join([*cells, row[5]]).rstrip())
    if any(hit.code for hit in hits):
        say("pip: the pack carries code, which hippo pack add installs with pip (it asks first)")


def add(
    request: str = typer.Argument(..., metavar="NAME[==VERSION]", help="The pack to install."),
    registry: str | None = typer.Option(
        None,
        "--registry",
        metavar="WHERE",
        help="Look only in this registry: hippo, one from the settings, a path or a URL.",
    ),
    yes: bool = typer.Option(
        False, "--yes", "-y", help="Install a pack that carries code with pip without asking."
    ),
) -> None:
    """Install a pack from a registry (its folder, or its code with pip) and lock it."""
    from hippo_core.packs.install import add as run_add
    from hippo_core.packs.install import theme_hint

    found = current_workspace()
    added = run_add(found, request, registry=registry, say=say, confirm=_asker(yes))
    entry = added.entry
    typer.echo(f"added {entry.name} {entry.version} from {entry.registry or entry.source}")
    typer.echo(f"  runs from {added.where}")
    if added.theme:
        _show_replaced(found, entry.name)
        typer.echo(
            f"  a theme over '{added.theme}'; to turn it on: {theme_hint(found, entry.name)}"
        )


def _show_replaced(found: Workspace, theme: str) -> None:
    """Each reviewer persona the theme replaces, with its diff: the reviewer is the one
    check of meaning between a model's proposal and a note, so its new text is read now."""
    from hippo_core.base.terminal import printable
    from hippo_core.packs.personas import replaced_here
    from hippo_core.plugins.manager import load_plugins

    for replaced in replaced_here(found, load_plugins(), theme):
        typer.echo(printable(f"  {replaced.summary()}:"))
        # The theme's text is its publisher's: indented, no line of it passes for ours.
        for line in replaced.diff():
            typer.echo(printable(f"    {line}"))


def update(
    request: str | None = typer.Argument(
        None,
        metavar="[NAME[==VERSION]]",
        help="The pack to update, or to move to VERSION; none updates every pack in the lock.",
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace packs whose files were edited here (the edits are lost)."
    ),
) -> None:
    """Fetch the registries again and bring installed packs up to date."""
    from hippo_core.packs.update import update as run_update

    found = current_workspace()
    lines = run_update(found, request, force=force, say=say, done=typer.echo)
    if not lines:
        say("no pack is recorded in .hippo/packs.lock")


def sync() -> None:
    """Install every pack the lock file records and is not here, as recorded."""
    from hippo_core.packs.sync import sync as run_sync

    found = current_workspace()
    lines, problems = run_sync(found, say=say, done=typer.echo)
    for problem in problems:
        say(f"error: {problem}")
    if not lines and not problems:
        say("no pack is recorded in .hippo/packs.lock")
    if problems:
        raise typer.Exit(1)


def remove(
    name: str = typer.Argument(..., metavar="NAME", help="The pack to remove."),
    force: bool = typer.Option(
        False, "--force", help="Remove it even though its files were edited here."
    ),
    uninstall: bool = typer.Option(
        False,
        "--uninstall",
        help="For a pack that runs from a distribution: pip uninstalls it too, for every "
        "workspace.",
    ),
) -> None:
    """Take a pack out of this workspace: its folder and lock entry, or turn its code off."""
    from hippo_core.packs.remove import remove as run_remove

    found = current_workspace()
    for line in run_remove(found, name, force=force, uninstall=_asker(uninstall)):
        typer.echo(line)


def _asker(yes: bool) -> Callable[[str], bool]:
    """Yes with the option; else asked on a terminal; else no."""
    if yes:
        return lambda question: True
    if sys.stdin.isatty() and sys.stderr.isatty():
        return lambda question: bool(typer.confirm(question, default=False, err=True))
    return lambda question: False


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``hippo pack``."""
    for function in (search, add, update, sync, remove):
        subcommand(app)(function)
