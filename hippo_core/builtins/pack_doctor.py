"""``hippo doctor``'s checks of the packs as installed: what each theme that is on overrides,
and which packs were edited since they were installed.

Whether the packs load at all, and whether every pack the lock file records is here, is
dreaming's check.
"""

from __future__ import annotations

from hippo_core.errors import HippoError
from hippo_core.plugins import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.findings import Finding
    from hippo_core.workspace import Workspace


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    from hippo_core.findings import Finding
    from hippo_core.packs.files import PackError
    from hippo_core.packs.listing import list_packs
    from hippo_core.plugins import load_plugins

    try:
        rows, _ = list_packs(workspace, load_plugins())
    except PackError:
        return []  # dreaming's check names it
    except HippoError as exc:
        return [Finding("error", "packs", str(exc))]
    findings = []
    for row in rows:
        if row.overlays and row.active:
            overrides = ", ".join(row.overrides) or "nothing"
            detail = f"theme {row.name} over {row.overlays} overrides {overrides}"
            findings.append(Finding("info", "themes", detail))
        if row.edited:
            detail = f"{row.name} was edited since it was installed: {', '.join(row.edited)}"
            findings.append(Finding("info", "packs", detail))
        if not row.version and row.source.startswith(".hippo/"):
            detail = f"{row.source} has no pack.toml; write one (hippo pack new shows the keys)" + (
                ", or run `hippo init` to add core's" if row.name == "core" else ""
            )
            findings.append(Finding("warning", "packs", detail, row.source))
    return findings
