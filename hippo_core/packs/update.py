"""``hippo pack update [NAME[==VERSION]]``: every registry fetched again, then the installed
packs moved to the newest version that installs (or the one named).

Folders (archives, hippo's own packs) are staged and checked, then swapped in together; a
pack whose newest version is refused falls back to the newest one that is not, and one that
has none stays as it is, without stopping the others. Packs that run from a distribution
are moved one by one afterwards, through their wheels (:mod:`~hippo_core.packs.distributions`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.packs.changing import (
    changing_packs,
    folder_name,
    not_installed,
    rename_in,
    staging_folder,
)
from hippo_core.packs.index import SHIPPED_DISTRIBUTION, Index, IndexPack, Release
from hippo_core.packs.install import choose, parse_request
from hippo_core.packs.lock import Locked, edited_files, file_digests, read_lock, write_lock
from hippo_core.packs.manifest import read_manifest
from hippo_core.packs.registries import FIRST_PARTY, Say, configured, load_index, quiet, registry_at
from hippo_core.packs.vetting import check_installable, fetch_and_check
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


@dataclass
class _Plan:
    entry: Locked
    line: str = ""
    candidates: list[Release] = field(default_factory=list)
    """Versions to try, best first; the first that installs is taken."""
    named: bool = False
    """The version was named (``NAME==VERSION``): no other is tried."""
    shipped: Path | None = None
    """hippo's folder of a builtin pack whose files changed."""
    pip: bool = False
    staged: Path | None = None
    new: Locked | None = None


def update(
    workspace: Workspace,
    request: str | None = None,
    *,
    force: bool = False,
    say: Say = quiet,
    done: Say = quiet,
) -> list[str]:
    """Fetch every registry again, then bring the packs of the lock file (or the one
    ``request`` names, ``NAME`` or ``NAME==VERSION``) up to date. ``done`` gets a line per
    pack as it is settled (``decisions 0.1.0 -> 0.2.0``); the lines are returned too.
    """
    from hippo_core.plugins.manager import load_plugins

    lines: list[str] = []

    def settled(line: str) -> None:
        lines.append(line)
        done(line)

    name, wanted = (None, None) if request is None else _request(request)
    with changing_packs(workspace):
        locked = read_lock(workspace)
        if name is not None and name not in locked:
            raise HippoError(not_installed(workspace, name, locked))
        chosen = [locked[name]] if name is not None else [locked[n] for n in sorted(locked)]
        indexes = _refresh(workspace, locked, say)
        plugins = load_plugins()
        plans = [_plan(workspace, plugins, entry, indexes, wanted, say) for entry in chosen]
        folders = [p for p in plans if not p.pip]
        _refuse_edited(workspace, [p for p in folders if p.candidates or p.shipped], force, name)
        with staging_folder(workspace) as staging:
            for number, plan in enumerate(folders):
                _stage(workspace, plugins, plan, staging / str(number), say)
            _swap(workspace, locked, [p for p in folders if p.new is not None], staging)
            for plan in folders:
                settled(plan.line)
            for number, plan in enumerate(p for p in plans if p.pip):
                settled(_pip_update(workspace, plugins, plan, staging / f"pip-{number}", say))
    return lines


def _request(text: str) -> tuple[str, str | None]:
    folder_name(text.partition("==")[0].strip())  # one that leaves .hippo/packs/: refused
    return parse_request(text)


def _refresh(workspace: Workspace, locked: dict[str, Locked], say: Say) -> dict[str, Index | str]:
    """Every registry fetched again, by label: the configured ones and those the lock names.

    A registry that cannot be read at all maps to why, in a few words, and the packs from
    it stay as they are; the others are updated all the same.
    """
    registries = configured(workspace.settings, workspace.root)
    for entry in locked.values():
        if entry.origin not in ("registry", "distribution") or not entry.registry:
            continue
        if entry.registry not in {r.label for r in registries}:
            try:
                registries.append(registry_at(entry.registry, workspace.root, what="packs.lock"))
            except HippoError as error:
                say(f"warning: {error}")
    found: dict[str, Index | str] = {}
    for registry in registries:
        try:
            found[registry.label] = load_index(registry, refresh=True, say=say)
        except HippoError as error:
            say(f"warning: {error}")
            found[registry.label] = str(error)
    return found


def _plan(
    workspace: Workspace,
    plugins: Plugins,
    entry: Locked,
    indexes: dict[str, Index | str],
    wanted: str | None,
    say: Say,
) -> _Plan:
    now = f"{entry.name} {entry.version}"
    if entry.origin == "vendored":
        return _Plan(entry, f"{now} vendored from {entry.source}; update it with hippo pack vendor")
    if entry.origin == "builtin":
        return _builtin(plugins, entry, wanted, say)
    pip = entry.origin == "distribution"
    index = indexes.get(entry.registry or FIRST_PARTY)
    if index is None and pip:
        return _Plan(entry, f"{now} runs from {entry.source}; no registry recorded to update it")
    if not isinstance(index, Index):
        return _Plan(entry, f"{now} left as it is (registry {entry.registry} cannot be read)")
    pack = index.packs.get(entry.name)
    if pack is None:
        say(f"warning: {entry.name} is no longer in registry {entry.registry}; left as it is")
        return _Plan(entry, f"{now} left as it is", pip=False)
    candidates = _candidates(pack, entry, wanted, say)
    if not candidates:
        return _Plan(entry, f"{now} up to date")
    return _Plan(entry, candidates=candidates, named=wanted is not None, pip=pip)


def _candidates(pack: IndexPack, entry: Locked, wanted: str | None, say: Say) -> list[Release]:
    """The versions to move to, best first: the one named, or every installable version
    newer than the one here (final releases before pre-releases)."""
    from packaging.version import Version

    if wanted is not None:
        release = choose(pack, wanted, say)
        return [] if release.parsed == Version(entry.version) else [release]
    current = pack.find(entry.version)
    if current is not None and current.yanked:
        say(f"warning: {current.label}, installed here, was yanked: {current.yanked}")
    newer = [r for r in pack.installable(__version__) if r.parsed > Version(entry.version)]
    finals = [r for r in newer if not r.parsed.is_prerelease]
    return finals + [r for r in newer if r.parsed.is_prerelease]


def _builtin(plugins: Plugins, entry: Locked, wanted: str | None, say: Say) -> _Plan:
    now = f"{entry.name} {entry.version}"
    source = plugins.packs().get(entry.name)
    if source is None or not source.plugin.first_party:
        say(f"warning: hippo {__version__} no longer ships {entry.name}; it was left as it is")
        return _Plan(entry, f"{now} left as it is")
    if wanted is not None:
        manifest = read_manifest(source.directory)
        if manifest is not None and manifest.version != wanted:
            raise HippoError(
                f"hippo {__version__} ships {entry.name} {manifest.version}, not {wanted}; "
                "a version of a pack that ships inside hippo comes with that hippo"
            )
    if _shipped_digests(source.directory) == entry.files:
        return _Plan(entry, f"{now} up to date")
    return _Plan(entry, shipped=source.directory)


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


def _stage(workspace: Workspace, plugins: Plugins, plan: _Plan, staging: Path, say: Say) -> None:
    """Put the new folder of ``plan`` in ``staging``, checked, with its lock entry: the
    first candidate that installs, or none (the pack stays, and the line says why)."""
    from hippo_core.packs.vendor import copy_pack

    entry = plan.entry
    if plan.shipped is not None:
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
        return
    refused: list[str] = []
    for number, release in enumerate(plan.candidates):
        folder = staging / str(number)
        folder.mkdir(parents=True)
        try:
            root, new = fetch_and_check(workspace, plugins, release, folder)
        except HippoError as error:
            if plan.named:
                raise
            refused.append(str(error))
            continue
        plan.staged, plan.new = root, new
        plan.line = f"{entry.name} {entry.version} -> {release.version}"
        break
    _say_refused(plan, refused, say)


def _say_refused(plan: _Plan, refused: list[str], say: Say) -> None:
    """Each newer version that could not be installed is a warning; the pack's line says
    what it is now."""
    now = f"{plan.entry.name} {plan.entry.version}"
    for problem in refused:
        say(f"warning: {problem}")
    if not plan.line:
        count = len(refused)
        versions = (
            "the newer version cannot" if count == 1 else f"none of the {count} newer versions can"
        )
        plan.line = f"{now} stays: {versions} be installed (warnings above say why)"


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


def _pip_update(
    workspace: Workspace, plugins: Plugins, plan: _Plan, staging: Path, say: Say
) -> str:
    """Move a pack that runs from a distribution to the first candidate that installs."""
    from hippo_core.packs.distributions import install_release

    entry = plan.entry
    if not plan.candidates:
        return plan.line
    refused: list[str] = []
    for number, release in enumerate(plan.candidates):
        folder = staging / str(number)
        folder.mkdir(parents=True)
        try:
            new = install_release(workspace, plugins, release, folder, previous=entry, say=say)
        except HippoError as error:
            if plan.named:
                raise
            refused.append(str(error))
            continue
        locked = read_lock(workspace)
        locked[entry.name] = replace(new, registry=entry.registry or new.registry)
        write_lock(workspace, locked)
        plan.line = f"{entry.name} {entry.version} -> {new.version}"
        break
    _say_refused(plan, refused, say)
    return plan.line
