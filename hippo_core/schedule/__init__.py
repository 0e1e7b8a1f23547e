"""``hippo schedule``: dreaming (and the jobs plugins offer) run on a clock, by the
platform's own scheduler.

Three schedulers, one shape: launchd on macOS (an agent plist per job in
``~/Library/LaunchAgents``), systemd on Linux when a user manager is running (a service and
a timer per job in ``~/.config/systemd/user``), and the crontab everywhere else (a block of
lines between two marker comments naming the workspace). Each runs hippo by its absolute
path in the workspace's folder, with the ``HIPPO_HOME`` and ``PATH`` of the person who
installed it (the model command must be found there too), its output appended to
``.hippo/reports/schedule.log``.

A workspace has one schedule: installing again replaces it, with any scheduler, and
uninstalling removes it from every one. The jobs' names carry the workspace's folder name
and a hash of its path, so two workspaces never share an entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hippo_core.base.errors import HippoError
from hippo_core.schedule.cron import Cron
from hippo_core.schedule.jobs import Entry, Job, Scheduler, When, at, checked_root, every, jobs
from hippo_core.schedule.launchd import Launchd
from hippo_core.schedule.systemd import Systemd

__all__ = ["Entry", "Job", "Scheduler", "When", "at", "choose", "every", "install", "jobs"]


def schedulers() -> dict[str, Scheduler]:
    return {"launchd": Launchd(), "systemd": Systemd(), "cron": Cron()}


def default() -> Scheduler:
    """The platform's own: launchd on macOS, systemd where a user manager runs, else cron."""
    found = schedulers()
    if sys.platform == "darwin":
        return found["launchd"]
    if found["systemd"].missing() is None:
        return found["systemd"]
    return found["cron"]


def choose(name: str | None) -> Scheduler:
    """The scheduler called ``name`` (the default when None), if this machine has it."""
    found = schedulers()
    chosen = found[name] if name else default()
    why = chosen.missing()
    if why is None:
        return chosen
    others = [other for other in found if other != chosen.name]
    usable = [f"--{other}" for other in others if found[other].missing() is None]
    if usable:
        raise HippoError(f"{why}: use {' or '.join(usable)}")
    raise HippoError(f"{why}, and neither {' nor '.join(others)} can run here: install cron")


def installed(root: Path) -> list[Entry]:
    """``root``'s jobs in every scheduler."""
    return [entry for one in schedulers().values() for entry in one.entries(root)]


def install(
    root: Path, found: list[Job], scheduler: Scheduler
) -> tuple[list[Entry], bool, list[Entry]]:
    """``root``'s schedule in ``scheduler``, and in no other: what is installed, whether
    anything changed, and what was removed from the other schedulers."""
    checked_root(root)
    moved = []
    for name, other in schedulers().items():
        if name != scheduler.name:
            moved += other.uninstall(root)
    entries, changed = scheduler.install(root, found)
    return entries, changed or bool(moved), moved


def uninstall(root: Path) -> list[Entry]:
    """Remove ``root``'s jobs from every scheduler; what was removed."""
    return [entry for one in schedulers().values() for entry in one.uninstall(root)]
