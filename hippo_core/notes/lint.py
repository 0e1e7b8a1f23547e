"""Running the linter: every plugin's ``hippo_lint_note`` over every note."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo_core.base.findings import Finding
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


def lint_notes(workspace: Workspace, plugins: Plugins | None = None) -> list[Finding]:
    """Every finding of every note, in path order."""
    from hippo_core.plugins.manager import load_plugins

    plugins = plugins or load_plugins()
    findings: list[Finding] = []
    for note in workspace.notes:
        findings.extend(plugins.lint_note(workspace, note))
    return findings
