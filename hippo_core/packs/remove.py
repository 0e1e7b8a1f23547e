"""``hippo pack remove``: an installed pack taken out of a workspace.

A folder's pack (an archive, hippo's own, a vendored copy) is deleted with its lock entry,
together. A pack that runs from a distribution cannot be deleted from one workspace, since
pip installed it for the whole environment: it is dropped from the lock file and turned off
here (``disabled_packs``, committed with the settings), so it no longer runs here; pip
uninstalls the distribution too when asked to.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.packs.changing import changing_packs, folder_name, not_installed, staging_folder
from hippo_core.packs.disabled import turn_off
from hippo_core.packs.install import Confirm, refuse
from hippo_core.packs.lock import edited_files, read_lock, write_lock

if TYPE_CHECKING:
    from hippo_core.packs.lock import Locked
    from hippo_core.plugins.manager import PackSource
    from hippo_core.workspace.folder import Workspace


def remove(
    workspace: Workspace, name: str, *, force: bool = False, uninstall: Confirm = refuse
) -> list[str]:
    """Take the pack ``name`` out of this workspace; returns what was done, a line each.

    ``uninstall`` is asked whether pip should uninstall the distribution a pack runs from.
    """
    from hippo_core.plugins.manager import load_plugins

    folder_name(name)
    with changing_packs(workspace):
        locked = read_lock(workspace)
        entry = locked.get(name)
        folder = workspace.packs_dir / name
        present = os.path.lexists(folder)
        shipped = load_plugins().packs().get(name)
        from_pip = shipped is not None and not shipped.plugin.first_party
        if not present and (entry is None or entry.origin == "distribution") and from_pip:
            assert shipped is not None
            return _from_distribution(workspace, shipped, locked, uninstall)
        if entry is None and not present:
            raise HippoError(not_installed(workspace, name, locked))
        if entry is not None and entry.origin == "distribution":
            write_lock(workspace, {n: e for n, e in locked.items() if n != name})
            return [
                f"removed {name} {entry.version} from the lock file ({entry.source} is not "
                "installed here)"
            ]
        return [_folder(workspace, name, entry, locked, present, force)]


def _from_distribution(
    workspace: Workspace, shipped: PackSource, locked: dict[str, Locked], uninstall: Confirm
) -> list[str]:
    from hippo_core.packs import wheels

    name = shipped.name
    dist, version = shipped.plugin.distribution, shipped.plugin.version
    turn_off(workspace, name)
    recorded = name in locked
    if recorded:
        write_lock(workspace, {n: e for n, e in locked.items() if n != name})
    settings = workspace.relative(workspace.settings_path)
    lines = [
        f"{name} no longer runs here: "
        + ("dropped from the lock file and " if recorded else "")
        + f"turned off in {settings} (disabled_packs)"
    ]
    if uninstall(f"uninstall {dist} {version} from this environment too (every workspace)?"):
        wheels.uninstall(dist)
        lines.append(f"uninstalled {dist} {version}")
    else:
        command = " ".join(wheels.pip_command("uninstall", dist))
        lines.append(
            f"{dist} {version} is still installed for every workspace of this environment; "
            f"to uninstall it: hippo pack remove {name} --uninstall (or {command})"
        )
    return lines


def _folder(
    workspace: Workspace,
    name: str,
    entry: Locked | None,
    locked: dict[str, Locked],
    present: bool,
    force: bool,
) -> str:
    folder = workspace.packs_dir / name
    rest = {other: value for other, value in locked.items() if other != name}
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
