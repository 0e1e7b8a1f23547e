"""Which packs run in a workspace, and which do not and why: one bad pack never stops the
others.

:func:`load_here` surveys the packs (:mod:`hippo_core.packs.survey`), loads each one's
passes (:mod:`hippo_core.dream.packs`), leaves out a pack whose files are refused or whose
pass names another pack has, and names every pack the lock file records that is not here.
A dream runs what is left and says what was left out, in its report's first lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.dream.packs import Pack, PackError, load_found, sorted_passes

if TYPE_CHECKING:
    from hippo_core.dream.model import Pass
    from hippo_core.packs.lock import Locked
    from hippo_core.packs.survey import Found, LeftOut, Survey
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


@dataclass(frozen=True)
class Loaded:
    """The packs that run here, and what is here or recorded but does not run."""

    packs: list[Pack]
    """Sorted by name, each checked entirely, themes applied."""
    left_out: list[LeftOut]
    """Packs refused (a bad file, a pass name another pack has, a broken theme over it, a
    distribution that failed), and packs the lock file records that are not here."""
    off: list[str]
    """Packs here that ``disabled_packs`` turns off."""
    warnings: list[str]
    """What runs, but not as the lock file says (another version of a distribution)."""
    here: Survey
    """What the survey found: every theme, those on, the ``themes`` setting's problems."""

    def passes(self) -> list[Pass]:
        return sorted_passes(self.packs)


def load_here(
    workspace: Workspace, plugins: Plugins, *, only: str | None = None, strict: bool = True
) -> Loaded:
    """Every pack that runs here, and every one left out with why: one bad pack never
    stops the others.

    ``only`` keeps the pass whose file name it is (and the pack holding it); raises
    :class:`UsageError` when no pass has that name and a :class:`HippoError` when the pack
    that has it is left out. Raises :class:`PackError` for what no pack can run without:
    ``.hippo/packs`` being a link and, when ``strict``, a ``themes`` setting naming no
    theme here (not strict, the survey keeps that problem).
    """
    from hippo_core.packs.lock import read_lock
    from hippo_core.packs.survey import LeftOut, disable_hint, survey

    readers, reviewers = sorted(plugins.readers()), sorted(plugins.reviewers())
    try:
        here = survey(workspace, plugins, strict=strict)
    except PackError as error:
        raise error.shown_in(workspace) from None
    lock = read_lock(workspace)
    left = list(here.left_out)
    packs = []
    for found in here.packs:
        themes = tuple(t.name for t in here.themes_over(found.name))
        try:
            packs.append(load_found(found, readers, reviewers, here.overlays(found.name), themes))
        except PackError as error:
            problem = str(error.shown_in(workspace))
            fix = disable_hint(workspace, found.name, found.source)
            left.append(
                LeftOut(found.name, found.source, problem, fix, found.name in lock, found.root)
            )
    packs = _without_twins(workspace, packs, left, lock)
    named = {p.name for p in packs} | {t.name for t in here.themes} | set(here.off)
    named |= {item.name for item in left} | set(workspace.settings.disabled_packs)
    for name, entry in sorted(lock.items()):
        if name not in named:
            why = _missing(workspace, plugins, entry)
            left.append(LeftOut(name, "packs.lock", why, "run: hippo pack sync", True))
    drift = _drift(workspace, packs, here.themes, lock)
    loaded = Loaded(packs, left, list(here.off), drift, here)
    return loaded if only is None else _only_pass(loaded, only)


def load_packs(workspace: Workspace, plugins: Plugins, *, only: str | None = None) -> list[Pack]:
    """Every pack that runs here, sorted by name, each checked entirely (themes applied);
    a pack with a problem is left out (:func:`load_here` says
    which, and why), and the others run.

    ``only`` keeps the pass whose file name it is (and the pack holding it); raises
    :class:`UsageError` when no pass has that name.
    """
    return load_here(workspace, plugins, only=only).packs


def load_passes(workspace: Workspace, plugins: Plugins, *, only: str | None = None) -> list[Pass]:
    """Every pass of every pack that runs here, in the order of ``<pack>/<name>``."""
    return sorted_passes(load_packs(workspace, plugins, only=only))


def _only_pass(loaded: Loaded, name: str) -> Loaded:
    kept = [_only(pack, name) for pack in loaded.packs]
    if any(pack.passes for pack in kept):
        kept = [p for p in kept if p.passes]
        return Loaded(kept, loaded.left_out, loaded.off, loaded.warnings, loaded.here)
    for item in loaded.left_out:
        if item.root is not None and (item.root / "passes" / f"{name}.toml").is_file():
            raise HippoError(f"the pass '{name}' does not run here: {item.line()}")
    known = ", ".join(p.key for p in loaded.passes()) or "none"
    raise UsageError(f"no pass named '{name}'; the passes here are: {known}")


def _only(pack: Pack, name: str) -> Pack:
    passes = tuple(p for p in pack.passes if p.name == name)
    return Pack(pack.name, pack.root, pack.source, passes, pack.manifest, pack.themes)


def _without_twins(
    workspace: Workspace, packs: list[Pack], left: list[LeftOut], lock: dict[str, Locked]
) -> list[Pack]:
    """The packs whose pass names no pack before them has: the workspace's folders first,
    then distributions', each by name (``--pass`` chooses by file name, so a name is
    used once over all the packs here). A later pack with a taken name is left out."""
    from hippo_core.packs.survey import LeftOut, disable_hint

    taken: dict[str, Pass] = {}
    kept = []
    for pack in sorted(packs, key=lambda p: (p.source != "workspace", p.name)):
        twin = next((p for p in pack.passes if p.name in taken), None)
        if twin is None:
            kept.append(pack)
            taken.update((p.name, p) for p in pack.passes)
            continue
        other = taken[twin.name]
        problem = (
            f"{workspace.relative(twin.file)}: pack '{other.pack}' has a pass named "
            f"'{twin.name}' too ({workspace.relative(other.file)}); pass names must be unique"
        )
        fix = disable_hint(workspace, pack.name, pack.source)
        left.append(LeftOut(pack.name, pack.source, problem, fix, pack.name in lock, pack.root))
    return sorted(kept, key=lambda p: p.name)


def _missing(workspace: Workspace, plugins: Plugins, entry: Locked) -> str:
    """Why a pack the lock file records is not here, in a few words."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.utils import canonicalize_name

    if entry.origin != "distribution":
        return f"its folder {workspace.relative(workspace.packs_dir / entry.name)}/ is missing"
    dist = entry.distribution
    wanted = canonicalize_name(dist)
    for broken in plugins.broken:
        if canonicalize_name(broken.distribution) == wanted:
            return f"the plugin of {dist} failed to load: {broken.error}"
    try:
        installed = version(dist)
    except PackageNotFoundError:
        return f"{dist} is not installed in this environment"
    loaded = any(canonicalize_name(o.distribution) == wanted for o in plugins.origins.values())
    if not loaded:
        return f"{dist} {installed} is installed, but HIPPO_LOAD_PLUGINS leaves its plugin out"
    return (
        f"{dist} {installed} is installed, but no plugin of it registers a pack named "
        f"'{entry.name}'"
    )


def _drift(
    workspace: Workspace, packs: list[Pack], themes: tuple[Found, ...], lock: dict[str, Locked]
) -> list[str]:
    """A pack from a distribution whose version here is not the one the lock records."""
    from packaging.version import InvalidVersion, Version

    shown = workspace.relative(workspace.hippo_dir / "packs.lock")
    lines = []
    running = [(p.name, p.source, p.manifest.version if p.manifest else "") for p in packs]
    running += [(t.name, t.source, t.version) for t in themes]
    for name, source, here in running:
        entry = lock.get(name)
        if entry is None or entry.origin != "distribution" or not here or source == "workspace":
            continue
        try:
            same = Version(here) == Version(entry.version)
        except InvalidVersion:
            same = here == entry.version
        if not same:
            lines.append(
                f"pack '{name}' runs {here} here ({source}); {shown} records "
                f"{entry.version}; run: hippo pack sync"
            )
    return lines
