"""``hippo pack new``, ``check`` and ``build``: writing a pack, and publishing it.

Registered on ``hippo pack`` by :mod:`hippo_core.cli.pack`. The kernel is
:mod:`hippo_core.packs.scaffold` and the loader's :func:`~hippo_core.dream.packs.check_pack`;
the eval replay is :mod:`hippo_core.packs.evals`.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from hippo_core.cli.common import subcommand

if TYPE_CHECKING:
    from hippo_core.dream.packs import Pack
    from hippo_core.packs.dist_check import Distribution
    from hippo_core.packs.files import PackError
    from hippo_core.plugins.manager import Plugins


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
    from hippo_core.plugins.manager import load_plugins

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
        help="A pack's folder (it has pack.toml), or a distribution's (every pack it ships).",
    ),
    replay: bool = typer.Option(
        False, "--eval", help="Then replay the pack's eval cases from their recordings (no model)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object, for CI."),
) -> None:
    """Check a pack as hippo does before a dream: ok, or the one line that is wrong."""
    from hippo_core.base.errors import HippoError
    from hippo_core.dream.packs import check_pack
    from hippo_core.packs.dist_check import source_distribution
    from hippo_core.packs.files import PackError
    from hippo_core.packs.scaffold import pack_folder
    from hippo_core.plugins.manager import load_plugins

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
        dist = source_distribution(path) if path.is_dir() else None
        if dist is not None:
            _check_distribution(report, dist, relative, replay, as_json)
            return
        root = pack_folder(path)
        plugins = load_plugins()
        pack = check_pack(Path(os.path.abspath(root)), plugins, beside=_beside(plugins))
    except PackError as error:
        _fail(report, [_pack_error(error, relative)], as_json)
    except HippoError as error:
        _fail(report, [str(error)], as_json)
    report |= _described(pack, _shown(root, relative))
    _warn_twins(plugins, [(pack.name, [p.name for p in pack.passes])], set(), as_json)
    if not replay:
        report["ok"] = True
        _done(report, as_json)
        return
    if not as_json:
        typer.echo(_ok_line(report))
    _replay(report, pack.name, Path(os.path.abspath(root)), as_json)


def _check_distribution(
    report: dict[str, Any], dist: Distribution, relative: bool, replay: bool, as_json: bool
) -> None:
    """Every pack the distribution's plugin registers: checked, versions equal to the
    distribution's, then (``replay``) each pack's eval cases."""
    from hippo_core.packs.dist_check import check_distribution, version_problems
    from hippo_core.plugins.manager import load_plugins

    checked = check_distribution(dist)
    if not checked:
        _fail(report, [f"{report['path']}: its plugin registers no pack"], as_json)
    problems = [_pack_error(c.error, relative) for c in checked if c.error is not None]
    problems += [_relative_line(line, relative) for line in version_problems(dist, checked)]
    report["packs"] = [
        {
            "path": _shown(c.root, relative),
            "name": c.name,
            "version": c.version,
            "passes": list(c.passes),
            "overlays": c.overlays,
            "error": _pack_error(c.error, relative) if c.error else None,
        }
        for c in checked
    ]
    first = report["packs"][0]
    report |= {key: first[key] for key in ("name", "version", "passes", "overlays")}
    report["path"] = first["path"]
    if problems:
        _fail(report, problems, as_json)
    ours = {c.name for c in checked}
    _warn_twins(load_plugins(), [(c.name, list(c.passes)) for c in checked], ours, as_json)
    if not as_json:
        for pack in report["packs"]:
            typer.echo(_ok_line(pack))
    if not replay:
        report["ok"] = True
        if as_json:
            _done(report, as_json)
        return
    first = next((c for c in checked if c.passes), checked[0])
    report["path"] = _shown(first.root, relative)
    _replay(report, first.name, first.root, as_json)


def _pack_error(error: PackError | None, relative: bool) -> str:
    from hippo_core.packs.files import PackError

    assert error is not None
    return str(PackError(Path(_shown(error.path, relative)), error.problem, error.line))


def _relative_line(line: str, relative: bool) -> str:
    where, sep, rest = line.partition(": ")
    return f"{_shown(Path(where), relative)}{sep}{rest}"


def _warn_twins(
    plugins: Plugins, packs: list[tuple[str, list[str]]], ours: set[str], as_json: bool
) -> None:
    """Warn of a pass name another pack installed here (or of the workspace here) has: in
    a workspace with both, one of them is left out."""
    from hippo_core.base.errors import HippoError
    from hippo_core.packs.survey import survey
    from hippo_core.workspace.folder import Workspace

    others = {s.name: s.directory for s in plugins.all_packs()}
    with contextlib.suppress(HippoError):  # outside a workspace: the installed packs only
        others |= {f.name: f.root for f in survey(Workspace.find(), plugins, strict=False).packs}
    for name, passes in packs:
        for other, root in sorted(others.items()):
            if other == name or other in ours:
                continue
            for pass_name in passes:
                if (root / "passes" / f"{pass_name}.toml").is_file() and not as_json:
                    typer.echo(
                        f"warning: the pass '{pass_name}' of {name} has the name of a pass of "
                        f"the pack '{other}' installed here; a workspace that has both leaves "
                        "one of them out",
                        err=True,
                    )


def build(
    path: Path = typer.Argument(
        ...,
        metavar="PATH",
        help="A pack's folder (becomes an archive), or a distribution's (becomes a wheel).",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        metavar="DIR",
        show_default=False,
        help="Where to write it (default: the index's folder for an archive with --index, "
        "else dist/ here; a distribution's dist/ for a wheel).",
    ),
    index: Path | None = typer.Option(
        None,
        "--index",
        metavar="FILE",
        help="Add the new version to this registry index (made when it is not there).",
    ),
) -> None:
    """Build what a registry publishes: the archive or wheel, its sha256, its entry."""
    from hippo_core.packs.build import add_to_index, build_archive, build_wheel, entries_toml
    from hippo_core.packs.dist_check import source_distribution
    from hippo_core.packs.files import PackError
    from hippo_core.packs.scaffold import pack_folder
    from hippo_core.plugins.manager import load_plugins

    relative = not path.is_absolute()
    try:
        dist = source_distribution(path) if path.is_dir() else None
        if dist is not None:
            built = build_wheel(path, dist, out or path / "dist")
        else:
            root = Path(os.path.abspath(pack_folder(path)))
            folder = out or (index.parent if index is not None else Path("dist"))
            built = build_archive(root, load_plugins(), folder)
    except PackError as error:
        raise PackError(Path(_shown(error.path, relative)), error.problem, error.line) from None
    shown = _shown(built.file, relative)
    what = f": {built.distribution}" if built.distribution else ""
    typer.echo(f"built {shown}{what}")
    ours = {entry.name for entry in built.entries}
    named = [(e.name, list(e.version.get("passes", []))) for e in built.entries]
    _warn_twins(load_plugins(), named, ours, False)
    typer.echo(f"  sha256 {built.sha256}")
    for line in built.packs:
        typer.echo(f"  {line}")
    if index is None:
        typer.echo("its registry entry (add it to an index, or build again with --index FILE):")
        typer.echo(entries_toml(built.entries).rstrip("\n"))
    else:
        for line in add_to_index(index, built):
            typer.echo(line)
    if built.distribution:
        typer.echo(
            f"next: upload {shown} to the package index teams install from (python -m twine "
            "upload, or a folder pip's --find-links reads), then publish the registry index"
        )


def _beside(plugins: Plugins) -> dict[str, Path]:
    """The packs of the workspace here, by name (none outside a workspace), for a theme."""
    from hippo_core.base.errors import HippoError
    from hippo_core.packs.survey import survey
    from hippo_core.workspace.folder import Workspace

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


def _replay(report: dict[str, Any], name: str, root: Path, as_json: bool) -> None:
    from hippo_core.base.errors import HippoError
    from hippo_core.packs.evals import replay_cases
    from hippo_core.packs.evals_case import CaseError

    try:
        result = replay_cases(root, name, report["path"])
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
    """``ok: NAME VERSION (passes: ...)`` or ``(a theme over ...)``."""
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
    for function in (new, check, build):
        subcommand(app)(function)
