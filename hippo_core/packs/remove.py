"""``hippo pack remove``: an installed pack's folder and lock entry deleted together."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hippo_core.errors import HippoError
from hippo_core.packs.changing import changing_packs, folder_name, not_installed, staging_folder
from hippo_core.packs.lock import edited_files, read_lock, write_lock

if TYPE_CHECKING:
    from hippo_core.workspace import Workspace


def remove(workspace: Workspace, name: str, *, force: bool = False) -> str:
    """Delete the pack ``name`` and its lock entry; returns what was done, in one line."""
    folder_name(name)
    with changing_packs(workspace):
        locked = read_lock(workspace)
        entry = locked.get(name)
        folder = workspace.packs_dir / name
        present = os.path.lexists(folder)
        if entry is None and not present:
            raise HippoError(not_installed(workspace, name, locked))
        rest = {other: value for other, value in locked.items() if other != name}
        if entry is not None and entry.origin == "distribution":
            write_lock(workspace, rest)
            dist = entry.source.split()[0] if entry.source else entry.requirement
            return (
                f"{name} runs from the distribution {entry.source}; it was dropped from the "
                f"lock file; to uninstall it run: pip uninstall {dist}"
            )
        shown = workspace.relative(folder) + "/"
        if not force:
            if entry is None:
                raise HippoError(
                    f"{shown} is not in the lock file, so hippo cannot tell whether it was "
                    f"edited; delete it anyway with: hippo pack remove --force {name}"
                )
            edits = edited_files(folder, entry)
            if edits:
                raise HippoError(
                    f"{name} has files edited since it was installed ({', '.join(edits)}); "
                    f"delete them anyway with: hippo pack remove --force {name}"
                )
        with staging_folder(workspace) as staging:
            if present:
                os.rename(folder, staging / name)
            try:
                if entry is not None:
                    write_lock(workspace, rest)
            except BaseException:
                if present:
                    os.rename(staging / name, folder)
                raise
        version = f" {entry.version}" if entry else ""
        what = f"removed {name}{version} ({shown})" if present else f"removed {name}{version}"
        return what + ("" if present else f"; {shown} was already gone")
