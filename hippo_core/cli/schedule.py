"""``hippo schedule install|show|uninstall``: dreaming on a clock, by the platform's scheduler."""

from __future__ import annotations

import typer

from hippo_core.cli.common import command, group, workspace
from hippo_core.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.schedule import Entry, When

app = group(
    "Run hippo dream (and the sleep tick) on a clock: launchd on macOS, systemd on Linux, "
    "else cron."
)


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
    launchd: bool = typer.Option(False, "--launchd", help="Use launchd (macOS's default)."),
    systemd: bool = typer.Option(False, "--systemd", help="Use systemd user timers."),
    cron: bool = typer.Option(False, "--cron", help="Use the crontab."),
) -> None:
    """Schedule this workspace's dreaming, replacing the schedule it had (idempotent)."""
    from hippo_core import schedule

    if dream_every and dream_at:
        raise UsageError("give --dream-every or --dream-at, not both")
    chosen = [
        name for name, on in (("launchd", launchd), ("systemd", systemd), ("cron", cron)) if on
    ]
    if len(chosen) > 1:
        raise UsageError(f"give one scheduler, not {' and '.join('--' + c for c in chosen)}")
    here = workspace()
    when = schedule.at(dream_at) if dream_at else schedule.every(dream_every or "1d")
    tick = _tick() if sleep_tick else None
    scheduler = schedule.choose(chosen[0] if chosen else None)
    entries, changed, moved = schedule.install(
        here.root, schedule.jobs(dream=when, sleep_tick=tick), scheduler
    )
    for entry in moved:
        typer.echo(f"removed from {entry.scheduler}: {entry.job}")
    typer.echo(f"{'installed' if changed else 'already installed'} with {scheduler.name}:")
    for entry in entries:
        typer.echo(f"  {_line(entry)}")


def _tick() -> When:
    """Every five minutes: the sleep tick decides for itself what is due."""
    from hippo_core import schedule
    from hippo_core.plugins import load_plugins

    if "sleep" not in load_plugins().commands():
        raise UsageError("--sleep-tick needs the sleep pack's plugin (hippo sleep)")
    return schedule.every("5m")


def _line(entry: Entry) -> str:
    if entry.scheduler == "cron":
        return f"cron: {entry.where}"
    return f"{entry.scheduler}: {entry.job}, {entry.when}: {entry.where}"


@command(app, "show")
def show() -> None:
    """Print this workspace's scheduled jobs, in whichever scheduler holds them."""
    from hippo_core import schedule

    entries = schedule.installed(workspace().root)
    if not entries:
        typer.echo("no schedule for this workspace: `hippo schedule install` adds one")
    for entry in entries:
        typer.echo(_line(entry))


@command(app, "uninstall")
def uninstall() -> None:
    """Remove this workspace's scheduled jobs from every scheduler, and nothing else."""
    from hippo_core import schedule

    removed = schedule.uninstall(workspace().root)
    if not removed:
        typer.echo("no schedule for this workspace: nothing to remove")
    for entry in removed:
        typer.echo(f"removed from {entry.scheduler}: {entry.job}")
