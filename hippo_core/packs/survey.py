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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.packs.files import NO_LINKS, PackError
from hippo_core.packs.manifest import MANIFEST, Manifest, read_manifest
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.plugins import PackSource, Plugins
    from hippo_core.workspace import Workspace

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
class Survey:
    """The packs (sorted by name), every installed theme, and the themes that are on."""

    packs: tuple[Found, ...]
    themes: tuple[Found, ...]
    active: tuple[Found, ...]
    problems: tuple[PackError, ...] = ()
    """What is wrong with the ``themes`` setting, when the survey was not strict."""

    def overlays(self, pack: str) -> tuple[Path, ...]:
        """The folders of the themes on over ``pack``, the one that wins first."""
        return tuple(t.root for t in reversed(self.active) if _target(t) == pack)

    def themes_over(self, pack: str) -> list[Found]:
        """The themes that are on over ``pack``, in the order they apply."""
        return [t for t in self.active if _target(t) == pack]


def _target(theme: Found) -> str:
    return theme.manifest.overlays if theme.manifest else ""


def survey(workspace: Workspace, plugins: Plugins, *, strict: bool = True) -> Survey:
    """Every pack and theme here, each ``pack.toml`` checked; raises :class:`PackError`.

    Not ``strict``, a theme that the settings name but that cannot be on is left off and
    its problem kept in :attr:`Survey.problems` (for listing what is here).
    """
    from hippo_core.packs.lock import read_lock

    vendored = {name for name, entry in read_lock(workspace).items() if entry.origin == "vendored"}
    found = [_found(name, root, source) for name, root, source in _folders(workspace, plugins)]
    _refuse_two_sources(workspace, found, vendored)
    local = {f.name for f in found if f.source == "workspace"}
    runs = {f.name: f for f in found if f.source == "workspace" or f.name not in local}
    ordered = sorted(runs.values(), key=lambda f: f.name)
    packs = tuple(f for f in ordered if not f.is_theme)
    themes = tuple(f for f in ordered if f.is_theme)
    problems: list[PackError] = []
    active: list[Found] = []
    for name in workspace.settings.themes:
        try:
            active.append(_active(workspace, name, runs, {p.name: p for p in packs}, active))
        except PackError as problem:
            if strict:
                raise
            problems.append(problem)
    return Survey(packs, themes, tuple(active), tuple(problems))


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


def check_requirements(manifest: Manifest, file: Path) -> None:
    """Refuse a pack that needs a newer hippo or a distribution that is not installed."""
    problem = manifest.missing_hippo(__version__)
    if problem:
        raise PackError(file, problem)
    missing = manifest.missing_distributions()
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


def _folders(workspace: Workspace, plugins: Plugins) -> Iterator[tuple[str, Path, str]]:
    """``(name, folder, source)`` of each pack: the workspace's, then distributions'."""
    folder = workspace.packs_dir
    if folder.is_symlink():
        raise PackError(folder.parent, f"{folder.name} {NO_LINKS}")
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                raise PackError(folder, f"{entry.name} {NO_LINKS}")
            if entry.is_dir():
                yield entry.name, entry, "workspace"
    for source in plugins.all_packs():
        if not source.plugin.first_party:
            yield source.name, *_distribution_folder(source)


def _distribution_folder(source: PackSource) -> tuple[Path, str]:
    origin = f"{source.plugin.distribution} {source.plugin.version}".strip()
    name, directory = source.name, source.directory
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        raise PackError(directory, f"{origin} registers a pack named '{name}'; not a folder name")
    if directory.is_symlink():
        raise PackError(directory, f"the pack folder of {origin} {NO_LINKS}")
    if not directory.is_dir():
        raise PackError(directory, f"the pack folder of {origin} does not exist")
    return directory, origin


def _refuse_two_sources(workspace: Workspace, found: list[Found], vendored: set[str]) -> None:
    by_name: dict[str, list[Found]] = {}
    for item in found:
        by_name.setdefault(item.name, []).append(item)
    for name, items in sorted(by_name.items()):
        if len(items) == 1:
            continue
        local = [i for i in items if i.source == "workspace"]
        elsewhere = [i for i in items if i.source != "workspace"]
        if len(elsewhere) > 1:
            shown = " and ".join(i.source for i in elsewhere)
            raise PackError(
                elsewhere[1].root,
                f"two distributions register a pack named '{name}': {shown}; "
                "uninstall one of them with pip",
            )
        if local and name not in vendored:
            folder = workspace.relative(local[0].root)
            dist = elsewhere[0].source
            raise PackError(
                local[0].root,
                f"pack '{name}' comes from two sources: {folder} and the distribution {dist}; "
                f"keep one: delete the folder (hippo pack remove {name}) or uninstall "
                f"{dist.split()[0]} with pip",
            )


def _active(
    workspace: Workspace,
    name: str,
    runs: dict[str, Found],
    packs: dict[str, Found],
    before: list[Found],
) -> Found:
    shown = workspace.relative(workspace.settings_path)
    if any(theme.name == name for theme in before):
        raise PackError(workspace.settings_path, f"themes: '{name}' is listed twice")
    theme = runs.get(name)
    if theme is None:
        import difflib

        installed = [f.name for f in runs.values() if f.is_theme]
        close = difflib.get_close_matches(name, installed, n=1, cutoff=0.6)
        fix = (
            f"did you mean '{close[0]}'?"
            if close
            else f"install it (hippo pack add {name}) or take it out of themes in {shown}"
        )
        raise PackError(workspace.settings_path, f"themes: '{name}' is not installed here; {fix}")
    if not theme.is_theme:
        raise PackError(
            workspace.settings_path,
            f"themes: '{name}' is a pack, not a theme (its pack.toml names no overlays)",
        )
    target = packs.get(_target(theme))
    if target is None:
        raise PackError(
            theme.root / MANIFEST,
            f"theme '{name}' overlays '{_target(theme)}', which is not installed here; "
            f"install it (hippo pack add {_target(theme)}) or take '{name}' out of themes",
        )
    theme_overrides(theme, target.root)
    return theme
