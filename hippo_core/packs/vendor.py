"""Copying a pack that a distribution ships into ``.hippo/packs/``, where the team owns it.

``hippo init`` copies hippo's own core pack this way; ``hippo pack vendor NAME`` copies any
installed distribution's pack so that it can be edited (the copy then runs instead of the
distribution's, and the lock file says where it came from).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError, UsageError

if TYPE_CHECKING:
    from hippo_core.packs.lock import Locked
    from hippo_core.plugins.manager import PackSource, Plugins
    from hippo_core.workspace.folder import Workspace


def vendor(workspace: Workspace, plugins: Plugins, name: str) -> Locked:
    """Copy the pack ``name`` from the distribution that ships it; returns its lock entry."""
    from hippo_core.packs.changing import changing_packs

    sources = plugins.packs()
    if name not in sources:
        shipped = ", ".join(sorted(sources)) or "none"
        raise UsageError(
            f"no installed distribution ships a pack named '{name}'; they ship: {shipped}"
        )
    with changing_packs(workspace):
        return _copy(workspace, plugins, sources[name])


def _copy(workspace: Workspace, plugins: Plugins, source: PackSource) -> Locked:
    from hippo_core.dream.packs import check_pack
    from hippo_core.packs.files import PackError
    from hippo_core.packs.lock import Locked, update_lock

    target = workspace.packs_dir / source.name
    if os.path.lexists(target):
        raise HippoError(
            f"{workspace.relative(target)} already exists; it is the copy that runs here "
            "(hippo pack list shows where it came from)"
        )
    try:
        pack = check_pack(source.directory, plugins)
    except PackError as exc:
        raise HippoError(
            f"the pack '{source.name}' of {source.plugin.distribution} is broken: {exc}"
        ) from None
    copy_pack(source.directory, target, workspace)
    entry = Locked(
        name=source.name,
        version=pack.manifest.version if pack.manifest else "",
        origin="builtin" if source.plugin.first_party else "vendored",
        source=f"{source.plugin.distribution} {source.plugin.version}".strip(),
    ).with_files(target)
    update_lock(workspace, entry)
    return entry


def copy_pack(source: Path, target: Path, workspace: Workspace) -> None:
    """Copy the pack folder ``source`` to ``target`` (which must not exist) in one rename.

    The copy is made in a staging folder inside ``.hippo/``; links are refused,
    ``__pycache__`` and dot-files are left out, and nothing appears at ``target`` unless
    the whole copy succeeded.
    """
    from hippo_core.packs.changing import rename_in, staging_folder

    with staging_folder(workspace) as staging:
        copy = staging / "pack"
        for path in sorted(source.rglob("*")):
            rel = path.relative_to(source)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            if path.is_symlink():
                raise HippoError(f"{path}: is a symbolic link; hippo does not copy links in packs")
            if path.is_dir():
                (copy / rel).mkdir(parents=True, exist_ok=True)
            elif path.is_file():
                (copy / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, copy / rel)
        copy.mkdir(exist_ok=True)
        rename_in(copy, target)
