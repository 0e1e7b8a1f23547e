"""``hippo pack list``: every pack and theme here, where it came from, whether the team edited
it since it was installed, its passes, and the themes over it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from hippo_core.packs.files import PackError

if TYPE_CHECKING:
    from hippo_core.packs.lock import Locked
    from hippo_core.packs.survey import Found, Survey
    from hippo_core.plugins import Plugins
    from hippo_core.workspace import Workspace


@dataclass(frozen=True)
class Row:
    """One pack or theme as ``hippo pack list`` shows it."""

    name: str
    version: str
    source: str
    """``.hippo/packs/<name>`` or ``<distribution> <version>`` (it runs from there)."""
    installed: str
    """How it arrived, from the lock file: ``hippo-memory 0.1.0 (builtin)``, ``registry ...``,
    or ``not in packs.lock`` for a folder the team wrote."""
    edited: list[str] | None
    """``M path``/``A path``/``D path`` since it was installed; None when unknown."""
    passes: list[str] = field(default_factory=list)
    themes: list[str] = field(default_factory=list)
    """Packs: the themes on over it, in order. Themes: empty."""
    overlays: str = ""
    overrides: list[str] = field(default_factory=list)
    active: bool = False
    """Themes: whether ``themes`` in the settings turns it on."""
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_packs(workspace: Workspace, plugins: Plugins) -> tuple[list[Row], list[str]]:
    """A row for every pack and theme here, sorted by name, and the ``themes`` setting's
    problems (each one line).

    Raises :class:`PackError` when the packs here cannot be told apart (two sources for a
    name, a bad ``pack.toml``); a pack whose passes do not load gets its problem in
    ``error`` instead.
    """
    from hippo_core.packs.lock import read_lock
    from hippo_core.packs.survey import survey

    try:
        here = survey(workspace, plugins, strict=False)
    except PackError as error:
        raise error.shown_in(workspace) from None
    lock = read_lock(workspace)
    rows = [_pack_row(workspace, plugins, here, found, lock) for found in here.packs]
    rows += [_theme_row(workspace, here, found, lock) for found in here.themes]
    problems = [str(problem.shown_in(workspace)) for problem in here.problems]
    return sorted(rows, key=lambda row: row.name), problems


def _pack_row(
    workspace: Workspace, plugins: Plugins, here: Survey, found: Found, lock: dict[str, Locked]
) -> Row:
    from hippo_core.dream.packs import load_found

    themes = [t.name for t in here.themes_over(found.name)]
    passes: list[str] = []
    error = ""
    try:
        readers, reviewers = sorted(plugins.readers()), sorted(plugins.reviewers())
        pack = load_found(found, readers, reviewers, here.overlays(found.name), tuple(themes))
        passes = sorted(p.name for p in pack.passes)
    except PackError as exc:
        error = str(exc.shown_in(workspace))
    return Row(**_common(workspace, found, lock), passes=passes, themes=themes, error=error)


def _theme_row(workspace: Workspace, here: Survey, found: Found, lock: dict[str, Locked]) -> Row:
    from hippo_core.packs.survey import theme_overrides

    target = found.manifest.overlays if found.manifest else ""
    bases = {p.name: p for p in here.packs}
    overrides: list[str] = []
    error = ""
    try:
        if target not in bases:
            raise PackError(found.root, f"overlays '{target}', which is not installed here")
        overrides = theme_overrides(found, bases[target].root)
    except PackError as exc:
        error = str(exc.shown_in(workspace))
    return Row(
        **_common(workspace, found, lock),
        overlays=target,
        overrides=overrides,
        active=found in here.active,
        error=error,
    )


def _common(workspace: Workspace, found: Found, lock: dict[str, Locked]) -> dict[str, Any]:
    from hippo_core.packs.lock import edited_files

    entry = lock.get(found.name)
    local = found.source == "workspace"
    if not local:
        installed = entry.source if entry else f"pip ({found.source})"
        edited: list[str] | None = None
    elif entry is None:
        installed, edited = "not in packs.lock", None
    else:
        installed = f"{entry.source} ({entry.origin})"
        edited = edited_files(found.root, entry) if entry.files else None
    return {
        "name": found.name,
        "version": found.version,
        "source": workspace.relative(found.root) if local else found.source,
        "installed": installed,
        "edited": edited,
    }


def render(rows: list[Row]) -> list[str]:
    """The text of ``hippo pack list``: a line per pack, then indented details."""
    lines = []
    for row in rows:
        kind = (
            f"theme over {row.overlays}, {'on' if row.active else 'off'}; " if row.overlays else ""
        )
        version = f" {row.version}" if row.version else ""
        lines.append(f"{row.name}{version}  {kind}{row.source}")
        lines.append(f"  installed: {row.installed}; {_edited(row.edited)}")
        if not row.overlays:
            lines.append(f"  passes: {', '.join(row.passes) or 'none'}")
            if row.themes:
                lines.append(f"  themes: {', '.join(row.themes)}")
        elif row.overrides:
            lines.append(f"  overrides: {', '.join(row.overrides)}")
        if row.error:
            lines.append(f"  error: {row.error}")
    return lines


def _edited(edited: list[str] | None) -> str:
    if edited is None:
        return "edits not tracked"
    if not edited:
        return "not edited since"
    return "edited since: " + ", ".join(edited)
