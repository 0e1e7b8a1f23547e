"""Which packs and themes are here, where each came from, and which themes are on.

A workspace's packs are the folders under ``.hippo/packs/`` and the packs of installed
distributions (``hippo_register_packs`` from a plugin that is not hippo's own). A name comes
from one source: a folder and a distribution with the same name are refused, unless the lock
file records the folder as vendored from it (``hippo pack vendor``), in which case the folder
runs. hippo's own packs run only through a copy in the workspace, so editing it takes effect.

A theme is a pack whose ``pack.toml`` names the pack it ``overlays``; it has no passes, only
files under ``prompts/`` and ``personas/`` that replace the files at the same paths. The
themes that are on are the ``themes`` setting, in order; a later one wins on a file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.packs.files import NO_LINKS, PackError
from hippo_core.packs.manifest import MANIFEST, Manifest, read_manifest
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.packs.lock import Locked
    from hippo_core.plugins.manager import PackSource, Plugins
    from hippo_core.workspace.folder import Workspace

THEMED = ("prompts", "personas")
"""The folders whose files a theme may override."""


@dataclass(frozen=True)
class Found:
    """One pack or theme that is here, before its passes are read."""

    name: str
    root: Path
    source: str
    """``workspace``, or ``<distribution> <version>`` for a pack that runs from one."""
    manifest: Manifest | None

    @property
    def is_theme(self) -> bool:
        return self.manifest is not None and self.manifest.is_theme

    @property
    def version(self) -> str:
        return self.manifest.version if self.manifest else ""


@dataclass(frozen=True)
class LeftOut:
    """A pack or theme that is here but does not run, and why; the others run without it."""

    name: str
    source: str
    """Where it would run from: ``workspace``, ``<distribution> <version>``, or
    ``packs.lock`` for one the lock file records that is not here at all."""
    problem: str
    """One line, its paths as the workspace shows them."""
    fix: str = ""
    """What to run or do about it; empty when the problem says it."""
    locked: bool = False
    """The lock file records it: the team counts on it running."""
    root: Path | None = None
    """Its folder, when there is one."""

    def line(self) -> str:
        """``pack 'x' (hippo-pack-x 0.1.0) did not run: <problem>; <fix>``."""
        where = "" if self.source == "workspace" else f" ({self.source})"
        fix = f"; {self.fix}" if self.fix else ""
        return f"pack '{self.name}'{where} did not run: {self.problem}{fix}"


@dataclass(frozen=True)
class Survey:
    """The packs that can run (sorted by name), every installed theme, the themes that are
    on, and the packs left out: turned off by ``disabled_packs``, or refused."""

    packs: tuple[Found, ...]
    themes: tuple[Found, ...]
    active: tuple[Found, ...]
    problems: tuple[PackError, ...] = ()
    """What is wrong with the ``themes`` setting, when the survey was not strict."""
    left_out: tuple[LeftOut, ...] = ()
    off: tuple[str, ...] = ()
    """The names ``disabled_packs`` turned off that are here."""
    off_from: dict[str, str] = field(default_factory=dict)
    """Where each of ``off`` would run from: a folder, or ``<distribution> <version>``."""

    def overlays(self, pack: str) -> tuple[Path, ...]:
        """The folders of the themes on over ``pack``, the one that wins first."""
        return tuple(t.root for t in reversed(self.active) if _target(t) == pack)

    def themes_over(self, pack: str) -> list[Found]:
        """The themes that are on over ``pack``, in the order they apply."""
        return [t for t in self.active if _target(t) == pack]


def _target(theme: Found) -> str:
    return theme.manifest.overlays if theme.manifest else ""


def survey(workspace: Workspace, plugins: Plugins, *, strict: bool = True) -> Survey:
    """Every pack and theme here, each ``pack.toml`` checked.

    A pack with a problem (a bad ``pack.toml``, a folder that is a link, a name two sources
    give, a theme over it that is broken) is left out and said in :attr:`Survey.left_out`;
    the rest run. Raises :class:`PackError` only for ``.hippo/packs`` itself being a link
    and, when ``strict``, for a ``themes`` setting that names no theme here (not strict,
    that theme is left off and its problem kept in :attr:`Survey.problems`).
    """
    from hippo_core.packs.lock import read_lock

    lock = read_lock(workspace)
    disabled = set(workspace.settings.disabled_packs)
    left: list[LeftOut] = []
    off: list[str] = []
    found: list[Found] = []
    off_from: dict[str, str] = {}
    for name, root, source in _folders(workspace, plugins, left):
        if name in disabled:
            off.append(name)
            off_from[name] = workspace.relative(root) if source == "workspace" else source
            continue
        try:
            found.append(_found(name, root, source))
        except PackError as error:
            problem = str(error.shown_in(workspace))
            fix = disable_hint(workspace, name, source)
            left.append(LeftOut(name, source, problem, fix, name in lock, root))
    runs = _one_source(workspace, found, lock, left)
    ordered = sorted(runs.values(), key=lambda f: f.name)
    packs = {f.name: f for f in ordered if not f.is_theme}
    themes = tuple(f for f in ordered if f.is_theme)
    problems: list[PackError] = []
    active: list[Found] = []
    broken = {item.name for item in left}
    for name in workspace.settings.themes:
        if name in disabled:
            continue
        try:
            theme = _active(workspace, name, runs, packs, active, lock, broken)
        except PackError as refused:
            if strict:
                raise
            problems.append(refused)
            continue
        if _target(theme) not in packs:
            continue  # the pack it overlays is left out, and said so
        try:
            theme_overrides(theme, packs[_target(theme)].root)
        except PackError as error:
            # The pack does not run without the theme the team put over it.
            problem = str(error.shown_in(workspace))
            left.append(LeftOut(name, theme.source, problem, "", name in lock, theme.root))
            base = packs.pop(_target(theme))
            why = f"the theme '{name}' over it is broken: {problem}"
            left.append(LeftOut(base.name, base.source, why, "", base.name in lock, base.root))
            continue
        active.append(theme)
    kept = tuple(packs.values())
    return Survey(kept, themes, tuple(active), tuple(problems), tuple(left), tuple(off), off_from)


def disable_hint(workspace: Workspace, name: str, source: str) -> str:
    """For a pack a distribution ships: how to turn it off here (empty for a folder's)."""
    import json

    if source == "workspace":
        return ""
    names = [n for n in workspace.settings.disabled_packs if n != name] + [name]
    return (
        f"fix or uninstall {source.split()[0]}, or turn it off here: "
        f"hippo config set disabled_packs '{json.dumps(names)}'"
    )


def theme_overrides(theme: Found, target: Path) -> list[str]:
    """The paths a theme overrides, each checked to exist in the pack at ``target``."""
    passes = theme.root / "passes"
    if os.path.lexists(passes):
        raise PackError(theme.root, "a theme adds no passes; remove its passes/ folder")
    paths = []
    for folder in THEMED:
        top = theme.root / folder
        if top.is_symlink():
            raise PackError(theme.root, f"{folder} {NO_LINKS}")
        for path in sorted(top.rglob("*")) if top.is_dir() else []:
            rel = path.relative_to(theme.root).as_posix()
            if path.is_symlink():
                raise PackError(theme.root, f"{rel} {NO_LINKS}")
            if not path.is_file() or path.name.startswith("."):
                continue
            if not (target / rel).is_file():
                raise PackError(
                    path,
                    f"overrides {rel}, which pack '{_target(theme)}' does not have; a theme "
                    "may only replace files of the pack it overlays",
                )
            paths.append(rel)
    return paths


def check_requirements(
    manifest: Manifest, file: Path, present: frozenset[str] = frozenset()
) -> None:
    """Refuse a pack that needs a newer hippo or a distribution that is not installed
    (``present``: names taken as installed, such as the distribution being checked)."""
    problem = manifest.missing_hippo(__version__)
    if problem:
        raise PackError(file, problem)
    missing = manifest.missing_distributions(present)
    if missing:
        wanted = " ".join(f"'{text}'" for text in missing)
        raise PackError(
            file,
            f"needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
            f"installed; install with: pip install {wanted}",
        )


def _found(name: str, root: Path, source: str) -> Found:
    manifest = read_manifest(root)
    if manifest is not None:
        if manifest.name != name:
            raise PackError(
                root / MANIFEST,
                f"names the pack '{manifest.name}' but it is installed as '{name}'; "
                "make them the same",
            )
        check_requirements(manifest, root / MANIFEST)
    return Found(name, root, source, manifest)


def _folders(
    workspace: Workspace, plugins: Plugins, left: list[LeftOut]
) -> Iterator[tuple[str, Path, str]]:
    """``(name, folder, source)`` of each pack: the workspace's, then distributions'. A
    folder that is a link, or a distribution's pack that is no folder, goes to ``left``."""
    folder = workspace.packs_dir
    if folder.is_symlink():
        raise PackError(folder.parent, f"{folder.name} {NO_LINKS}")
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                problem = str(PackError(folder, f"{entry.name} {NO_LINKS}").shown_in(workspace))
                left.append(LeftOut(entry.name, "workspace", problem))
            elif entry.is_dir():
                yield entry.name, entry, "workspace"
    for source in plugins.all_packs():
        if source.plugin.first_party:
            continue
        origin = f"{source.plugin.distribution} {source.plugin.version}".strip()
        try:
            yield source.name, _distribution_folder(source, origin), origin
        except PackError as error:
            fix = disable_hint(workspace, source.name, origin)
            left.append(LeftOut(source.name, origin, str(error), fix))


def _distribution_folder(source: PackSource, origin: str) -> Path:
    name, directory = source.name, source.directory
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        raise PackError(directory, f"{origin} registers a pack named '{name}'; not a folder name")
    if directory.is_symlink():
        raise PackError(directory, f"the pack folder of {origin} {NO_LINKS}")
    if not directory.is_dir():
        raise PackError(directory, f"the pack folder of {origin} does not exist")
    return directory


def _one_source(
    workspace: Workspace, found: list[Found], lock: dict[str, Locked], left: list[LeftOut]
) -> dict[str, Found]:
    """One source for each name: the workspace's folder over a distribution's pack, the
    first distribution to register a name over later ones; those left out go to ``left``.

    A folder the lock file records as vendored from the distribution, or whose
    ``pack.toml`` requires it, is the copy meant to run: the distribution's is left out
    without a word.
    """
    runs: dict[str, Found] = {}
    for item in found:
        first = runs.get(item.name)
        if first is None:
            runs[item.name] = item
            continue
        local = first if first.source == "workspace" else None
        if local is None:
            problem = (
                f"{first.source} registers a pack named '{item.name}' too, and runs it; "
                f"uninstall one of them with pip"
            )
        elif _meant(local, item, lock):
            continue
        else:
            folder = workspace.relative(local.root)
            problem = (
                f"pack '{item.name}' comes from two sources: {folder} and the distribution "
                f"{item.source}; the folder runs here; keep one: delete the folder (hippo "
                f"pack remove {item.name}) or uninstall {item.source.split()[0]} with pip"
            )
        left.append(LeftOut(item.name, item.source, problem, root=item.root))
    return runs


def _meant(local: Found, shipped: Found, lock: dict[str, Locked]) -> bool:
    """Whether the folder is the copy of the distribution's pack meant to run here."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    entry = lock.get(local.name)
    if entry is not None and entry.origin == "vendored":
        return True
    dist = canonicalize_name(shipped.source.split()[0])
    requires = local.manifest.requires if local.manifest else ()
    return any(canonicalize_name(Requirement(text).name) == dist for text in requires)


def _active(
    workspace: Workspace,
    name: str,
    runs: dict[str, Found],
    packs: dict[str, Found],
    before: list[Found],
    lock: dict[str, Locked],
    broken: set[str],
) -> Found:
    shown = workspace.relative(workspace.settings_path)
    if any(theme.name == name for theme in before):
        raise PackError(workspace.settings_path, f"themes: '{name}' is listed twice")
    theme = runs.get(name)
    if theme is None:
        import difflib

        installed = [f.name for f in runs.values() if f.is_theme]
        close = difflib.get_close_matches(name, installed, n=1, cutoff=0.6)
        if close:
            fix = f"did you mean '{close[0]}'?"
        elif name in lock:
            fix = "packs.lock records it: hippo pack sync installs it; or take it out of themes"
        else:
            fix = f"install it (hippo pack add {name}) or take it out of themes in {shown}"
        raise PackError(workspace.settings_path, f"themes: '{name}' is not installed here; {fix}")
    if not theme.is_theme:
        raise PackError(
            workspace.settings_path,
            f"themes: '{name}' is a pack, not a theme (its pack.toml names no overlays)",
        )
    if _target(theme) not in packs and _target(theme) not in broken:
        raise PackError(
            theme.root / MANIFEST,
            f"theme '{name}' overlays '{_target(theme)}', which is not installed here; "
            f"install it (hippo pack add {_target(theme)}) or take '{name}' out of themes",
        )
    return theme
