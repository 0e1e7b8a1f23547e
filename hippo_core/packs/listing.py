"""``hippo pack list``: every pack and theme here, where it came from, whether the team edited
it since it was installed, its passes, the themes over it, and the packs that do not run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from hippo_core.packs.files import PackError

if TYPE_CHECKING:
    from pathlib import Path

    from hippo_core.packs.lock import Locked
    from hippo_core.packs.running import Loaded
    from hippo_core.packs.survey import Found, LeftOut
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


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
    """Why it does not run here, and what to do."""
    off: bool = False
    """``disabled_packs`` turns it off here."""
    note: str = ""
    """Something to know that stops nothing (a theme that is off and has no pack to go over)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_packs(workspace: Workspace, plugins: Plugins) -> tuple[list[Row], list[str]]:
    """A row for every pack and theme here, and every pack the lock file records that is not
    here, sorted by name; and the ``themes`` setting's problems (each one line).

    A pack that does not run (its files refused, a pass name another pack has, a pack the
    lock file records that is not installed) has its reason in ``error``.
    """
    from hippo_core.packs.lock import read_lock
    from hippo_core.packs.running import load_here

    try:
        loaded = load_here(workspace, plugins, strict=False)
    except PackError as error:
        raise error.shown_in(workspace) from None
    here = loaded.here
    lock = read_lock(workspace)
    running = {p.name for p in loaded.packs}
    found = {f.name: f for f in (*here.packs, *here.themes)}
    rows = [_pack_row(workspace, loaded, found, lock, pack) for pack in here.packs]
    rows += [_theme_row(workspace, loaded, theme, lock) for theme in here.themes]
    rows += [_left_row(workspace, item, lock) for item in loaded.left_out if item.name not in found]
    rows += [_off_row(name, here.off_from.get(name, ""), lock) for name in here.off]
    for index, row in enumerate(rows):
        for item in loaded.left_out:
            if item.name != row.name or item.name not in found:
                continue
            if row.name in running or (row.overlays and not row.error):
                # Another source of the same name, left out: the row's pack runs.
                rows[index] = row = replace(row, note=item.line())
            elif not row.error:
                rows[index] = row = replace(row, error=_why(item))
    problems = [str(problem.shown_in(workspace)) for problem in here.problems]
    return sorted(rows, key=lambda row: row.name), problems


def _why(item: LeftOut) -> str:
    return item.problem + (f"; {item.fix}" if item.fix else "")


def _pack_row(
    workspace: Workspace,
    loaded: Loaded,
    found: dict[str, Found],
    lock: dict[str, Locked],
    pack: Found,
) -> Row:
    ran = [p for p in loaded.packs if p.name == pack.name]
    themes = [t.name for t in loaded.here.themes_over(pack.name)]
    passes = sorted(p.name for p in ran[0].passes) if ran else []
    return Row(**_common(workspace, found[pack.name], lock), passes=passes, themes=themes)


def _theme_row(workspace: Workspace, loaded: Loaded, found: Found, lock: dict[str, Locked]) -> Row:
    from hippo_core.packs.survey import theme_overrides

    target = found.manifest.overlays if found.manifest else ""
    bases = {p.name: p.root for p in loaded.here.packs}
    bases |= {i.name: i.root for i in loaded.left_out if i.root is not None}
    active = found in loaded.here.active or found.name in workspace.settings.themes
    overrides: list[str] = []
    problem = ""
    try:
        if target not in bases:
            raise PackError(found.root, f"overlays '{target}', which is not installed here")
        overrides = theme_overrides(found, bases[target])
    except PackError as exc:
        problem = str(exc.shown_in(workspace))
    # A theme that is off is not checked against its pack: what is wrong is a note.
    error, note = (problem, "") if active else ("", problem)
    return Row(
        **_common(workspace, found, lock),
        overlays=target,
        overrides=overrides,
        active=active,
        error=error,
        note=note,
    )


def _left_row(workspace: Workspace, item: LeftOut, lock: dict[str, Locked]) -> Row:
    entry = lock.get(item.name)
    version = _version_at(item.root) or (entry.version if entry else "")
    if item.source == "packs.lock" and entry is not None:
        source = entry.source
        installed = f"{entry.source} ({entry.origin})"
    elif item.source == "workspace" and item.root is not None:
        source = workspace.relative(item.root)
        installed = f"{entry.source} ({entry.origin})" if entry else "not in packs.lock"
    else:
        source = item.source
        installed = entry.source if entry else f"pip ({item.source})"
    return Row(item.name, version, source, installed, None, error=_why(item))


def _off_row(name: str, source: str, lock: dict[str, Locked]) -> Row:
    entry = lock.get(name)
    installed = f"{entry.source} ({entry.origin})" if entry else "not in packs.lock"
    return Row(name, entry.version if entry else "", source, installed, None, off=True)


def _version_at(root: Path | None) -> str:
    from hippo_core.packs.manifest import read_manifest

    if root is None:
        return ""
    try:
        manifest = read_manifest(root)
    except PackError:
        return ""
    return manifest.version if manifest else ""


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
        if row.off:
            lines.append(f"{row.name}{version}  off here (disabled_packs); {row.source}")
            lines.append(f"  installed: {row.installed}")
            continue
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
        if row.note:
            lines.append(f"  note: {row.note}")
    return lines


def _edited(edited: list[str] | None) -> str:
    if edited is None:
        return "edits not tracked"
    if not edited:
        return "not edited since"
    return "edited since: " + ", ".join(edited)
