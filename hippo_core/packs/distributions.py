"""Installing, updating and syncing a pack that runs from a distribution (it carries code).

Every install goes the same way (:func:`install_release`, :func:`install_locked`): the
wheel is downloaded, its SHA-256 compared with the one pinned (the registry's, or the lock
file's), the pack read from the wheel and checked against what was asked (its name and
version, pass names no other pack here has), and only then pip installs it. A fresh hippo
process then loads it as the loader would; when that fails, the version that was there
before is put back (or the new one uninstalled) and nothing is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.packs.lock import Locked
from hippo_core.packs.registries import Say, quiet

if TYPE_CHECKING:
    from hippo_core.packs.index import Release
    from hippo_core.packs.wheels import Installed, Wheel
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


@dataclass(frozen=True)
class Done:
    """A distribution's pack as now installed: its lock entry, and what was done in words."""

    entry: Locked
    line: str


def install_release(
    workspace: Workspace,
    plugins: Plugins,
    release: Release,
    staging: Path,
    *,
    previous: Locked | None = None,
    say: Say = quiet,
) -> Locked:
    """Install ``release`` (its source a distribution) and return its lock entry.

    ``previous`` is the lock entry of the version installed now (an update), put back when
    the new one fails its checks. Raises :class:`HippoError` with nothing recorded.
    """
    from hippo_core.packs import wheels

    label = release.label
    try:
        wheel = wheels.download(release.distribution, staging / "wheel", release.name)
    except HippoError as error:
        kept = _installed_as_asked(release, previous)
        if kept is None:
            raise HippoError(f"{label}: {error}") from None
        say(
            f"warning: {label}: its wheel cannot be fetched ({error}); it is installed "
            "here already, so the lock file records it without a sha256"
        )
        return kept
    if release.sha256 and wheel.sha256 != release.sha256:
        raise HippoError(
            f"{label}: the wheel's sha256 is {wheel.sha256}, the registry says "
            f"{release.sha256}; nothing was installed"
        )
    _check_wheel(workspace, plugins, wheel, release.name, release.version, label, say)
    installed = _install_and_probe(wheel, release.name, previous, label)
    return Locked(
        name=release.name,
        version=installed.version,
        origin="distribution",
        source=f"{installed.distribution} {installed.dist_version}",
        registry=release.registry.label,
        requirement=f"{installed.distribution}=={installed.dist_version}",
        wheel=wheel.path.name,
        sha256=wheel.sha256,
    )


def install_locked(
    workspace: Workspace, plugins: Plugins, entry: Locked, staging: Path, say: Say = quiet
) -> Done:
    """Make the distribution of the lock ``entry`` installed here at its locked version,
    its wheel's SHA-256 checked when the lock records one."""
    from hippo_core.packs import wheels

    dist = entry.distribution
    wanted = _pinned(entry)
    have = wheels.installed_version(dist)
    if have and wanted and _same(have, wanted) and _registers(plugins, entry.name, dist):
        return Done(entry, f"{entry.name} {entry.version} ok ({dist} {have})")
    requirement = f"{dist}=={wanted}" if wanted else entry.requirement
    if not requirement:
        raise HippoError(
            f"{entry.name}: the lock file records no requirement for {entry.source}; "
            f"add it again: hippo pack add {entry.name}"
        )
    wheel = wheels.download(requirement, staging / "wheel", entry.name)
    if entry.sha256 and wheel.sha256 != entry.sha256:
        raise HippoError(
            f"{entry.name} {entry.version}: the wheel's sha256 is {wheel.sha256}, "
            f"{workspace.relative(workspace.hippo_dir / 'packs.lock')} says {entry.sha256}; "
            "nothing was installed"
        )
    label = f"{entry.name} {entry.version}"
    _check_wheel(workspace, plugins, wheel, entry.name, entry.version, label, say)
    before = Locked(
        entry.name, have, "distribution", f"{dist} {have}", requirement=f"{dist}=={have}"
    )
    installed = _install_and_probe(wheel, entry.name, before if have else None, label)
    checked = "sha256 checked" if entry.sha256 else "no sha256 in the lock file to check"
    line = f"{entry.name} {entry.version} installed ({dist} {installed.dist_version}, {checked})"
    return Done(entry, line)


def _pinned(entry: Locked) -> str:
    """The one version the lock pins a distribution to (``x==1.2.0``); else its source's."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        specifiers = list(Requirement(entry.requirement).specifier) if entry.requirement else []
    except InvalidRequirement:
        specifiers = []
    if len(specifiers) == 1 and specifiers[0].operator == "==":
        return specifiers[0].version
    parts = entry.source.split()
    return parts[1] if len(parts) == 2 else ""


def _same(a: str, b: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _registers(plugins: Plugins, name: str, dist: str) -> bool:
    from packaging.utils import canonicalize_name

    source = plugins.packs().get(name)
    return source is not None and canonicalize_name(
        source.plugin.distribution
    ) == canonicalize_name(dist)


def _installed_as_asked(release: Release, previous: Locked | None) -> Locked | None:
    """The lock entry for ``release`` when its distribution is installed here already at a
    version the requirement accepts (pip installed it, maybe editable); else None."""
    from packaging.requirements import Requirement

    from hippo_core.packs import wheels

    if previous is not None:
        return None
    requirement = Requirement(release.distribution)
    have = wheels.installed_version(requirement.name)
    if not have or not requirement.specifier.contains(have, prereleases=True):
        return None
    installed = wheels.probe(release.name)
    return Locked(
        name=release.name,
        version=installed.version,
        origin="distribution",
        source=f"{installed.distribution} {installed.dist_version}",
        registry=release.registry.label,
        requirement=f"{installed.distribution}=={installed.dist_version}",
    )


def _check_wheel(
    workspace: Workspace,
    plugins: Plugins,
    wheel: Wheel,
    name: str,
    version: str,
    label: str,
    say: Say,
) -> None:
    """What can be checked before installing: the wheel holds the pack, of that version,
    for this hippo, with no pass name another pack here has."""
    from hippo_core.packs.vetting import refuse_twin_names
    from hippo_core.version import __version__

    where = f"{wheel.distribution} {wheel.version}"
    manifest = wheel.manifest
    if wheel.pack is None or manifest is None:
        raise HippoError(
            f"{label}: the wheel of {where} holds no pack named '{name}' (no pack.toml "
            "naming it); nothing was installed"
        )
    if not _same(manifest.version, version):
        raise HippoError(
            f"{label}: its pack.toml says {manifest.name} {manifest.version}, not what the "
            "registry lists; nothing was installed"
        )
    if not _same(manifest.version, wheel.version):
        say(
            f"warning: {where} ships {name} {manifest.version}: the versions of its "
            "pyproject.toml and pack.toml differ (hippo pack check tells its author)"
        )
    problem = manifest.missing_hippo(__version__)
    if problem:
        raise HippoError(f"{label}: {problem}; nothing was installed")
    passes = {path.stem for path in (wheel.pack / "passes").glob("*.toml")}
    refuse_twin_names(workspace, plugins, name, passes, label)


def _install_and_probe(wheel: Wheel, name: str, previous: Locked | None, label: str) -> Installed:
    """pip install the wheel, then check the pack in a fresh process; on a failed check put
    back ``previous`` (or, when nothing was there, uninstall the new one) and raise."""
    from hippo_core.packs import wheels

    wheels.install(wheel.path)
    try:
        return wheels.probe(name)
    except HippoError as error:
        undone = _undo(wheel, previous)
        raise HippoError(f"{label} is not a pack hippo can run: {error}; {undone}") from None


def _undo(wheel: Wheel, previous: Locked | None) -> str:
    from hippo_core.packs import wheels

    try:
        if previous is not None and previous.requirement:
            wheels.run_pip(["install", previous.requirement], then="")
            return f"{previous.requirement} was put back; nothing was recorded"
        wheels.uninstall(wheel.distribution)
        return f"{wheel.distribution} was uninstalled again; nothing was recorded"
    except HippoError as error:
        return f"putting things back failed too ({error}); nothing was recorded"
