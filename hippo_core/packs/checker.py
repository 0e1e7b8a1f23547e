"""``hippo registry check``: an index checked as every install from it will be checked.

Beyond the format (what ``hippo pack add`` checks too), for every version:

- an archive given as a path: it exists, matches its sha256, unpacks safely, holds the pack
  the entry names (``pack.toml``'s name and version, its passes, what it overlays), and
  passes the loader's checks (each prompt's placeholders against its pass's ``reads``);
- a distribution whose wheel is in one of the wheel folders (``--wheels``, else the
  index's folder and its ``wheels/``): the wheel matches the entry's sha256, and every pack
  its plugin registers passes the loader's checks with the plugin loaded, its
  ``pack.toml`` version equal to the distribution's and to the entry's;
- a ``hippo-memory`` source: a pack this hippo ships, as the entry describes it (entries for
  other hippos are skipped).

Across the index: a pass name is used by one pack only, and by none of hippo's own.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.packs.archive import (
    ArchiveError,
    FetchError,
    archive_kind,
    download,
    extract,
    is_url,
)
from hippo_core.packs.files import PackError
from hippo_core.packs.index import SHIPPED_DISTRIBUTION, Registry
from hippo_core.packs.manifest import read_manifest
from hippo_core.packs.registry import index_problems
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.packs.registry import IndexModel, PackModel, VersionModel
    from hippo_core.plugins.manager import Plugins


@dataclass
class Checked:
    """One index checked: how many packs, its problems, and what could not be checked."""

    packs: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_index(path: Path, wheels: list[Path] | None = None) -> Checked:
    """Check the index file at ``path``; ``wheels``: the folders to find wheels in."""
    from hippo_core.plugins.manager import load_plugins

    where = str(path)
    result = Checked()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        result.problems.append(f"registry {where}: cannot be read ({exc.strerror})")
        return result
    model, problems = index_problems(raw, where, as_json=path.suffix.lower() == ".json")
    result.problems += problems
    if model is None:
        return result
    result.packs = len(model.pack)
    registry = Registry(where, str(path.resolve()))
    folders = wheels if wheels is not None else [path.parent, path.parent / "wheels"]
    plugins = load_plugins()
    for pack in model.pack:
        for entry in pack.versions:
            label = f"registry {where}: pack '{pack.name}' version {entry.version}"
            found, notes = _version(registry, pack, entry, folders, plugins)
            result.problems += [f"{label}: {p}" for p in found]
            result.notes += [f"{label}: {n}" for n in notes]
    result.problems += [f"registry {where}: {p}" for p in _pass_names(model, plugins)]
    return result


def _version(
    registry: Registry,
    pack: PackModel,
    entry: VersionModel,
    wheels: list[Path],
    plugins: Plugins,
) -> tuple[list[str], list[str]]:
    """The problems of one version, and what could not be checked."""
    source = entry.source
    if source.archive and not is_url(source.archive) and source.sha256:
        return _archive(registry.resolve(source.archive), pack, entry, plugins)
    if source.archive:
        return [], ["its archive is at a URL and was not fetched; hippo checks it on install"]
    if _dist(source.distribution) == SHIPPED_DISTRIBUTION:
        return _shipped(pack, entry, plugins), []
    return _wheel(pack, entry, wheels)


def _archive(
    location: str, pack: PackModel, entry: VersionModel, plugins: Plugins
) -> tuple[list[str], list[str]]:
    from hippo_core.dream.packs import check_pack

    kind = archive_kind(location)
    if kind is None:
        return [], []  # the format check names it
    with tempfile.TemporaryDirectory(prefix="hippo-registry-check-") as temp:
        archive = Path(temp) / "archive"
        try:
            digest = download(location, archive)
        except FetchError as error:
            return [f"archive {location}: {error.reason}"], []
        if digest != entry.source.sha256.lower():
            return [
                f"archive {location}: its sha256 is {digest}, the index says {entry.source.sha256}"
            ], []
        try:
            extract(archive, kind, Path(temp) / "files")
        except ArchiveError as error:
            return [f"archive {location}: {error}"], []
        root = _single_top(Path(temp) / "files")
        problems = [f"archive {location}: {p}" for p in compare(root, pack, entry)]
        if problems:
            return problems, []
        try:
            check_pack(root, plugins)
        except PackError as error:
            shown = f"{_inside(error.path, root)}" + (f":{error.line}" if error.line else "")
            if "which is not installed" in error.problem or "which are not" in error.problem:
                return [], [f"the loader's checks were not run: {error.problem}"]
            return [f"archive {location}: {shown}: {error.problem}"], []
        return [], []


def _single_top(files: Path) -> Path:
    tops = [p for p in files.iterdir() if not p.name.startswith(".")]
    if not (files / "pack.toml").is_file() and len(tops) == 1 and tops[0].is_dir():
        return tops[0]
    return files


def _inside(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _wheel(pack: PackModel, entry: VersionModel, wheels: list[Path]) -> tuple[list[str], list[str]]:
    """A distribution's version checked from its wheel, when one of ``wheels`` has it."""
    import zipfile

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from hippo_core.packs.archive import sha256_file
    from hippo_core.packs.dist_check import check_distribution, version_problems, wheel_distribution

    requirement = Requirement(entry.source.distribution)
    pinned = [s.version for s in requirement.specifier if s.operator == "=="]
    if len(pinned) != 1:
        return [], [f"{entry.source.distribution} pins no one version; its wheel was not checked"]
    stem = f"{canonicalize_name(requirement.name).replace('-', '_')}-{pinned[0]}-"
    found = sorted(w for folder in wheels for w in folder.glob(f"{stem}*.whl"))
    if not found:
        shown = ", ".join(str(folder) for folder in wheels)
        return [], [f"no wheel of {requirement.name} {pinned[0]} in {shown} (--wheels DIR)"]
    wheel = found[0]
    if entry.source.sha256 and sha256_file(wheel) != entry.source.sha256.lower():
        return [
            f"{wheel.name}: its sha256 is {sha256_file(wheel)}, the index says "
            f"{entry.source.sha256}"
        ], []
    with tempfile.TemporaryDirectory(prefix="hippo-registry-check-") as temp:
        with zipfile.ZipFile(wheel) as zip_:
            zip_.extractall(temp)
        dist = wheel_distribution(Path(temp))
        try:
            checked = check_distribution(dist)
        except HippoError as error:
            return [f"{wheel.name}: {error}"], []
        problems = []
        for item in checked:
            if item.error is not None:
                where = _inside(item.error.path, Path(temp))
                line = f":{item.error.line}" if item.error.line else ""
                problems.append(f"{wheel.name}: {where}{line}: {item.error.problem}")
        for line in version_problems(dist, checked):
            where, _, rest = line.partition(": ")
            problems.append(f"{wheel.name}: {_inside(Path(where), Path(temp))}: {rest}")
        ours = next((item for item in checked if item.name == pack.name), None)
        if ours is None:
            problems.append(f"{wheel.name}: its plugin registers no pack named '{pack.name}'")
        elif ours.error is None:
            problems += [f"{wheel.name}: {p}" for p in compare(ours.root, pack, entry)]
    return problems, []


def _shipped(pack: PackModel, entry: VersionModel, plugins: Plugins) -> list[str]:
    from packaging.requirements import Requirement

    import hippo_packs

    if not Requirement(entry.source.distribution).specifier.contains(__version__, prereleases=True):
        return []  # an entry for an older hippo: this hippo does not ship it
    registered = plugins.packs().get(pack.name)
    if registered is None or not registered.plugin.first_party:
        return [
            f"no plugin of hippo's own registers a pack named '{pack.name}' "
            "(hippo_core/builtins/packs.py, or a first-party plugin's hippo_register_packs), "
            "so hippo pack add cannot copy it"
        ]
    shipped_root = Path(hippo_packs.__file__).resolve().parent
    root = registered.directory.resolve()
    if shipped_root not in root.parents:
        return [f"hippo registers '{pack.name}' from {registered.directory}, not hippo_packs/"]
    shown = root.relative_to(shipped_root.parent).as_posix()
    return [f"{shown}/: {p}" for p in compare(root, pack, entry)]


def compare(root: Path, pack: PackModel, entry: VersionModel) -> list[str]:
    """How the pack folder ``root`` differs from what the index entry says it holds."""
    from packaging.version import InvalidVersion, Version

    try:
        manifest = read_manifest(root)
    except HippoError as error:
        return [str(error)]
    if manifest is None:
        return ["has no pack.toml"]
    problems = []
    if manifest.name != pack.name:
        problems.append(f"pack.toml names '{manifest.name}', the index '{pack.name}'")
    try:
        same = Version(manifest.version) == Version(entry.version)
    except InvalidVersion:
        same = False
    if not same:
        problems.append(f"pack.toml says version {manifest.version}, the index {entry.version}")
    passes_dir = root / "passes"
    found = sorted(p.stem for p in passes_dir.glob("*.toml")) if passes_dir.is_dir() else []
    if found != sorted(entry.passes):
        problems.append(
            f"its passes are [{', '.join(found)}], the index says [{', '.join(entry.passes)}]"
        )
    if manifest.overlays != entry.overlays:
        problems.append(
            f"pack.toml overlays '{manifest.overlays}', the index says '{entry.overlays}'"
        )
    return problems


def _pass_names(model: IndexModel, plugins: Plugins) -> list[str]:
    """A pass name listed by two packs of the index, or by one of them and one of hippo's
    own: a workspace with both would leave one out."""
    owners: dict[str, set[str]] = {}
    for pack in model.pack:
        for entry in pack.versions:
            for name in entry.passes:
                owners.setdefault(name, set()).add(pack.name)
    ours: dict[str, str] = {}
    for source in plugins.all_packs():
        if source.plugin.first_party:
            for path in (source.directory / "passes").glob("*.toml"):
                ours.setdefault(path.stem, source.name)
    problems = []
    for name, packs in sorted(owners.items()):
        if len(packs) > 1:
            listed = " and ".join(f"'{p}'" for p in sorted(packs))
            problems.append(
                f"the pass name '{name}' is used by packs {listed}; pass names must be unique "
                "across the packs a workspace has, so rename one"
            )
        hippos = ours.get(name)
        if hippos is not None and hippos not in packs:
            problems.append(
                f"pack '{sorted(packs)[0]}' has a pass named '{name}', as hippo's {hippos} "
                "pack does; rename it"
            )
    return problems


def _dist(requirement: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""
