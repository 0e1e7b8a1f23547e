"""``hippo pack sync``: make this workspace and environment match ``.hippo/packs.lock``.

The lock file is the team's contract. For each pack it records, sync makes it here as
recorded, and changes nothing else (the lock file least of all, as ``npm ci`` leaves
``package-lock.json``):

- a pack that runs from a distribution: pip installs the locked version, its wheel's
  SHA-256 checked against the lock's, into the environment hippo runs in (a pipx one too);
  one installed at that version already is left as it is;
- a folder that is missing: an archive fetched again and checked against the lock's
  SHA-256, or hippo's own copy when it has the files the lock records; a vendored copy
  comes back from git. A folder that is there is the team's, edits and all.

A pack that cannot be made as recorded is one line, and the others are synced all the same.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.packs.changing import changing_packs, rename_in, staging_folder
from hippo_core.packs.lock import Locked, edited_files, file_digests, read_lock
from hippo_core.packs.registries import Say, quiet

if TYPE_CHECKING:
    from hippo_core.packs.index import Release
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


def sync(
    workspace: Workspace, *, say: Say = quiet, done: Say = quiet
) -> tuple[list[str], list[str]]:
    """Install what the lock file records and is not here. Returns a line per pack (also
    given to ``done`` as each is settled) and the problems, a line each."""
    from hippo_core.plugins.manager import load_plugins

    lines: list[str] = []
    problems: list[str] = []
    with changing_packs(workspace):
        locked = read_lock(workspace)
        plugins = load_plugins()
        with staging_folder(workspace) as staging:
            for number, name in enumerate(sorted(locked)):
                entry = locked[name]
                try:
                    line = _one(workspace, plugins, entry, staging / str(number), say)
                except HippoError as error:
                    problems.append(f"{name} {entry.version}: {error}")
                    continue
                lines.append(line)
                done(line)
    return lines, problems


def _one(workspace: Workspace, plugins: Plugins, entry: Locked, staging: Path, say: Say) -> str:
    from hippo_core.packs.distributions import install_locked

    staging.mkdir()
    now = f"{entry.name} {entry.version}"
    if entry.origin == "distribution":
        line = install_locked(workspace, plugins, entry, staging, say).line
        off = entry.name in workspace.settings.disabled_packs
        return line + (" (off here: disabled_packs)" if off else "")
    folder = workspace.packs_dir / entry.name
    shown = workspace.relative(folder) + "/"
    if os.path.isdir(folder):
        edits = edited_files(folder, entry)
        return f"{now} ok ({shown}" + (f", edited since: {', '.join(edits)})" if edits else ")")
    if os.path.lexists(folder):
        raise HippoError(f"{shown} is not a folder; move it away and run hippo pack sync again")
    if entry.origin == "vendored":
        raise HippoError(
            f"{shown} is missing; it was vendored from {entry.source}: restore it from git "
            f"(git checkout -- {shown}) or copy it again (hippo pack vendor {entry.name})"
        )
    if entry.origin == "builtin":
        root = _shipped(workspace, plugins, entry, staging)
        how = "copied from hippo"
    else:
        root = _fetched(workspace, plugins, entry, staging)
        how = "fetched, sha256 checked"
    rename_in(root, folder)
    return f"{now} {how} ({shown})"


def _shipped(workspace: Workspace, plugins: Plugins, entry: Locked, staging: Path) -> Path:
    from hippo_core.packs.vendor import copy_pack
    from hippo_core.version import __version__

    source = plugins.packs().get(entry.name)
    if source is None or not source.plugin.first_party:
        raise HippoError(f"hippo {__version__} does not ship {entry.name}; restore it from git")
    copy = staging / "pack"
    copy_pack(source.directory, copy, workspace)
    if entry.files and file_digests(copy) != entry.files:
        raise HippoError(
            f"hippo {__version__} ships other files for {entry.name} than the lock file "
            f"records; restore the folder from git, or take hippo's: hippo pack update "
            f"{entry.name}"
        )
    return copy


def _fetched(workspace: Workspace, plugins: Plugins, entry: Locked, staging: Path) -> Path:
    from hippo_core.packs.vetting import fetch_and_check

    root, _ = fetch_and_check(workspace, plugins, _release(workspace, entry), staging)
    return root


def _release(workspace: Workspace, entry: Locked) -> Release:
    """The release a registry lock entry records, its archive where the lock says."""
    from hippo_core.packs.archive import is_url
    from hippo_core.packs.index import Registry, Release
    from hippo_core.packs.registries import registry_at

    if not entry.archive or not entry.sha256:
        raise HippoError(
            f"the lock file records no archive and sha256 for {entry.name}; add it again: "
            f"hippo pack remove {entry.name}, then hippo pack add {entry.name}"
        )
    registry = (
        registry_at(entry.registry, workspace.root, what="packs.lock")
        if entry.registry
        else Registry("packs.lock", str(workspace.hippo_dir / "packs.lock"))
    )
    location = entry.archive
    if not is_url(location) and (workspace.root / location).is_file():
        location = str(workspace.root / location)  # the lock keeps it relative to here
    return Release(
        name=entry.name,
        version=entry.version,
        hippo="",
        passes=(),
        overlays="",
        yanked="",
        distribution="",
        archive=location,
        sha256=entry.sha256,
        registry=registry,
    )
