"""``hippo notes lint``: the notes, checked."""

from __future__ import annotations

import typer

from hippo_core.cli.common import JSON_OPTION, command, group, print_findings, workspace

app = group("Work with the notes.")


@command(app, "lint")
def lint(as_json: bool = JSON_OPTION) -> None:
    """Check every note: frontmatter, links and review dates."""
    from hippo_core.notes.lint import lint_notes

    raise typer.Exit(print_findings(lint_notes(workspace()), as_json))
