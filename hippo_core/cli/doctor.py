"""``hippo doctor``: the whole workspace, checked."""

from __future__ import annotations

import typer

from hippo_core.cli.common import JSON_OPTION, current_workspace, print_findings


def doctor(as_json: bool = JSON_OPTION) -> None:
    """Check the workspace: settings, notes, budgets, plugins and git."""
    from hippo_core.actions.doctor import run_doctor

    raise typer.Exit(print_findings(run_doctor(current_workspace(warn=False)), as_json))
