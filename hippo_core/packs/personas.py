"""Reviewer personas a theme replaces, each with the diff against the text it replaces.

A pass's reviewer persona (its ``reviewer`` key) is the system prompt of the model that
checks every change the pass proposes: the one semantic gate between a proposal and a note.
A theme may replace it with any text, so ``hippo pack add`` shows the diff when the theme
arrives and ``hippo doctor`` names each replacement while the theme is on.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hippo_core.packs.files import PackError

if TYPE_CHECKING:
    from pathlib import Path

    from hippo_core.packs.survey import Found
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


@dataclass(frozen=True)
class Replaced:
    """One reviewer persona of ``pack`` that the theme ``theme`` replaces."""

    theme: str
    pack: str
    path: str
    """The persona's path inside both packs: ``personas/verify-reviewer.md``."""
    passes: tuple[str, ...]
    """The passes of ``pack`` whose reviewer it is."""
    before: Path
    after: Path

    def diff(self) -> list[str]:
        """The unified diff from the pack's persona to the theme's, a line each."""
        import difflib

        return list(
            difflib.unified_diff(
                _lines(self.before),
                _lines(self.after),
                f"{self.pack}/{self.path}",
                f"{self.theme}/{self.path}",
                lineterm="",
            )
        )

    def counts(self) -> tuple[int, int]:
        """How many lines the theme adds and removes."""
        body = self.diff()[2:]
        added = sum(1 for line in body if line.startswith("+"))
        return added, sum(1 for line in body if line.startswith("-"))

    def summary(self) -> str:
        """One line: what is replaced, for which passes, and by how much."""
        added, removed = self.counts()
        passes = ", ".join(self.passes)
        return (
            f"theme {self.theme} replaces the reviewer persona {self.path} of {self.pack} "
            f"(the reviewer of {passes}): {added} line(s) added, {removed} removed"
        )


def reviewer_personas(pack_root: Path) -> dict[str, tuple[str, ...]]:
    """The files the passes of the pack at ``pack_root`` name as ``reviewer``, each with
    those passes' names. A pass file that cannot be read names nothing (the loader says
    what is wrong with it)."""
    named: dict[str, list[str]] = {}
    folder = pack_root / "passes"
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        try:
            reviewer = tomllib.loads(path.read_text(encoding="utf-8")).get("reviewer")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(reviewer, str) and reviewer:
            named.setdefault(reviewer, []).append(path.stem)
    return {rel: tuple(passes) for rel, passes in named.items()}


def replaced_by(theme: Found, pack: Found) -> list[Replaced]:
    """The reviewer personas of ``pack`` that ``theme`` has a file of its own for."""
    found = []
    for rel, passes in sorted(reviewer_personas(pack.root).items()):
        after = theme.root / rel
        if after.is_file() and (pack.root / rel).is_file():
            found.append(Replaced(theme.name, pack.name, rel, passes, pack.root / rel, after))
    return found


def replaced_here(
    workspace: Workspace, plugins: Plugins, theme: str | None = None
) -> list[Replaced]:
    """The reviewer personas the themes that are on replace, or, given ``theme``, the ones
    that theme replaces (on or not yet): empty when it overlays no pack here."""
    from hippo_core.packs.survey import survey

    try:
        here = survey(workspace, plugins, strict=False)
    except PackError:
        return []  # what is wrong is said by the command that needs the packs
    themes = [t for t in here.themes if t.name == theme] if theme else list(here.active)
    packs = {p.name: p for p in here.packs}
    found = []
    for each in themes:
        target = packs.get(each.manifest.overlays if each.manifest else "")
        if target is not None:
            found += replaced_by(each, target)
    return found


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError(path, f"cannot be read as UTF-8 text ({exc})") from None
