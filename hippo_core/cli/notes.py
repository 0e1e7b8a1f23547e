"""``hippo notes lint``: the notes, checked; ``hippo notes watch``: their index kept fresh."""

from __future__ import annotations

import sys

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


@subcommand(app, "watch")
def watch() -> None:
    """Keep the notes index fresh until stopped, so that the hooks skip their scan (Linux)."""
    import signal

    from hippo_core.base.errors import HippoError
    from hippo_core.context.watch import WatchError, workspace_watcher

    workspace = current_workspace()
    try:
        watcher = workspace_watcher(workspace)
        watcher.check()
    except WatchError as exc:
        raise HippoError(str(exc)) from None
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    shown = workspace.relative(watcher.notes_dir)
    typer.echo(f"watching {shown}: the hooks and hippo context skip their scan while this runs")
    try:
        watcher.serve()
    except WatchError as exc:
        raise HippoError(str(exc)) from None
    except KeyboardInterrupt:
        typer.echo("stopped")
