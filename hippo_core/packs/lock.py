"""``.hippo/packs.lock``: what was installed in this workspace, from where, with which bytes.

Written by ``hippo init`` and the pack commands, committed with ``.hippo/packs/``. Each pack
has a table; the digests of its files as installed let ``hippo pack list`` say whether the
team has edited them since::

    version = 1

    [packs.decisions]
    version = "0.1.0"
    origin = "registry"       # builtin, registry, distribution or vendored
    source = "hippo-memory 0.1.0"
    registry = "https://example.org/hippo/index.toml"
    archive = "https://example.org/hippo/decisions-0.1.0.tar.gz"
    sha256 = "9f86d081..."    # the archive's (or wheel's) digest, checked before installing
    requirement = ""          # origin distribution: what pip installed, pinned (x==1.2.0)
    wheel = ""                # origin distribution: the wheel's file name, whose sha256 this is

    [packs.decisions.files]
    "pack.toml" = "2c26b46b..."
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.base.errors import HippoError
from hippo_core.files.atomic import atomic_write

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

LOCK_FILE = "packs.lock"
ORIGINS = ("builtin", "registry", "distribution", "vendored")
HEADER = (
    "# The packs installed in this workspace, written by hippo (init, pack add, update,\n"
    "# remove, vendor). Commit it with .hippo/packs/; do not edit it by hand.\n"
)
_TEXT_KEYS = (
    "version",
    "origin",
    "source",
    "registry",
    "archive",
    "requirement",
    "wheel",
    "sha256",
)


@dataclass(frozen=True)
class Locked:
    """One installed pack as the lock file records it."""

    name: str
    version: str
    origin: str
    """``builtin`` (shipped inside hippo), ``registry`` (an archive from an index),
    ``distribution`` (pip installed; runs from there), ``vendored`` (copied from one)."""
    source: str
    """Where it came from, for people: ``hippo-memory 0.1.0``, an archive's URL ..."""
    registry: str = ""
    archive: str = ""
    sha256: str = ""
    """The SHA-256 of the archive (``registry``) or of the wheel (``distribution``)."""
    requirement: str = ""
    """For ``distribution``: what pip installs, pinned to one version (``x==1.2.0``)."""
    wheel: str = ""
    """For ``distribution``: the wheel's file name."""
    files: dict[str, str] = field(default_factory=dict)
    """Each file's path in the pack -> the SHA-256 of its bytes as installed (none for a
    pack that runs from its distribution)."""

    @property
    def distribution(self) -> str:
        """For ``distribution`` and ``vendored``: the distribution's name, as pip knows it."""
        if self.requirement:
            from packaging.requirements import InvalidRequirement, Requirement

            try:
                return Requirement(self.requirement).name
            except InvalidRequirement:
                pass
        return self.source.split()[0] if self.source else ""

    def with_files(self, root: Path) -> Locked:
        return replace(self, files=file_digests(root))


def lock_path(workspace: Workspace) -> Path:
    return workspace.hippo_dir / LOCK_FILE


def read_lock(workspace: Workspace) -> dict[str, Locked]:
    """The lock file's packs by name; empty when there is no lock file."""
    path = lock_path(workspace)
    shown = workspace.relative(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    try:
        values = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise HippoError(
            f"{shown}: cannot be read ({exc}); restore it from git, or delete it and "
            "reinstall the packs"
        ) from None
    packs = values.get("packs", {})
    if values.get("version") != 1 or not isinstance(packs, dict):
        raise HippoError(f"{shown}: not a lock file this hippo can read (version 1)")
    return {name: _locked(name, table, shown) for name, table in packs.items()}


def _locked(name: str, table: Any, shown: str) -> Locked:
    if not isinstance(table, dict):
        raise HippoError(f"{shown}: packs.{name} must be a table")
    texts = {key: table.get(key, "") for key in _TEXT_KEYS}
    files = table.get("files", {})
    bad = [key for key, value in texts.items() if not isinstance(value, str)]
    if bad or not isinstance(files, dict) or texts["origin"] not in ORIGINS:
        raise HippoError(f"{shown}: packs.{name} is not a valid entry; restore it from git")
    return Locked(name=name, files={str(k): str(v) for k, v in files.items()}, **texts)


def write_lock(workspace: Workspace, packs: dict[str, Locked]) -> None:
    """Write the lock file atomically, packs and files sorted (stable diffs)."""
    import tomlkit

    document = tomlkit.document()
    document.add("version", 1)
    tables = tomlkit.table(is_super_table=True)
    for name in sorted(packs):
        entry = packs[name]
        table = tomlkit.table()
        for key in _TEXT_KEYS:
            value = getattr(entry, key)
            if value or key in ("version", "origin", "source"):
                table.add(key, value)
        if entry.files:
            files = tomlkit.table()
            for rel in sorted(entry.files):
                files.add(rel, entry.files[rel])
            table.add("files", files)
        tables.add(name, table)
    document.add("packs", tables)
    atomic_write(lock_path(workspace), HEADER + "\n" + tomlkit.dumps(document))


def update_lock(workspace: Workspace, entry: Locked | None, *, remove: str = "") -> None:
    """Record ``entry`` (replacing its name's), or drop the pack named ``remove``."""
    packs = read_lock(workspace)
    if entry is not None:
        packs[entry.name] = entry
    if remove:
        packs.pop(remove, None)
    write_lock(workspace, packs)


def file_digests(root: Path) -> dict[str, str]:
    """Every regular file below ``root`` (no ``__pycache__``) -> the SHA-256 of its bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts or path.is_symlink() or not path.is_file():
            continue
        found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def edited_files(root: Path, entry: Locked) -> list[str]:
    """Files changed, added or removed since the pack was installed, each marked.

    ``M path`` changed, ``A path`` added, ``D path`` removed; empty when unedited (or when
    the lock records no files for it).
    """
    if not entry.files:
        return []
    now = file_digests(root)
    marks = [f"M {rel}" for rel, digest in now.items() if entry.files.get(rel, digest) != digest]
    marks += [f"A {rel}" for rel in now if rel not in entry.files]
    marks += [f"D {rel}" for rel in entry.files if rel not in now]
    return sorted(marks, key=lambda mark: mark[2:])
