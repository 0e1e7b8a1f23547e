"""Every pack a distribution ships, checked as the loader would check it with the
distribution's own plugin loaded: for ``hippo pack check``, ``hippo pack build`` and
``hippo registry check``.

A distribution is a source folder (its ``pyproject.toml`` names the entry points of the
group ``hippo``) or an unpacked wheel (its ``*.dist-info/entry_points.txt``). Its plugin is
the author's code, so it runs in a fresh hippo process with the folder first on its path:
the plugin's readers, reviewers and kinds count, its ``hippo_register_packs`` says which
packs it ships, and nothing of it stays in the process that asked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from hippo_core.base.errors import HippoError
from hippo_core.packs.files import PackError


@dataclass(frozen=True)
class Distribution:
    """A distribution's name, version and hippo entry points (``name -> module[:attr]``)."""

    folder: Path
    name: str
    version: str
    """Empty when the version is not written in the file (``dynamic``)."""
    entry_points: dict[str, str] = field(default_factory=dict)
    paths: tuple[Path, ...] = ()
    """The folders its modules are imported from."""


@dataclass(frozen=True)
class Checked:
    """One pack the distribution's plugin registers, and what the loader said of it."""

    name: str
    root: Path
    version: str = ""
    passes: tuple[str, ...] = ()
    overlays: str = ""
    error: PackError | None = None


def source_distribution(folder: Path) -> Distribution | None:
    """The distribution whose source is ``folder``; None when it has no ``pyproject.toml``
    naming entry points of the group ``hippo``."""
    import tomllib

    file = folder / "pyproject.toml"
    if not file.is_file():
        return None
    try:
        values = tomllib.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise HippoError(f"{file}: not valid TOML ({exc})") from None
    project = values.get("project", {})
    points = project.get("entry-points", {}).get("hippo", {})
    if not isinstance(points, dict) or not points:
        return None
    version = project.get("version", "")
    paths = tuple(p for p in (folder, folder / "src") if p.is_dir())
    return Distribution(
        folder,
        str(project.get("name", folder.name)),
        version if isinstance(version, str) else "",
        {str(k): str(v) for k, v in points.items()},
        paths,
    )


def wheel_distribution(folder: Path) -> Distribution:
    """The distribution of the wheel unpacked in ``folder``."""
    import configparser

    infos = sorted(folder.glob("*.dist-info"))
    if len(infos) != 1:
        raise HippoError(f"{folder}: not an unpacked wheel (no single .dist-info folder)")
    metadata = (infos[0] / "METADATA").read_text(encoding="utf-8", errors="replace")
    fields = dict(
        line.split(": ", 1) for line in metadata.splitlines() if ": " in line and line[0] != " "
    )
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    points_file = infos[0] / "entry_points.txt"
    if points_file.is_file():
        parser.read_string(points_file.read_text(encoding="utf-8"))
    points = dict(parser["hippo"]) if parser.has_section("hippo") else {}
    name, version = fields.get("Name", ""), fields.get("Version", "")
    return Distribution(folder, name, version, {k: v.strip() for k, v in points.items()}, (folder,))


def check_distribution(dist: Distribution) -> list[Checked]:
    """Every pack the distribution's plugin registers, each checked (themes against the
    pack they overlay, from the same distribution or installed here)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [*(str(p) for p in dist.paths), *filter(None, [env.get("PYTHONPATH", "")])]
    )
    request = {"name": dist.name, "version": dist.version, "points": dist.entry_points}
    code = "import sys; from hippo_core.packs.dist_check import _main; _main(sys.argv[1])"
    found = subprocess.run(
        [sys.executable, "-c", code, json.dumps(request)],
        cwd=dist.folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        answer = json.loads(found.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = found.stderr.strip().splitlines()[-1:] or ["no answer"]
        raise HippoError(f"checking the plugin of {dist.name} failed: {said[0]}") from None
    if answer.get("error"):
        raise HippoError(str(answer["error"]))
    return [_checked(item) for item in answer["packs"]]


def _checked(item: dict[str, object]) -> Checked:
    error = item.get("error")
    problem = None
    if isinstance(error, dict):
        line = error.get("line")
        problem = PackError(
            Path(str(error["path"])), str(error["problem"]), line if isinstance(line, int) else None
        )
    passes = item.get("passes") or []
    return Checked(
        str(item["name"]),
        Path(str(item["root"])),
        str(item.get("version") or ""),
        tuple(str(p) for p in passes) if isinstance(passes, list) else (),
        str(item.get("overlays") or ""),
        problem,
    )


def _main(text: str) -> None:
    """The fresh process: register the distribution's plugin, check its packs, one JSON
    line on stdout."""
    request = json.loads(text)
    answer: dict[str, object]
    try:
        answer = {"packs": _check_here(request)}
    except HippoError as error:
        answer = {"error": str(error)}
    sys.stdout.write(json.dumps(answer) + "\n")


def _check_here(request: dict[str, object]) -> list[dict[str, object]]:
    from importlib import import_module

    from hippo_core.dream.packs import check_pack
    from hippo_core.plugins.manager import PluginInfo, load_plugins

    plugins = load_plugins()
    pm = plugins.pm
    assert pm is not None
    name, version = str(request["name"]), str(request["version"])
    ours: set[str] = set()
    points = request["points"]
    assert isinstance(points, dict)
    for point, target in points.items():
        module_name, _, attribute = str(target).partition(":")
        try:
            plugin: object = import_module(module_name.strip())
            for part in filter(None, attribute.strip().split(".")):
                plugin = getattr(plugin, part)
        except Exception as exc:
            raise HippoError(
                f"the plugin {point} = {target} of {name} cannot be imported: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        registered = pm.get_name(plugin) if pm.is_registered(plugin) else None
        if registered is None:
            pm.register(plugin, name=point)
            registered = point
        plugins.origins[registered] = PluginInfo(registered, name, version)
        ours.add(registered)
    from packaging.utils import canonicalize_name

    shipped = [s for s in plugins.all_packs() if s.plugin.name in ours]
    beside = {s.name: s.directory for s in shipped}
    present = frozenset([canonicalize_name(name)])
    results: list[dict[str, object]] = []
    for source in shipped:
        item: dict[str, object] = {"name": source.name, "root": str(source.directory)}
        try:
            pack = check_pack(source.directory, plugins, beside=beside, present=present)
        except PackError as error:
            item["error"] = {"path": str(error.path), "problem": error.problem, "line": error.line}
        else:
            manifest = pack.manifest
            item["version"] = manifest.version if manifest else ""
            item["overlays"] = manifest.overlays if manifest else ""
            item["passes"] = sorted(p.name for p in pack.passes)
        results.append(item)
    return results


def version_problems(dist: Distribution, checked: list[Checked]) -> list[str]:
    """A pack whose ``pack.toml`` version is not the distribution's, a line each."""
    from packaging.version import InvalidVersion, Version

    if not dist.version:
        return []
    problems = []
    for pack in checked:
        if pack.error is not None or not pack.version:
            continue
        try:
            same = Version(pack.version) == Version(dist.version)
        except InvalidVersion:
            same = pack.version == dist.version
        if not same:
            problems.append(
                f"{pack.root / 'pack.toml'}: version {pack.version}, but {dist.name} is "
                f"{dist.version}; raise the version in pyproject.toml and pack.toml together"
            )
    return problems
