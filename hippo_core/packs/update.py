"""``hippo pack update``: every registry fetched again, then the installed packs planned,
staged and checked, swapped in together, and those from a distribution upgraded by pip."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.errors import HippoError
from hippo_core.packs.changing import (
    changing_packs,
    folder_name,
    not_installed,
    rename_in,
    staging_folder,
)
from hippo_core.packs.index import SHIPPED_DISTRIBUTION, Index, Release
from hippo_core.packs.install import reloaded_plugins, run_pip
from hippo_core.packs.lock import Locked, edited_files, file_digests, read_lock, write_lock
from hippo_core.packs.manifest import read_manifest
from hippo_core.packs.registries import FIRST_PARTY, Say, configured, load_index, quiet, registry_at
from hippo_core.packs.vetting import check_installable, fetch_and_check
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.plugins import Plugins
    from hippo_core.workspace import Workspace


@dataclass
class _Plan:
    entry: Locked
    line: str = ""
    release: Release | None = None
    shipped: Path | None = None
    """hippo's folder of a builtin pack whose files changed."""
    pip: bool = False
    staged: Path | None = None
    new: Locked | None = None


def update(
    workspace: Workspace,
    name: str | None = None,
    *,
    force: bool = False,
    say: Say = quiet,
    done: Say = quiet,
) -> list[str]:
    """Fetch every registry again, then bring the packs of the lock file (or ``name``) up to
    date. ``done`` gets a line per pack as it is settled (``decisions 0.1.0 -> 0.2.0``);
    the lines are returned too.

    Folders are replaced together, after every new one was fetched and checked; packs
    that run from a distribution are upgraded by pip afterwards, one by one.
    """
    from hippo_core.plugins import load_plugins

    lines: list[str] = []

    def settled(line: str) -> None:
        lines.append(line)
        done(line)

    if name is not None:
        folder_name(name)
    with changing_packs(workspace):
        locked = read_lock(workspace)
        if name is not None and name not in locked:
            raise HippoError(not_installed(workspace, name, locked))
        chosen = [locked[name]] if name is not None else [locked[n] for n in sorted(locked)]
        indexes = _refresh(workspace, locked, say)
        plugins = load_plugins()
        plans = [_plan(workspace, plugins, entry, indexes, say) for entry in chosen]
        _refuse_edited(workspace, [p for p in plans if p.release or p.shipped], force, name)
        with staging_folder(workspace) as staging:
            for number, plan in enumerate(plans):
                _stage(workspace, plugins, plan, staging / str(number))
            _swap(workspace, locked, [p for p in plans if p.new is not None], staging)
        for plan in plans:
            if not plan.pip:
                settled(plan.line)
        for plan in plans:
            if plan.pip:
                settled(_pip_update(workspace, plan.entry))
    return lines


def _refresh(workspace: Workspace, locked: dict[str, Locked], say: Say) -> dict[str, Index]:
    """Every registry fetched again, by label: the configured ones and those the lock names."""
    registries = configured(workspace.settings, workspace.root)
    for entry in locked.values():
        if entry.origin != "registry" or not entry.registry:
            continue
        if entry.registry not in {r.label for r in registries}:
            registries.append(registry_at(entry.registry, workspace.root, what="packs.lock"))
    return {r.label: load_index(r, refresh=True, say=say) for r in registries}


def _plan(
    workspace: Workspace,
    plugins: Plugins,
    entry: Locked,
    indexes: dict[str, Index],
    say: Say,
) -> _Plan:
    now = f"{entry.name} {entry.version}"
    if entry.origin == "vendored":
        return _Plan(entry, f"{now} vendored from {entry.source}; update it with hippo pack vendor")
    if entry.origin == "distribution":
        return _Plan(entry, pip=True)
    if entry.origin == "builtin":
        source = plugins.packs().get(entry.name)
        if source is None or not source.plugin.first_party:
            say(f"warning: hippo {__version__} no longer ships {entry.name}; it was left as it is")
            return _Plan(entry, f"{now} left as it is")
        if _shipped_digests(source.directory) == entry.files:
            return _Plan(entry, f"{now} up to date")
        return _Plan(entry, shipped=source.directory)
    index = indexes.get(entry.registry or FIRST_PARTY)
    pack = index.packs.get(entry.name) if index else None
    if pack is None:
        say(f"warning: {entry.name} is no longer in registry {entry.registry}; left as it is")
        return _Plan(entry, f"{now} left as it is")
    current = pack.find(entry.version)
    if current is not None and current.yanked:
        say(f"warning: {current.label}, installed here, was yanked: {current.yanked}")
    newest = pack.newest(__version__)
    from packaging.version import Version

    if newest is None or newest.parsed <= Version(entry.version):
        return _Plan(entry, f"{now} up to date")
    return _Plan(entry, release=newest)


def _shipped_digests(directory: Path) -> dict[str, str]:
    digests = file_digests(directory)
    return {
        rel: digest
        for rel, digest in digests.items()
        if not any(part.startswith(".") for part in rel.split("/"))
    }


def _refuse_edited(workspace: Workspace, plans: list[_Plan], force: bool, name: str | None) -> None:
    if force:
        return
    refusals = []
    for plan in plans:
        edits = edited_files(workspace.packs_dir / plan.entry.name, plan.entry)
        if edits:
            refusals.append(f"{plan.entry.name} ({', '.join(edits)})")
    if refusals:
        command = f"hippo pack update {name} --force" if name else "hippo pack update --force"
        raise HippoError(
            f"edited since they were installed: {'; '.join(refusals)}; nothing was updated; "
            f"to replace them, losing the edits: {command}"
        )


def _stage(workspace: Workspace, plugins: Plugins, plan: _Plan, staging: Path) -> None:
    """Put the new folder of ``plan`` in ``staging``, checked, with its lock entry."""
    from hippo_core.packs.vendor import copy_pack

    entry = plan.entry
    if plan.release is not None:
        staging.mkdir()
        root, new = fetch_and_check(workspace, plugins, plan.release, staging)
        plan.staged, plan.new = root, new
        plan.line = f"{entry.name} {entry.version} -> {plan.release.version}"
    elif plan.shipped is not None:
        manifest = read_manifest(plan.shipped)
        version = manifest.version if manifest else entry.version
        check_installable(plan.shipped, plugins, entry.name, version, then="nothing was updated")
        copy_pack(plan.shipped, staging / "pack", workspace)
        plan.staged = staging / "pack"
        plan.new = Locked(
            name=entry.name,
            version=version,
            origin="builtin",
            source=f"{SHIPPED_DISTRIBUTION} {__version__}",
            registry=entry.registry,
        ).with_files(plan.staged)
        changed = "" if version != entry.version else " (hippo's copy changed)"
        plan.line = f"{entry.name} {entry.version} -> {version}{changed}"


def _swap(
    workspace: Workspace, locked: dict[str, Locked], plans: list[_Plan], staging: Path
) -> None:
    """Rename each staged folder into place, then write the lock; all undone on a failure."""
    done: list[tuple[Path, Path | None, Path]] = []
    try:
        for plan in plans:
            assert plan.staged is not None and plan.new is not None
            target = workspace.packs_dir / plan.entry.name
            old: Path | None = None
            if os.path.lexists(target):
                old = staging / f"old-{plan.entry.name}"
                os.rename(target, old)
            try:
                rename_in(plan.staged, target)
            except BaseException:
                if old is not None:
                    os.rename(old, target)
                raise
            done.append((target, old, plan.staged))
        if plans:
            new = {plan.entry.name: plan.new for plan in plans if plan.new is not None}
            write_lock(workspace, {**locked, **new})
    except BaseException:
        for target, old, staged in reversed(done):
            os.rename(target, staged)
            if old is not None:
                os.rename(old, target)
        raise


def _pip_update(workspace: Workspace, entry: Locked) -> str:
    before = f"{entry.name} {entry.version}"
    if not entry.requirement:
        return f"{before} runs from {entry.source}; no requirement recorded to update it with"
    run_pip(["install", "-U", entry.requirement])
    source = reloaded_plugins().packs().get(entry.name)
    if source is None or source.plugin.first_party:
        raise HippoError(
            f"after pip install -U {entry.requirement}, no plugin registers a pack named "
            f"'{entry.name}'"
        )
    manifest = read_manifest(source.directory)
    version = manifest.version if manifest else entry.version
    dist = f"{source.plugin.distribution} {source.plugin.version}".strip()
    from dataclasses import replace

    locked = read_lock(workspace)
    locked[entry.name] = replace(entry, version=version, source=dist)
    write_lock(workspace, locked)
    return f"{before} up to date" if version == entry.version else f"{before} -> {version}"
