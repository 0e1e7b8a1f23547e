"""``hippo notes lint``: the notes, checked."""

from __future__ import annotations

import typer

from hippo_core.cli.common import (
    JSON_OPTION,
    command_group,
    current_workspace,
    print_findings,
    subcommand,
)

app = command_group("Work with the notes.")


@subcommand(app, "lint")
def lint(as_json: bool = JSON_OPTION) -> None:
    """Check every note: frontmatter, links and review dates."""
    from hippo_core.notes.lint import lint_notes

    raise typer.Exit(print_findings(lint_notes(current_workspace()), as_json))
