"""What a pack author works with: the distribution ``hippo pack new`` writes, and the pack
folder (and its recorded eval cases) that ``hippo pack check`` checks.

The scaffold's files are templates in the folder ``scaffold/`` beside this module, at the
paths they get. In paths and text, ``{name}`` is the pack's name, ``{module}`` its Python
module's suffix (``-`` becomes ``_``) and ``{hippo}`` this hippo's ``major.minor``; a
``.tmpl`` suffix is dropped (it keeps tools from taking a template for hippo's own code or
settings) and a ``dot-`` prefix becomes ``.``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.packs.files import PackError
from hippo_core.packs.manifest import MANIFEST, NAME_RULE
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins

TEMPLATES = Path(__file__).resolve().with_name("scaffold")
PACK_FOLDER = "pack"
"""The pack's folder inside the distribution's module."""


@dataclass(frozen=True)
class Scaffold:
    """A distribution ``hippo pack new`` wrote."""

    name: str
    folder: Path
    files: tuple[str, ...]
    """The files written, relative to ``folder``, sorted."""

    @property
    def module(self) -> str:
        return module_name(self.name)

    @property
    def pack(self) -> Path:
        return self.folder / self.module / PACK_FOLDER


def distribution_name(name: str) -> str:
    return f"hippo-pack-{name}"


def module_name(name: str) -> str:
    return "hippo_pack_" + name.replace("-", "_")


def check_name(name: str, plugins: Plugins) -> None:
    """Refuse a name that is no pack name, or that one of hippo's own packs uses for a pack
    or a pass (those hippo's registry lists, and those its plugins ship).

    The scaffold's pass is named like the pack, and pass names are unique over every pack
    of a workspace, where hippo's packs run too; a pack named like one of hippo's would
    stand in for it in every workspace of the environment.
    """
    if not NAME_RULE.match(name):
        raise UsageError(
            f"'{name}' is not a pack name: use lower-case letters, digits, '-' or '_', "
            "starting with a letter or digit, at most 64 characters"
        )
    for pack, passes in _first_party(plugins):
        if name == pack:
            raise UsageError(f"'{name}' is the name of hippo's {name} pack; choose another name")
        if name in passes:
            raise UsageError(
                f"'{name}' is the name of a pass of hippo's {pack} pack, and the new "
                "pack's pass takes the pack's name; pass names must be unique, so choose another"
            )


def _first_party(plugins: Plugins) -> list[tuple[str, set[str]]]:
    """hippo's own packs and their passes: its registry's, and those its plugins ship."""
    from hippo_core.packs.registries import first_party, load_index

    found: dict[str, set[str]] = {}
    for pack in load_index(first_party()).packs.values():
        found.setdefault(pack.name, set()).update(p for r in pack.releases for p in r.passes)
    for source in plugins.all_packs():
        if source.plugin.first_party:
            passes = source.directory / "passes"
            found.setdefault(source.name, set()).update(p.stem for p in passes.glob("*.toml"))
    return sorted(found.items())


def new_pack(name: str, parent: Path, plugins: Plugins) -> Scaffold:
    """Write the distribution ``hippo-pack-<name>/`` in ``parent``: whole, or not at all.

    Raises :class:`UsageError` for a bad name and :class:`HippoError` when the folder exists
    or cannot be written.
    """
    check_name(name, plugins)
    folder = parent / distribution_name(name)
    if os.path.lexists(folder):
        raise HippoError(f"{folder} already exists; choose another name or folder (--dir)")
    files = render(name)
    if parent.exists() and not parent.is_dir():
        raise HippoError(f"{parent} is not a folder; give --dir a folder to write the pack in")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return _write(name, folder, files)
    except OSError as exc:
        raise HippoError(f"cannot write {folder}: {exc.strerror or exc}") from None


def _write(name: str, folder: Path, files: dict[str, str]) -> Scaffold:
    from hippo_core.files.atomic import atomic_write

    parent = folder.parent
    # Written beside the target and renamed into place, so a failure leaves nothing behind;
    # no fsync per file, since a scaffold a crash cut short is made again in a moment.
    stage = _stage(parent, folder.name)
    try:
        for rel, text in files.items():
            atomic_write(stage / rel, text, durable=False)
        try:
            stage.rename(folder)
        except OSError:
            raise HippoError(
                f"{folder} already exists; choose another name or folder (--dir)"
            ) from None
    finally:
        if stage.exists():
            shutil.rmtree(stage)
    return Scaffold(name, folder, tuple(sorted(files)))


def _stage(parent: Path, name: str) -> Path:
    # Made with the umask's mode, as the renamed folder should be (mkdtemp would make it
    # private, and reading the umask to undo that means setting it, which races threads).
    while True:
        stage = parent / f".{name}.{os.urandom(6).hex()}.new"
        try:
            stage.mkdir()
        except FileExistsError:
            continue
        return stage


def render(name: str) -> dict[str, str]:
    """The scaffold's files for the pack ``name``: relative path -> text."""
    major, minor = __version__.split(".")[:2]
    markers = {"{name}": name, "{module}": name.replace("-", "_"), "{hippo}": f"{major}.{minor}"}

    def fill(text: str) -> str:
        for marker, value in markers.items():
            text = text.replace(marker, value)
        return text

    files = {}
    for path in sorted(TEMPLATES.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        parts = [fill(part) for part in path.relative_to(TEMPLATES).parts]
        parts[-1] = parts[-1].removesuffix(".tmpl")
        if parts[-1].startswith("dot-"):
            parts[-1] = "." + parts[-1].removeprefix("dot-")
        files["/".join(parts)] = fill(path.read_text(encoding="utf-8"))
    return files


def pack_folder(path: Path) -> Path:
    """The pack at ``path``: the folder itself when it has ``pack.toml``, else the one
    ``*/pack/pack.toml`` of a distribution made by ``hippo pack new``."""
    if not path.exists():
        raise PackError(path, "does not exist; give a pack's folder or its distribution's")
    if (path / MANIFEST).exists() or not path.is_dir():
        return path
    found = sorted(path.glob(f"*/{PACK_FOLDER}/{MANIFEST}"))
    if len(found) == 1:
        return found[0].parent
    if found:
        shown = ", ".join(p.parent.relative_to(path).as_posix() for p in found)
        raise PackError(path, f"holds several packs ({shown}); give the folder of one")
    raise PackError(
        path,
        f"has no {MANIFEST}, and no <module>/{PACK_FOLDER}/{MANIFEST} as hippo pack new "
        "writes it; give the pack's folder",
    )
