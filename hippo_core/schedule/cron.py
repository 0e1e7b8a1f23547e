"""The crontab: a block of lines per workspace, between two marker comments naming it.

The table is read and written with the ``crontab`` program itself (``crontab -l``,
``crontab -``), never edited in place. Paths are quoted for the shell cron runs a line with,
so spaces and quotes are safe, and every ``%`` is escaped (cron reads it as a newline).
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from hippo_core.base.errors import HippoError
from hippo_core.schedule.jobs import (
    Entry,
    Job,
    When,
    environment,
    hippo_program,
    label_of,
    log_path,
    run,
)

BEGIN, END = "# >>> hippo schedule", "# <<< hippo schedule"


def fields(when: When) -> str:
    """The five cron fields of ``when``."""
    if when.daily is not None:
        hour, minute = when.daily
        return f"{minute} {hour} * * *"
    if when.minutes < 60:
        return f"*/{when.minutes} * * * *"
    hours = when.minutes // 60
    return f"0 */{hours} * * *" if hours > 1 else "0 * * * *"


def block(root: Path, found: list[Job]) -> list[str]:
    """The crontab lines of ``root``'s schedule, markers included."""
    log = log_path(root)
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in environment().items())
    program = shlex.quote(hippo_program())
    lines = [f"{BEGIN} {root}"]
    for job in found:
        command = " ".join([program, *job.args])
        line = (
            f"{fields(job.when)} mkdir -p {shlex.quote(str(log.parent))}"
            f" && cd {shlex.quote(str(root))} && {env} {command} >> {shlex.quote(str(log))} 2>&1"
        )
        lines.append(line.replace("%", "\\%"))
    lines.append(f"{END} {root}")
    return lines


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


def _entries(block_lines: list[str]) -> list[Entry]:
    found = []
    for line in block_lines[1:-1]:
        found.append(Entry("cron", _job(line), " ".join(line.split(" ", 5)[:5]), line))
    return found


def _job(line: str) -> str:
    """The job a line of :func:`block` runs, read from its command: the words after the
    last ``&&`` and before the ``>>`` of the log."""
    try:
        words = shlex.split(line.replace("\\%", "%").split(" ", 5)[5])
    except (ValueError, IndexError):
        return "hippo (a line hippo cannot read)"
    command = words[len(words) - words[::-1].index("&&") :] if "&&" in words else words
    return label_of(command[: command.index(">>")] if ">>" in command else command)


class Cron:
    name = "cron"

    def missing(self) -> str | None:
        if shutil.which("crontab") is None:
            return "the crontab program is not on PATH (cron is not installed)"
        return None

    def _program(self) -> str:
        program = shutil.which("crontab")
        if program is None:
            raise HippoError(f"{self.missing()}: install cron, or use --launchd or --systemd")
        return program

    def read(self) -> list[str]:
        """The user's crontab, line by line ([] for none)."""
        done = run([self._program(), "-l"])
        if done.returncode != 0:
            if "no crontab" in done.stderr.lower():
                return []
            raise HippoError(f"crontab -l failed: {done.stderr.strip() or done.returncode}")
        return done.stdout.splitlines()

    def write(self, lines: list[str]) -> None:
        text = "".join(f"{line}\n" for line in lines)
        done = run([self._program(), "-"], stdin=text)
        if done.returncode != 0:
            raise HippoError(f"crontab - refused the new table: {done.stderr.strip()}")

    def install(self, root: Path, found: list[Job]) -> tuple[list[Entry], bool]:
        kept, old = without(self.read(), root)
        new = block(root, found)
        if old != new:
            self.write(kept + new)
        return _entries(new), old != new

    def entries(self, root: Path) -> list[Entry]:
        if self.missing() is not None:
            return []
        return _entries(without(self.read(), root)[1])

    def uninstall(self, root: Path) -> list[Entry]:
        if self.missing() is not None:
            return []
        kept, removed = without(self.read(), root)
        if removed:
            self.write(kept)
        return _entries(removed)
