"""``hippo schedule``: dreaming (and the sleep pack's tick) run on a clock, by the user's
crontab.

Each workspace gets its own block of lines in the crontab, between two marker comments that
name the workspace, so installing again replaces the block (one per workspace) and
uninstalling removes only it. Every line runs hippo by its absolute path in the workspace's
folder, with the ``HIPPO_HOME`` and ``PATH`` of the person who installed it (the model
command must be found there too), its output appended to ``.hippo/reports/schedule.log``.
Paths are quoted for the shell cron runs them with, so spaces and quotes are safe. The
crontab is read and written with the ``crontab`` program itself (``crontab -l``, ``crontab
-``), never edited in place.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hippo_core.errors import HippoError, UsageError

BEGIN, END = "# >>> hippo schedule", "# <<< hippo schedule"
_DURATION = re.compile(r"(\d+)([mhd])")
_AT = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")


@dataclass(frozen=True)
class Job:
    """One line: when (five cron fields), and the hippo command it runs."""

    when: str
    args: tuple[str, ...]


def every(duration: str) -> str:
    """The cron fields for ``--dream-every``: a whole number of minutes dividing an hour,
    hours dividing a day, or one day (at 03:00)."""
    found = _DURATION.fullmatch(duration.strip())
    if not found or int(found.group(1)) == 0:
        raise UsageError(f"--dream-every {duration!r}: give a span such as 30m, 6h or 1d (not 0)")
    amount, unit = int(found.group(1)), found.group(2)
    if unit == "m" and 60 % amount == 0:
        return f"*/{amount} * * * *" if amount < 60 else "0 * * * *"
    if unit == "h" and 24 % amount == 0:
        return f"0 */{amount} * * *" if amount < 24 else "0 3 * * *"
    if unit == "d" and amount == 1:
        return "0 3 * * *"
    raise UsageError(
        f"--dream-every {duration!r}: cron can run every few minutes dividing an hour (30m), "
        "hours dividing a day (6h) or once a day (1d); or give --dream-at HH:MM"
    )


def at(clock: str) -> str:
    found = _AT.fullmatch(clock.strip())
    if not found:
        raise UsageError(f"--dream-at {clock!r}: give a local time as HH:MM, 00:00 to 23:59")
    return f"{int(found.group(2))} {int(found.group(1))} * * *"


def jobs(*, dream: str, sleep_tick: str | None) -> list[Job]:
    found = [Job(dream, ("dream",))]
    if sleep_tick is not None:
        found.append(Job(sleep_tick, ("sleep", "tick")))
    return found


def hippo_program() -> str:
    """The absolute path of the ``hippo`` that installs the schedule."""
    script = Path(sys.argv[0])
    if script.name.startswith("hippo") and script.is_file():
        return str(script.resolve())
    found = shutil.which("hippo")
    if found:
        return str(Path(found).resolve())
    raise HippoError("cannot tell where the hippo program is: run hippo schedule as `hippo`")


def block(root: Path, found: list[Job]) -> list[str]:
    """The crontab lines of ``root``'s schedule, markers included."""
    log = root / ".hippo" / "reports" / "schedule.log"  # local-only, beside the reports
    env = [f"PATH={shlex.quote(os.environ.get('PATH', '/usr/bin:/bin'))}"]
    if os.environ.get("HIPPO_HOME"):
        env.insert(0, f"HIPPO_HOME={shlex.quote(os.environ['HIPPO_HOME'])}")
    program = shlex.quote(hippo_program())
    lines = [f"{BEGIN} {root}"]
    for job in found:
        command = " ".join([program, *job.args])
        # A % in a crontab line is a newline unless escaped, whatever the quoting.
        line = (
            f"{job.when} mkdir -p {shlex.quote(str(log.parent))} && cd {shlex.quote(str(root))}"
            f" && {' '.join(env)} {command} >> {shlex.quote(str(log))} 2>&1"
        )
        lines.append(line.replace("%", "\\%"))
    lines.append(f"{END} {root}")
    return lines


def _crontab() -> str:
    program = shutil.which("crontab")
    if program is None:
        raise HippoError(
            "hippo schedule needs the crontab program, which is not on PATH: install cron "
            "(or schedule `hippo dream` with the system's own scheduler)"
        )
    return program


def read() -> list[str]:
    """The user's crontab, line by line ([] for none)."""
    done = subprocess.run([_crontab(), "-l"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        if "no crontab" in done.stderr.lower():
            return []
        raise HippoError(f"crontab -l failed: {done.stderr.strip() or done.returncode}")
    return done.stdout.splitlines()


def write(lines: list[str]) -> None:
    text = "".join(f"{line}\n" for line in lines)
    done = subprocess.run(
        [_crontab(), "-"], input=text, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise HippoError(f"crontab - refused the new table: {done.stderr.strip()}")


def without(lines: list[str], root: Path) -> tuple[list[str], list[str]]:
    """``lines`` without ``root``'s block, and the block."""
    kept, removed, inside = [], [], False
    for line in lines:
        if line == f"{BEGIN} {root}":
            inside = True
        if inside:
            removed.append(line)
        else:
            kept.append(line)
        if line == f"{END} {root}":
            inside = False
    return kept, removed


def install(root: Path, found: list[Job]) -> tuple[list[str], bool]:
    """Put ``root``'s block in the crontab, replacing the one it had; the block, and
    whether the crontab changed."""
    current = read()
    kept, old = without(current, root)
    new = block(root, found)
    if old == new:
        return new, False
    write(kept + new)
    return new, True


def installed(root: Path) -> list[str]:
    """``root``'s block in the crontab; [] when there is none, or no cron on this machine."""
    return without(read(), root)[1] if shutil.which("crontab") else []


def uninstall(root: Path) -> list[str]:
    """Remove ``root``'s block; what was removed ([] when there was none, or no cron)."""
    if shutil.which("crontab") is None:
        return []
    current = read()
    kept, removed = without(current, root)
    if removed:
        write(kept)
    return removed
