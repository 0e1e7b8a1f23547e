"""Check pack registry indexes: ``python registry/check.py [INDEX...]``.

With no INDEX it checks ``registry/index.toml``, hippo's first-party index. Prints one line
per problem and exits 1 when there is any, else prints a summary and exits 0. Beyond the
format (what ``hippo pack add`` checks too), for every version it checks that:

- an archive given as a path exists, matches its sha256, unpacks safely, and holds the pack
  the entry names (pack.toml's name and version, its passes, what it overlays);
- a ``hippo-memory`` source names a pack hippo ships (``hippo_packs/<name>/``) with that
  version, those passes and that overlay, registered by hippo's built-in plugin, when the
  requirement admits this hippo (older entries record older hippos).

For the first-party index it also checks that every pack in ``hippo_packs/`` is listed and
that ``hippo_packs/registry.toml`` is a byte-equal copy. ``--write-schema`` writes
``registry/schema.json`` from the model in ``hippo_core/packs/registry.py``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # a checkout works without installing hippo

from hippo_core import __version__  # noqa: E402
from hippo_core.errors import HippoError  # noqa: E402
from hippo_core.packs.archive import (  # noqa: E402
    ArchiveError,
    FetchError,
    archive_kind,
    download,
    extract,
    is_url,
)
from hippo_core.packs.index import SHIPPED_DISTRIBUTION, Registry  # noqa: E402
from hippo_core.packs.manifest import read_manifest  # noqa: E402
from hippo_core.packs.registry import (  # noqa: E402
    IndexModel,
    PackModel,
    VersionModel,
    index_problems,
    schema,
)

DEFAULT_INDEX = HERE / "index.toml"
SCHEMA_FILE = HERE / "schema.json"


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def shipped_root() -> Path:
    import hippo_packs

    return Path(hippo_packs.__file__).resolve().parent


def check_index(path: Path) -> tuple[int, list[str]]:
    """The number of packs in the index at ``path`` and its problems, one line each."""
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return 0, [f"registry {where}: cannot be read ({exc.strerror})"]
    model, problems = index_problems(raw, where, as_json=path.suffix.lower() == ".json")
    if model is None:
        return 0, problems
    registry = Registry(where, str(path.resolve()))
    for pack in model.pack:
        for entry in pack.versions:
            label = f"registry {where}: pack '{pack.name}' version {entry.version}"
            problems.extend(f"{label}: {p}" for p in check_version(registry, pack, entry))
    if path.resolve() == DEFAULT_INDEX:
        problems.extend(check_first_party(model, where))
    return len(model.pack), problems


def check_version(registry: Registry, pack: PackModel, entry: VersionModel) -> list[str]:
    source = entry.source
    if source.archive and not is_url(source.archive) and source.sha256:
        return check_archive(registry.resolve(source.archive), pack, entry)
    if source.distribution and _dist(source.distribution) == SHIPPED_DISTRIBUTION:
        return check_shipped(pack, entry)
    return []


def check_archive(location: str, pack: PackModel, entry: VersionModel) -> list[str]:
    kind = archive_kind(location)
    if kind is None:
        return []  # the format check names it
    with tempfile.TemporaryDirectory(prefix="hippo-registry-check-") as temp:
        archive = Path(temp) / "archive"
        try:
            digest = download(location, archive)
        except FetchError as error:
            return [f"archive {location}: {error.reason}"]
        if digest != entry.source.sha256.lower():
            return [
                f"archive {location}: its sha256 is {digest}, the index says {entry.source.sha256}"
            ]
        try:
            extract(archive, kind, Path(temp) / "files")
        except ArchiveError as error:
            return [f"archive {location}: {error}"]
        files = Path(temp) / "files"
        tops = [p for p in files.iterdir() if not p.name.startswith(".")]
        root = files
        if not (files / "pack.toml").is_file() and len(tops) == 1 and tops[0].is_dir():
            root = tops[0]
        return [f"archive {location}: {p}" for p in compare(root, pack, entry)]


def check_shipped(pack: PackModel, entry: VersionModel) -> list[str]:
    from packaging.requirements import Requirement

    if not Requirement(entry.source.distribution).specifier.contains(__version__, prereleases=True):
        return []  # an entry for an older hippo: this hippo does not ship it
    from hippo_core.plugins import load_plugins

    registered = load_plugins().packs().get(pack.name)
    if registered is None or not registered.plugin.first_party:
        return [
            f"no plugin of hippo's own registers a pack named '{pack.name}' "
            "(hippo_core/builtins/packs.py, or a first-party plugin's hippo_register_packs), "
            "so hippo pack add cannot copy it"
        ]
    root = registered.directory.resolve()
    if shipped_root() not in root.parents:
        return [f"hippo registers '{pack.name}' from {registered.directory}, not hippo_packs/"]
    shown = root.relative_to(shipped_root().parent).as_posix()
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


def check_first_party(model: IndexModel, where: str) -> list[str]:
    problems = []
    listed = {pack.name for pack in model.pack}
    root = shipped_root()
    for manifest in sorted([*root.glob("*/pack.toml"), *root.glob("*/pack/pack.toml")]):
        name = (manifest.parent.parent if manifest.parent.name == "pack" else manifest.parent).name
        if name not in listed:
            problems.append(f"registry {where}: hippo ships the pack '{name}'; list it")
    copy = root / "registry.toml"
    if not copy.is_file() or copy.read_bytes() != DEFAULT_INDEX.read_bytes():
        problems.append(
            f"registry {where}: hippo_packs/registry.toml (the copy hippo reads) differs; "
            "cp registry/index.toml hippo_packs/registry.toml"
        )
    return problems


def _dist(requirement: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""


def _shown(path: Path) -> str:
    cwd = Path.cwd()
    return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write-schema"]:
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
        return 0
    if any(arg.startswith("-") for arg in argv):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    problems: list[str] = []
    counts = []
    for text in argv or [_shown(DEFAULT_INDEX)]:
        count, found = check_index(Path(text))
        counts.append(f"{text}: {count} pack{'s' * (count != 1)}")
        problems.extend(found)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"ok: {'; '.join(counts)}, no problems")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
