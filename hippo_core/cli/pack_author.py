"""``hippo pack new`` and ``hippo pack check``: writing a pack.

Registered on ``hippo pack`` by :mod:`hippo_core.cli.pack`. The kernel is
:mod:`hippo_core.packs.scaffold` and the loader's :func:`~hippo_core.dream.packs.check_pack`;
the eval replay is :mod:`hippo_core.packs.evals`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from hippo_core.cli.common import subcommand

if TYPE_CHECKING:
    from hippo_core.dream.packs import Pack
    from hippo_core.plugins import Plugins


def new(
    name: str = typer.Argument(..., metavar="NAME", help="The pack's name (its pass's too)."),
    folder: Path = typer.Option(
        Path("."),
        "--dir",
        metavar="PATH",
        show_default=False,
        help="Where to write hippo-pack-NAME/ (default: here).",
    ),
) -> None:
    """Write a new pack as a Python distribution: hippo-pack-NAME/."""
    from hippo_core.packs.scaffold import new_pack
    from hippo_core.plugins import load_plugins

    made = new_pack(name, folder, load_plugins())
    relative = not folder.is_absolute()
    where, pack = _shown(made.folder, relative), _shown(made.pack, relative)
    typer.echo(f"created {where}/, the pack {name} in a Python distribution:")
    for rel in made.files:
        typer.echo(f"  {rel}")
    typer.echo("next steps:")
    typer.echo(f"  edit {pack}/: the prompt, the reviewer persona, pack.toml's description")
    typer.echo(f"  hippo pack check {where}")
    typer.echo(f"  hippo eval pack {pack} --record   (in a workspace with a model)")
    typer.echo(f"  pip install -e {where}")
    typer.echo(f"{where}/README.md says more.")


def check(
    path: Path = typer.Argument(
        ...,
        metavar="PATH",
        help="A pack's folder (it has pack.toml), or a distribution made by hippo pack new.",
    ),
    replay: bool = typer.Option(
        False, "--eval", help="Then replay the pack's eval cases from their recordings (no model)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object, for CI."),
) -> None:
    """Check a pack as hippo does before a dream: ok, or the one line that is wrong."""
    from hippo_core.dream.packs import check_pack
    from hippo_core.errors import HippoError
    from hippo_core.packs.files import PackError
    from hippo_core.packs.scaffold import pack_folder
    from hippo_core.plugins import load_plugins

    relative = not path.is_absolute()
    report: dict[str, Any] = {
        "ok": False,
        "path": _shown(path, relative),
        "name": None,
        "version": None,
        "passes": [],
        "overlays": "",
        "error": None,
        "eval": None,
    }
    try:
        root = pack_folder(path)
        plugins = load_plugins()
        pack = check_pack(Path(os.path.abspath(root)), plugins, beside=_beside(plugins))
    except PackError as error:
        shown = PackError(Path(_shown(error.path, relative)), error.problem, error.line)
        _fail(report, [str(shown)], as_json)
    except HippoError as error:
        _fail(report, [str(error)], as_json)
    report |= _described(pack, _shown(root, relative))
    if not replay:
        report["ok"] = True
        _done(report, as_json)
        return
    _replay(report, pack, Path(os.path.abspath(root)), as_json)


def _beside(plugins: Plugins) -> dict[str, Path]:
    """The packs of the workspace here, by name (none outside a workspace), for a theme."""
    from hippo_core.errors import HippoError
    from hippo_core.packs.survey import survey
    from hippo_core.workspace import Workspace

    try:
        return {found.name: found.root for found in survey(Workspace.find(), plugins).packs}
    except HippoError:
        return {}


def _described(pack: Pack, shown: str) -> dict[str, Any]:
    manifest = pack.manifest
    return {
        "path": shown,
        "name": pack.name,
        "version": manifest.version if manifest else "",
        "passes": sorted(p.name for p in pack.passes),
        "overlays": manifest.overlays if manifest else "",
    }


def _replay(report: dict[str, Any], pack: Pack, root: Path, as_json: bool) -> None:
    from hippo_core.errors import HippoError
    from hippo_core.packs.evals import replay_cases
    from hippo_core.packs.evals_case import CaseError

    if not as_json:
        typer.echo(_ok_line(report))
    try:
        result = replay_cases(root, pack.name, report["path"])
    except CaseError as error:
        _fail(report, error.problems, as_json)
    except HippoError as error:
        _fail(report, [str(error)], as_json)
    report["eval"] = result.as_dict()
    report["ok"] = result.ok
    if as_json:
        _done(report, as_json)
        return
    for case in result.cases:
        typer.echo(f"eval {case.name}: {case.summary()}")
    passed = sum(case.status == "ok" for case in result.cases)
    typer.echo(f"eval: {passed} of {len(result.cases)} cases replayed")
    if not result.ok:
        raise typer.Exit(1)


def _ok_line(report: dict[str, Any]) -> str:
    head = f"ok: {report['name']} {report['version']}".rstrip()
    if report["overlays"]:
        return f"{head} (a theme over {report['overlays']})"
    return f"{head} (passes: {', '.join(report['passes']) or 'none'})"


def _done(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
        if not report["ok"]:
            raise typer.Exit(1)
        return
    typer.echo(_ok_line(report))


def _fail(report: dict[str, Any], problems: list[str], as_json: bool) -> NoReturn:
    """Print the problems (or the report with them) and exit 1."""
    report["ok"] = False
    report["error"] = "\n".join(problems)
    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for problem in problems:
            typer.echo(f"error: {problem}", err=True)
    raise typer.Exit(1)


def _shown(path: Path, relative: bool = False) -> str:
    """``path`` as the user would type it: relative to the current folder when inside it,
    or when ``relative`` (the user named it relative to the current folder)."""
    absolute = os.path.abspath(path)
    if relative or Path(absolute).is_relative_to(Path.cwd()):
        return Path(os.path.relpath(absolute)).as_posix()
    return absolute


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``hippo pack``."""
    for function in (new, check):
        subcommand(app)(function)
