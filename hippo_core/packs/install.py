"""``hippo pack add``: installing a pack from the registries.

A version arrives one of three ways, as the registry's ``source`` says:

- an archive: fetched, its SHA-256 checked against the registry's before anything else,
  unpacked into a folder inside ``.hippo/``, checked as the loader checks a pack, and only
  then renamed into ``.hippo/packs/NAME/``;
- ``hippo-memory``: the pack ships inside hippo; its folder is copied, as ``hippo init``
  copies core;
- another distribution: its wheel is fetched and checked, pip installs it, and the pack
  runs from there (:mod:`~hippo_core.packs.distributions`); it carries code, so hippo asks
  first.

Each records what it installed in ``.hippo/packs.lock``. A failure anywhere leaves
``.hippo/packs/`` and the lock file as they were. Searching, updating, syncing and removing
are in :mod:`~hippo_core.packs.search`, :mod:`~hippo_core.packs.update`,
:mod:`~hippo_core.packs.sync` and :mod:`~hippo_core.packs.remove`.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.distribution import upgrade_hint
from hippo_core.base.errors import HippoError, UsageError
from hippo_core.packs.archive import remove_tree
from hippo_core.packs.changing import changing_packs, rename_in, staging_folder
from hippo_core.packs.index import SHIPPED_DISTRIBUTION, IndexPack, Registry, Release
from hippo_core.packs.lock import Locked, lock_path, read_lock, write_lock
from hippo_core.packs.manifest import NAME_RULE, read_manifest
from hippo_core.packs.registries import Say, configured, load_index, quiet, registry_at
from hippo_core.packs.vetting import check_installable, fetch_and_check, refuse_twin_passes
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


@dataclass(frozen=True)
class Added:
    """What ``hippo pack add`` did."""

    entry: Locked
    release: Release
    theme: str = ""
    """The pack a theme overlays; empty for a pack."""
    where: str = ""
    """Where it runs from: ``.hippo/packs/NAME/`` or a distribution."""


def parse_request(text: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME==VERSION``; raises :class:`UsageError` for anything else."""
    from packaging.version import InvalidVersion, Version

    name, sep, version = text.partition("==")
    name = name.strip()
    if not NAME_RULE.match(name):
        raise UsageError(f"'{text}' is not a pack name (or NAME==VERSION)")
    if not sep:
        return name, None
    try:
        Version(version.strip())
    except InvalidVersion:
        raise UsageError(f"'{version}' is not a version like 0.1.0 (in '{text}')") from None
    return name, version.strip()


Confirm = Callable[[str], bool]
"""Asked before pip installs a pack's code: the question, then True to go on."""


def refuse(question: str) -> bool:
    """A :data:`Confirm` that never says yes (no terminal, no ``--yes``)."""
    return False


def add(
    workspace: Workspace,
    request: str,
    *,
    registry: str | None = None,
    say: Say = quiet,
    confirm: Confirm = refuse,
) -> Added:
    """Install the pack ``request`` names from the first registry listing it.

    A pack whose source is a distribution carries code: ``confirm`` is asked first, and
    without a yes nothing is installed.
    """
    from hippo_core.plugins.manager import load_plugins

    name, wanted = parse_request(request)
    with changing_packs(workspace):
        locked = read_lock(workspace)
        plugins = load_plugins()
        _refuse_installed(workspace, plugins, name, wanted, locked)
        pack = _find(workspace, name, registry, say)
        release = choose(pack, wanted, say)
        _refuse_other_source(workspace, plugins, release)
        if release.shipped:
            entry = _add_shipped(workspace, plugins, release, locked)
            where = workspace.relative(workspace.packs_dir / name) + "/"
        elif release.distribution:
            entry = _add_distribution(workspace, plugins, release, locked, say, confirm)
            where = f"the distribution {entry.source}"
        else:
            entry = _add_archive(workspace, plugins, release, locked)
            where = workspace.relative(workspace.packs_dir / name) + "/"
    manifest = read_manifest(_runs_from(workspace, entry))
    theme = manifest.overlays if manifest else release.overlays
    return Added(entry, release, theme, where)


def theme_hint(workspace: Workspace, name: str) -> str:
    """The command that turns the theme ``name`` on, keeping the themes already on."""
    themes = [theme for theme in workspace.settings.themes if theme != name] + [name]
    return f"hippo config set themes '{json.dumps(themes)}'"


def _refuse_installed(
    workspace: Workspace,
    plugins: Plugins,
    name: str,
    wanted: str | None,
    locked: dict[str, Locked],
) -> None:
    entry = locked.get(name)
    if entry is None:
        return
    shown = workspace.relative(lock_path(workspace))
    if not _here(workspace, plugins, entry):
        raise HippoError(
            f"{name} {entry.version} is recorded in {shown} but not installed here; "
            "install what the lock file records with: hippo pack sync"
        )
    if wanted is not None and parse_version(wanted) != parse_version(entry.version):
        hint = f"to change it to {wanted} run: hippo pack update {name}=={wanted}"
    else:
        hint = f"for a newer version run: hippo pack update {name}"
    raise HippoError(
        f"{name} {entry.version} is already installed here ({entry.origin}: {entry.source}); {hint}"
    )


def _here(workspace: Workspace, plugins: Plugins, entry: Locked) -> bool:
    """Whether the pack the lock ``entry`` records is installed here."""
    if entry.origin != "distribution":
        return os.path.isdir(workspace.packs_dir / entry.name)
    from packaging.utils import canonicalize_name

    source = plugins.packs().get(entry.name)
    return source is not None and canonicalize_name(
        source.plugin.distribution
    ) == canonicalize_name(entry.distribution)


def parse_version(text: str) -> object:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        return text


def _refuse_other_source(workspace: Workspace, plugins: Plugins, release: Release) -> None:
    """Refuse a pack whose name already runs here from somewhere the lock does not know."""
    name = release.name
    wanted = release.distribution or release.registry.resolve(release.archive)
    folder = workspace.packs_dir / name
    if os.path.lexists(folder):
        raise HippoError(
            f"a pack named '{name}' already runs here from {workspace.relative(folder)}/ "
            f"(not in the lock file), and registry {release.registry.label} has it from "
            f"{wanted}; remove or rename that folder first"
        )
    source = plugins.packs().get(name)
    if source is None or source.plugin.first_party:
        return
    dist = source.plugin.distribution
    if release.distribution and not release.shipped and _same_distribution(release, dist):
        return  # installed with pip already: adding it records it
    if release.archive:
        return  # a copy of that distribution's pack may be meant: _add_archive tells
    raise HippoError(
        f"a pack named '{name}' already runs here from the distribution {dist} "
        f"{source.plugin.version}, and registry {release.registry.label} has it from "
        f"{wanted}; to install that one, first: pip uninstall {dist}"
    )


def _refuse_shadowed(plugins: Plugins, release: Release, root: Path) -> None:
    """An archive of a pack a distribution here registers too: the folder runs instead
    only when its ``pack.toml`` requires that distribution (its own files, meant to run
    with its plugin); any other is refused, naming both."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    source = plugins.packs().get(release.name)
    if source is None or source.plugin.first_party:
        return
    dist = source.plugin.distribution
    manifest = read_manifest(root)
    required = (
        {canonicalize_name(Requirement(r).name) for r in manifest.requires} if manifest else set()
    )
    if canonicalize_name(dist) in required:
        return
    raise HippoError(
        f"a pack named '{release.name}' already runs here from the distribution {dist} "
        f"{source.plugin.version}, and registry {release.registry.label} has it from "
        f"{release.registry.resolve(release.archive)}; to install that one, first: "
        f"pip uninstall {dist}"
    )


def _same_distribution(release: Release, dist: str) -> bool:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return canonicalize_name(Requirement(release.distribution).name) == canonicalize_name(dist)


def _registries(workspace: Workspace, registry: str | None) -> list[Registry]:
    known = configured(workspace.settings, workspace.root)
    if registry is None:
        return known
    named = [r for r in known if registry in (r.label, r.location)]
    if named:
        return named[:1]
    chosen = registry_at(registry, Path.cwd(), what="--registry")
    if not chosen.is_url:
        # Recorded in the lock file relative to the workspace, as a teammate's clone has it.
        label = Path(os.path.relpath(chosen.location, workspace.root)).as_posix()
        chosen = Registry(label, chosen.location)
    return [chosen]


def _find(workspace: Workspace, name: str, registry: str | None, say: Say) -> IndexPack:
    """The pack ``name`` in the first registry that lists it; a registry that cannot be
    read is a warning, unless it is the one asked for."""
    registries = _registries(workspace, registry)
    names: list[str] = []
    unread: list[str] = []
    for one in registries:
        try:
            index = load_index(one, say=say)
        except HippoError as error:
            if registry is not None:
                raise
            say(f"warning: {error}")
            unread.append(one.label)
            continue
        if name in index.packs:
            return index.packs[name]
        names.extend(index.packs)
    where = ", ".join(r.label for r in registries if r.label not in unread)
    if unread:
        where += f"; {', '.join(unread)} cannot be read"
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    listing = "" if hint else "; hippo pack search lists what they have"
    raise HippoError(f"no pack named '{name}' in the registries ({where}){hint}{listing}")


def choose(pack: IndexPack, wanted: str | None, say: Say) -> Release:
    """The version ``wanted`` (yanked ones too, with a warning), or the newest installable."""
    if wanted is not None:
        release = pack.find(wanted)
        if release is None:
            versions = ", ".join(r.version for r in pack.releases)
            raise HippoError(
                f"{pack.name} has no version {wanted} in registry {pack.registry.label}; "
                f"it has: {versions}"
            )
        if not release.works_with(__version__):
            raise HippoError(
                f"{release.label} needs hippo {release.hippo}; this is hippo {__version__}; "
                f"upgrade hippo ({upgrade_hint()}) or choose another version"
            )
        if release.yanked:
            say(f"warning: {release.label} was yanked: {release.yanked}")
        return release
    release = pack.newest(__version__)
    if release is None:
        raise HippoError(_why_none(pack))
    return release


def _why_none(pack: IndexPack) -> str:
    live = [r for r in pack.releases if not r.yanked]
    if not live:
        return (
            f"every version of {pack.name} was yanked; name one to install it anyway "
            f"(hippo pack add {pack.name}=={pack.releases[0].version})"
        )
    newest = live[0]
    return (
        f"no version of {pack.name} works with hippo {__version__}: the newest, "
        f"{newest.version}, needs hippo {newest.hippo}; upgrade hippo ({upgrade_hint()})"
    )


def _add_archive(
    workspace: Workspace, plugins: Plugins, release: Release, locked: dict[str, Locked]
) -> Locked:
    with staging_folder(workspace) as staging:
        root, entry = fetch_and_check(workspace, plugins, release, staging)
        _refuse_shadowed(plugins, release, root)
        target = workspace.packs_dir / release.name
        rename_in(root, target)
        try:
            write_lock(workspace, {**locked, release.name: entry})
        except BaseException:
            os.rename(target, root)
            raise
    return entry


def _add_shipped(
    workspace: Workspace, plugins: Plugins, release: Release, locked: dict[str, Locked]
) -> Locked:
    from hippo_core.packs.vendor import copy_pack

    directory, version = _shipped(plugins, release)
    pack = check_installable(directory, plugins, release.name, version)
    refuse_twin_passes(workspace, plugins, pack, f"{release.name} {version}")
    target = workspace.packs_dir / release.name
    copy_pack(directory, target, workspace)
    try:
        entry = Locked(
            name=release.name,
            version=version,
            origin="builtin",
            source=f"{SHIPPED_DISTRIBUTION} {__version__}",
            registry=release.registry.label,
        ).with_files(target)
        write_lock(workspace, {**locked, release.name: entry})
    except BaseException:
        remove_tree(target)
        raise
    return entry


def _shipped(plugins: Plugins, release: Release) -> tuple[Path, str]:
    """The folder and version of the pack hippo ships for ``release``."""
    from packaging.requirements import Requirement

    requirement = Requirement(release.distribution)
    if not requirement.specifier.contains(__version__, prereleases=True):
        raise HippoError(
            f"{release.label} ships inside {release.distribution}; this is hippo "
            f"{__version__}; upgrade hippo ({upgrade_hint()})"
        )
    source = plugins.packs().get(release.name)
    if source is None or not source.plugin.first_party:
        raise HippoError(
            f"registry {release.registry.label} says {release.name} ships inside hippo, but "
            f"hippo {__version__} has no pack named '{release.name}'; upgrade hippo"
        )
    manifest = read_manifest(source.directory)
    version = manifest.version if manifest else release.version
    if manifest is not None and manifest.version != release.version:
        from packaging.version import Version

        if Version(manifest.version) != release.parsed:
            raise HippoError(
                f"hippo {__version__} ships {release.name} {manifest.version}, not "
                f"{release.version}; install {release.name}=={manifest.version}, or the "
                "hippo that ships the version you want"
            )
    return source.directory, version


def _add_distribution(
    workspace: Workspace,
    plugins: Plugins,
    release: Release,
    locked: dict[str, Locked],
    say: Say,
    confirm: Confirm,
) -> Locked:
    from hippo_core.packs.distributions import install_release
    from hippo_core.packs.wheels import pip_command

    command = " ".join([*pip_command("install"), f"'{release.distribution}'"])
    if not confirm(f"{release.label} carries code: {command}; go on?"):
        raise HippoError(
            f"{release.label} carries code, which pip would install: {command}; nothing was "
            f"installed; to install it: hippo pack add {release.name}=={release.version} --yes"
        )
    with staging_folder(workspace) as staging:
        entry = install_release(workspace, plugins, release, staging, say=say)
    from hippo_core.packs.disabled import turn_on

    turn_on(workspace, release.name)
    write_lock(workspace, {**locked, release.name: entry})
    return entry


def _runs_from(workspace: Workspace, entry: Locked) -> Path:
    if entry.origin == "distribution":
        from hippo_core.plugins.manager import load_plugins

        source = load_plugins().packs().get(entry.name)
        return source.directory if source else workspace.packs_dir / entry.name
    return workspace.packs_dir / entry.name
