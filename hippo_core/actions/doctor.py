"""``hippo doctor``: every plugin's workspace checks, collected."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo_core.base.findings import Finding
    from hippo_core.workspace.folder import Workspace


def run_doctor(workspace: Workspace) -> list[Finding]:
    """All findings of all checks; errors first, then warnings, then information."""
    from hippo_core.plugins.manager import load_plugins

    order = {"error": 0, "warning": 1, "info": 2}
    findings = load_plugins().doctor_checks(workspace)
    return sorted(findings, key=lambda f: order[f.level])
