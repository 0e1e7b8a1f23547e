"""Changing a workspace's packs safely: one pack command at a time, a staging folder
beside ``.hippo/packs/``, renames that never overwrite, and the names a command accepts."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.packs.archive import remove_tree

if TYPE_CHECKING:
    from hippo_core.packs.lock import Locked
    from hippo_core.workspace.folder import Workspace

STAGING_PREFIX = ".pack-"
"""Folders inside ``.hippo/`` that hold a pack while it is checked, or on its way out."""


def folder_name(name: str) -> str:
    """``name`` when it can only mean a folder directly inside ``.hippo/packs/``."""
    if not name or name.startswith(".") or "/" in name or "\\" in name or "\0" in name:
        raise UsageError(f"'{name}' is not a pack name")
    return name


@contextlib.contextmanager
def changing_packs(workspace: Workspace) -> Iterator[None]:
    """One pack command at a time changes a workspace's packs."""
    from hippo_core.files.locks import file_lock
    from hippo_core.packs.files import NO_LINKS

    if workspace.packs_dir.is_symlink():
        raise HippoError(f"{workspace.relative(workspace.packs_dir)} {NO_LINKS}")
    with file_lock(workspace.cache_dir / "packs-changing.lock", wait=0) as handle:
        if handle is None:
            raise HippoError(
                "another hippo pack command is changing the packs here; "
                "try again when it has finished"
            )
        from hippo_core.files.leftovers import remove, staging_folders

        remove(staging_folders(workspace))  # what a killed pack command left: none runs now
        yield


@contextlib.contextmanager
def staging_folder(workspace: Workspace) -> Iterator[Path]:
    """A new folder inside ``.hippo/`` (same file system as the packs), deleted afterwards."""
    workspace.hippo_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=workspace.hippo_dir))
    try:
        yield staging
    finally:
        remove_tree(staging)


def rename_in(folder: Path, target: Path) -> None:
    """Rename ``folder`` to ``target``, which must not exist yet."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(target):  # pragma: no cover - refused earlier; never overwrite
        raise HippoError(f"{target} appeared while installing; nothing was installed")
    os.rename(folder, target)


def not_installed(workspace: Workspace, name: str, locked: dict[str, Locked]) -> str:
    """The error for a pack ``name`` that is not here, naming those that are."""
    here = set(locked)
    if workspace.packs_dir.is_dir():
        here |= {
            p.name
            for p in workspace.packs_dir.iterdir()
            if p.is_dir() and not p.name.startswith(".")
        }
    return (
        f"no pack named '{name}' is installed here; installed: {', '.join(sorted(here)) or 'none'}"
    )
