"""``hippo schedule install|show|uninstall``: dreaming on a clock, by the platform's scheduler."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import typer

from hippo_core.base.errors import UsageError
from hippo_core.cli.common import command_group, current_workspace, say, subcommand

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.plugins.manager import ScheduleJob
    from hippo_core.schedule import Entry
    from hippo_core.workspace.folder import Workspace

app = command_group(
    "Run hippo dream (and the jobs plugins add) on a clock: launchd on macOS, systemd on "
    "Linux, else cron."
)


def install(
    dream_every: str = typer.Option(
        "",
        "--dream-every",
        metavar="SPAN",
        help="Dream this often: 30m, 6h, 1d (default: 1d, at 03:00 local time).",
    ),
    dream_at: str = typer.Option(
        "", "--dream-at", metavar="HH:MM", help="Dream once a day at this local time."
    ),
    launchd: bool = typer.Option(False, "--launchd", help="Use launchd (macOS's default)."),
    systemd: bool = typer.Option(False, "--systemd", help="Use systemd user timers."),
    cron: bool = typer.Option(False, "--cron", help="Use the crontab."),
    **wanted: bool,
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
    here = current_workspace()
    when = schedule.at(dream_at) if dream_at else schedule.every(dream_every or "1d")
    chosen_jobs = [job for job in _plugin_jobs().values() if wanted.get(_parameter(job.name))]
    _refuse_without_pack(here, chosen_jobs)
    more = tuple(
        schedule.Job(job.name, schedule.every(job.every, f"--{job.name}"), job.args)
        for job in chosen_jobs
    )
    scheduler = schedule.choose(chosen[0] if chosen else None)
    entries, changed, moved = schedule.install(
        here.root, schedule.jobs(dream=when, more=more), scheduler
    )
    for entry in moved:
        typer.echo(f"removed from {entry.scheduler}: {entry.job}")
    typer.echo(f"{'installed' if changed else 'already installed'} with {scheduler.name}:")
    for entry in entries:
        typer.echo(f"  {_line(entry)}")


def _plugin_jobs(*, warn: bool = False) -> dict[str, ScheduleJob]:
    """The jobs plugins offer (the sleep pack's ``sleep-tick``), each an option of install;
    with ``warn``, a job registered wrong is named on stderr."""
    from hippo_core.plugins.manager import load_plugins

    problems: list[str] = []
    found = load_plugins().schedule_jobs(problems)
    for line in problems if warn else []:
        say(f"warning: {line}")
    return found


def _refuse_without_pack(here: Workspace, jobs: list[ScheduleJob]) -> None:
    """A job whose pack does not run here would fail at every run: refuse it now."""
    from hippo_core.base.errors import HippoError
    from hippo_core.packs.files import PackError
    from hippo_core.packs.survey import survey
    from hippo_core.plugins.manager import load_plugins

    needed = [job for job in jobs if job.pack]
    if not needed:
        return
    try:
        running = {found.name for found in survey(here, load_plugins(), strict=False).packs}
    except PackError:  # a broken pack elsewhere: look for the folder itself
        running = {job.pack for job in needed if (here.packs_dir / job.pack).is_dir()}
    for job in needed:
        if job.pack not in running:
            raise HippoError(
                f"--{job.name} runs `hippo {' '.join(job.args)}`, which needs the {job.pack} "
                f"pack in this workspace (.hippo/packs/{job.pack}/); add it first with "
                f"`hippo pack add {job.pack}`"
            )


def _parameter(name: str) -> str:
    return name.replace("-", "_")


def _with_plugin_options(function: Callable[..., None]) -> Callable[..., None]:
    """``install`` with a ``--<name>`` option for each job a plugin offers, so that the
    options are the jobs there are (none with ``HIPPO_LOAD_PLUGINS=""``)."""
    signature = inspect.signature(function)
    fixed = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    options = [
        inspect.Parameter(
            _parameter(job.name),
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(False, f"--{job.name}", help=job.help),
            annotation=bool,
        )
        for job in sorted(_plugin_jobs(warn=True).values(), key=lambda job: job.name)
    ]
    function.__signature__ = signature.replace(parameters=[*fixed, *options])  # type: ignore[attr-defined]
    return function


subcommand(app, "install")(_with_plugin_options(install))


def _line(entry: Entry) -> str:
    if entry.scheduler == "cron":
        return f"cron: {entry.where}"
    return f"{entry.scheduler}: {entry.job}, {entry.when}: {entry.where}"


@subcommand(app, "show")
def show() -> None:
    """Print this workspace's scheduled jobs, in whichever scheduler holds them."""
    from hippo_core import schedule

    entries = schedule.installed(current_workspace().root)
    if not entries:
        typer.echo("no schedule for this workspace: `hippo schedule install` adds one")
    for entry in entries:
        typer.echo(_line(entry))


@subcommand(app, "uninstall")
def uninstall() -> None:
    """Remove this workspace's scheduled jobs from every scheduler, and nothing else."""
    from hippo_core import schedule

    removed = schedule.uninstall(current_workspace().root)
    if not removed:
        typer.echo("no schedule for this workspace: nothing to remove")
    for entry in removed:
        typer.echo(f"removed from {entry.scheduler}: {entry.job}")
