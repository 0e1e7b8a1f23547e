"""``hippo registry``: the registry indexes a team publishes packs in."""

from __future__ import annotations

from pathlib import Path

import typer

from hippo_core.cli.common import command_group, subcommand

app = command_group("Check the registry indexes packs are published in.")


@subcommand(app, "check")
def check(
    indexes: list[Path] = typer.Argument(
        None,
        metavar="[INDEX]...",
        show_default=False,
        help="Index files to check (default: hippo's own).",
    ),
    wheels: list[Path] = typer.Option(
        None,
        "--wheels",
        metavar="DIR",
        show_default=False,
        help="A folder of wheels to check distributions' versions from (default: the "
        "index's folder and its wheels/).",
    ),
) -> None:
    """Check an index as installs from it will: every version's files, passes and versions."""
    from hippo_core.packs.checker import check_index
    from hippo_core.packs.registries import first_party

    paths = indexes or [Path(first_party().location)]
    problems: list[str] = []
    counts = []
    for path in paths:
        result = check_index(path, wheels or None)
        counts.append(f"{path}: {result.packs} pack{'s' * (result.packs != 1)}")
        problems += result.problems
        for note in result.notes:
            typer.echo(f"note: {note}")
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo(f"ok: {'; '.join(counts)}, no problems")
