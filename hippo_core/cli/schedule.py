"""``hippo schedule install|show|uninstall``: dreaming on a clock, in the user's crontab."""

from __future__ import annotations

import typer

from hippo_core.cli.common import command, group, workspace
from hippo_core.errors import UsageError

app = group("Run hippo dream (and the sleep tick) on a clock, from the user's crontab.")


@command(app, "install")
def install(
    dream_every: str = typer.Option(
        "", "--dream-every", metavar="SPAN", help="Dream this often: 30m, 6h, 1d (default 1d)."
    ),
    dream_at: str = typer.Option(
        "", "--dream-at", metavar="HH:MM", help="Dream once a day at this local time."
    ),
    sleep_tick: bool = typer.Option(
        False, "--sleep-tick", help="Also run `hippo sleep tick` every 5 minutes."
    ),
) -> None:
    """Add this workspace's lines to the crontab, or replace the ones it has (idempotent)."""
    from hippo_core import schedule

    if dream_every and dream_at:
        raise UsageError("give --dream-every or --dream-at, not both")
    here = workspace()
    when = schedule.at(dream_at) if dream_at else schedule.every(dream_every or "1d")
    tick = _tick_fields() if sleep_tick else None
    lines, changed = schedule.install(here.root, schedule.jobs(dream=when, sleep_tick=tick))
    typer.echo(("installed" if changed else "already installed") + " in the crontab:")
    for line in lines[1:-1]:
        typer.echo(f"  {line}")


def _tick_fields() -> str:
    """Every five minutes: the sleep tick decides for itself what is due."""
    from hippo_core import schedule
    from hippo_core.plugins import load_plugins

    if "sleep" not in load_plugins().commands():
        raise UsageError("--sleep-tick needs the sleep pack's plugin (hippo sleep)")
    return schedule.every("5m")


@command(app, "show")
def show() -> None:
    """Print this workspace's lines in the crontab."""
    from hippo_core import schedule

    lines = schedule.installed(workspace().root)
    if not lines:
        typer.echo("no schedule for this workspace: `hippo schedule install` adds one")
        return
    for line in lines[1:-1]:
        typer.echo(line)


@command(app, "uninstall")
def uninstall() -> None:
    """Remove this workspace's lines from the crontab, and nothing else."""
    from hippo_core import schedule

    removed = schedule.uninstall(workspace().root)
    if removed:
        typer.echo(f"removed {len(removed) - 2} line(s) from the crontab")
    else:
        typer.echo("no schedule for this workspace: nothing to remove")
