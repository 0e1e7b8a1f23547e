"""``hippo log``: the session log, written from the records."""

from __future__ import annotations

import typer


def log() -> None:
    """Write the session log (log_path), one line per session, newest first."""
    from hippo_core.actions.log import write_log
    from hippo_core.workspace.folder import Workspace

    workspace = Workspace.find()
    count = write_log(workspace)
    sessions = f"{count} session{'' if count == 1 else 's'}"
    typer.echo(f"wrote {workspace.relative(workspace.log_path)} ({sessions})")
