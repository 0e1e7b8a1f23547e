"""``hippo doctor``'s checks of the packs as installed: what each theme that is on overrides,
and which packs were edited since they were installed.

Whether the packs load at all, and whether every pack the lock file records is here, is
dreaming's check.
"""

from __future__ import annotations

from hippo_core.base.errors import HippoError
from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from hippo_core.base.findings import Finding
    from hippo_core.workspace.folder import Workspace


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.findings import Finding
    from hippo_core.packs.files import PackError
    from hippo_core.packs.listing import list_packs
    from hippo_core.plugins.manager import load_plugins

    try:
        rows, _ = list_packs(workspace, load_plugins())
    except PackError:
        return []  # dreaming's check names it
    except HippoError as exc:
        return [Finding("error", "packs", str(exc))]
    findings = []
    replaced = _replaced(workspace)
    for row in rows:
        if row.overlays and row.active:
            overrides = ", ".join(row.overrides) or "nothing"
            detail = f"theme {row.name} over {row.overlays} overrides {overrides}"
            findings.append(Finding("info", "themes", detail))
            for persona in replaced.get(row.name, []):
                # hippo's own theme, as installed, is hippo's text; any other is a publisher's.
                own = row.installed.endswith("(builtin)") and row.edited == []
                findings.append(Finding("info" if own else "warning", "themes", persona))
        if row.edited:
            detail = f"{row.name} was edited since it was installed: {', '.join(row.edited)}"
            findings.append(Finding("info", "packs", detail))
        if not row.version and row.source.startswith(".hippo/"):
            detail = f"{row.source} has no pack.toml; write one (hippo pack new shows the keys)" + (
                ", or run `hippo init` to add core's" if row.name == "core" else ""
            )
            findings.append(Finding("warning", "packs", detail, row.source))
    return findings


def _replaced(workspace: Workspace) -> dict[str, list[str]]:
    """For each theme that is on, a line per reviewer persona it replaces, saying how to
    see the diff (a finding is one line; the diff is the theme's text, many lines)."""
    from hippo_core.packs.personas import replaced_here
    from hippo_core.plugins.manager import load_plugins

    found: dict[str, list[str]] = {}
    for replaced in replaced_here(workspace, load_plugins()):
        see = f"diff -u {_shown(workspace, replaced.before)} {_shown(workspace, replaced.after)}"
        found.setdefault(replaced.theme, []).append(f"{replaced.summary()}; see the diff: {see}")
    return found


def _shown(workspace: Workspace, path: Path) -> str:
    import shlex

    return shlex.quote(workspace.relative(path))
