"""The transcript commands: ``hippo ingest``, ``hippo search``, ``hippo log``.

Registered on the main app by :mod:`hippo_core.cli`; SQLAlchemy is imported inside them.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of text.")


def _optional_workspace() -> Any:
    from hippo_core.workspace import Workspace, find_root

    root = find_root(Path.cwd())
    if root is None:
        return None
    workspace = Workspace.open(root)
    for line in workspace.loaded.warnings:
        typer.echo(f"warning: {line}", err=True)
    return workspace


class _Bar:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, files: int, total: int) -> None:
        self.files, self.total, self.done, self.count, self.drawn = files, max(total, 1), 0, 0, 0.0

    def advance(self, read: int) -> None:
        self.done += read
        self.count += 1
        now = time.monotonic()
        if now - self.drawn >= 0.1 or self.count == self.files:
            self.drawn = now
            share = min(self.done / self.total, 1.0)
            bar = "#" * int(share * 30)
            sys.stderr.write(f"\ringest [{bar:<30}] {share:4.0%} {self.count}/{self.files} files")
            sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\r" + " " * 70 + "\r")
        sys.stderr.flush()


def ingest(
    full: bool = typer.Option(False, "--full", help="Delete the index and read every file again."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Index new transcript turns from every agent into $HIPPO_HOME/index.sqlite."""
    from hippo_core.index.ingest import ingest as run_ingest

    workspace = _optional_workspace()
    extra = {
        tool: tuple(str(workspace.root / Path(folder).expanduser()) for folder in folders)
        for tool, folders in (workspace.settings.transcript_dirs if workspace else {}).items()
    }
    bars: list[_Bar] = []

    def progress(files: int, total: int) -> Callable[[int], None]:
        bars.append(_Bar(files, total))
        return bars[0].advance

    show_bar = not as_json and sys.stderr.isatty()
    try:
        summary = run_ingest(
            full=full,
            extra_dirs=extra,
            say=lambda line: typer.echo(line, err=True),
            progress=progress if show_bar else None,
        )
    finally:
        for bar in bars:
            bar.close()
    records = _write_derived(workspace) if workspace else 0
    if as_json:
        typer.echo(json.dumps({**asdict(summary), "records": records}, indent=2))
        return
    for problem in summary.problems:
        typer.echo(f"warning: {problem}", err=True)
    line = summary.line()
    if workspace is not None:
        line += f"; {records} session record{'' if records == 1 else 's'} written"
    typer.echo(line)


def _write_derived(workspace: Any) -> int:
    from hippo_core.home import index_path
    from hippo_core.index.derived import write_derived

    return write_derived(index_path(), workspace)


def search(
    query: str = typer.Argument(..., metavar="QUERY", help="Words to find (word* for a prefix)."),
    tool: str | None = typer.Option(
        None, "--tool", metavar="NAME", help="Only this agent's turns."
    ),
    session: str | None = typer.Option(None, "--session", metavar="ID", help="Only this session."),
    since: str | None = typer.Option(
        None, "--since", metavar="WHEN", help="Only turns since a date, a time or 24h/7d/2w ago."
    ),
    limit: int = typer.Option(20, "--limit", min=1, metavar="N", help="At most N turns."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Search the indexed turns; print the best matches with snippets."""
    from hippo_core.home import index_path
    from hippo_core.index.db import open_for_reading
    from hippo_core.index.search import search as run_search

    engine = open_for_reading(index_path())
    try:
        hits = run_search(engine, query, tool=tool, session=session, since=since, limit=limit)
    finally:
        engine.dispose()
    if as_json:
        typer.echo(json.dumps([asdict(h) for h in hits], indent=2, ensure_ascii=False))
        return
    for hit in hits:
        typer.echo(f"{hit.session} #{hit.ordinal}  {hit.started or 'unknown time'}  {hit.tool}")
        typer.echo(f"    {hit.snippet}")
    if not hits:
        typer.echo("no turns match", err=True)
        raise typer.Exit(1)


def log() -> None:
    """Write the session log (log_path), one line per session, newest first."""
    from hippo_core.session_log import write_log
    from hippo_core.workspace import Workspace

    workspace = Workspace.find()
    count = write_log(workspace)
    sessions = f"{count} session{'' if count == 1 else 's'}"
    typer.echo(f"wrote {workspace.relative(workspace.log_path)} ({sessions})")


def register(app: typer.Typer) -> None:
    app.command()(ingest)
    app.command()(search)
    app.command()(log)
