"""What a schedule is, whichever scheduler holds it: when, which jobs, and what each
run needs (hippo's path, the environment, the log)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hippo_core.base.errors import HippoError, UsageError

_DURATION = re.compile(r"(\d+)([mhd])")
_AT = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")


@dataclass(frozen=True)
class When:
    """Every ``minutes`` minutes (dividing an hour, or whole hours dividing a day), or once
    a day at ``daily`` (hour, minute), local time."""

    minutes: int = 0
    daily: tuple[int, int] | None = None


@dataclass(frozen=True)
class Job:
    """One scheduled run: its name in file names (``dream``), when, and hippo's arguments."""

    name: str
    when: When
    args: tuple[str, ...]

    @property
    def label(self) -> str:
        return " ".join(("hippo", *self.args))


@dataclass(frozen=True)
class Entry:
    """What a scheduler holds for a workspace: which job, when in its own terms, and where."""

    scheduler: str
    job: str
    when: str
    where: str


class Scheduler(Protocol):
    name: str

    def missing(self) -> str | None:
        """Why this scheduler cannot be used on this machine; None when it can."""

    def install(self, root: Path, jobs: list[Job]) -> tuple[list[Entry], bool]:
        """Put ``root``'s jobs in place of the ones it had; what is installed, and whether
        anything changed."""

    def entries(self, root: Path) -> list[Entry]:
        """``root``'s jobs as this scheduler holds them ([] for none)."""

    def uninstall(self, root: Path) -> list[Entry]:
        """Remove ``root``'s jobs; what was removed."""


def every(duration: str, option: str = "--dream-every") -> When:
    """A span (``--dream-every``, or a plugin's job): a whole number of minutes dividing an
    hour, hours dividing a day, or one day (at 03:00). The same spans in every scheduler, so
    a schedule means one thing."""
    found = _DURATION.fullmatch(duration.strip())
    if not found or int(found.group(1)) == 0:
        raise UsageError(f"{option} {duration!r}: give a span such as 30m, 6h or 1d (not 0)")
    amount, unit = int(found.group(1)), found.group(2)
    if unit == "m" and 60 % amount == 0:
        return When(minutes=amount)
    if unit == "h" and 24 % amount == 0:
        return When(minutes=60 * amount) if amount < 24 else When(daily=(3, 0))
    if unit == "d" and amount == 1:
        return When(daily=(3, 0))
    raise UsageError(
        f"{option} {duration!r}: a schedule runs every few minutes dividing an hour "
        "(30m), hours dividing a day (6h) or once a day (1d); or give --dream-at HH:MM"
    )


def at(clock: str) -> When:
    found = _AT.fullmatch(clock.strip())
    if not found:
        raise UsageError(f"--dream-at {clock!r}: give a local time as HH:MM, 00:00 to 23:59")
    return When(daily=(int(found.group(1)), int(found.group(2))))


def jobs(*, dream: When, more: tuple[Job, ...] = ()) -> list[Job]:
    """The dream, then the jobs of plugins asked for (``--sleep-tick``)."""
    return [Job("dream", dream, ("dream",)), *more]


def label_of(words: list[str]) -> str:
    """A job as the schedulers show it, from the words of the command they run: ``hippo``
    and its arguments after the program (and the environment assignments before it)."""
    at = next((n for n, word in enumerate(words) if "=" not in word.split("/", 1)[0]), 0)
    return " ".join(("hippo", *words[at + 1 :]))


def hippo_program() -> str:
    """The absolute path of the ``hippo`` that installs the schedule."""
    script = Path(sys.argv[0])
    if script.name.startswith("hippo") and script.is_file():
        return str(script.resolve())
    found = shutil.which("hippo")
    if found:
        return str(Path(found).resolve())
    raise HippoError("cannot tell where the hippo program is: run hippo schedule as `hippo`")


def run(command: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a scheduler's program; one that cannot be started is an error naming it."""
    try:
        return subprocess.run(
            command, input=stdin, capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HippoError(f"{command[0]}: cannot run it ({exc}): check that program") from None


#: Where hippo and the agents keep their files, when the installer moved them: a scheduled
#: run must read the same index and the same transcripts. Never a key or a token.
CARRIED = (
    "HIPPO_HOME",
    "XDG_DATA_HOME",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "DSH_HOME",
)


def environment() -> dict[str, str]:
    """What a scheduled run needs from the installer's environment: ``PATH`` (to find the
    model program), and the folders of :data:`CARRIED` that are set."""
    found = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    found.update({name: os.environ[name] for name in CARRIED if os.environ.get(name)})
    return found


def log_path(root: Path) -> Path:
    return root / ".hippo" / "reports" / "schedule.log"  # local-only, beside the reports


def workspace_id(root: Path) -> str:
    """A name for ``root``'s jobs: its folder's name in safe letters, and a hash of its path."""
    slug = "-".join(re.findall(r"[a-z0-9]+", root.name.lower()))[:32] or "workspace"
    return f"{slug}-{hashlib.sha256(str(root).encode()).hexdigest()[:8]}"


def checked_root(root: Path) -> Path:
    """``root``, when every scheduler can hold its path and the environment a run is given:
    a line break would end a cron line or a unit's setting, and launchd's plist holds no
    other control character (a tab aside)."""
    text = str(root)
    if "\n" in text or "\r" in text:
        raise HippoError(f"{text!r}: a folder whose path has a line break cannot be scheduled")
    if _control(text):
        raise HippoError(
            f"{text!r}: a folder whose path has a control character cannot be scheduled; rename it"
        )
    for name, value in environment().items():
        if _control(value):
            raise HippoError(
                f"{name} ({value!r}) has a control character, which a scheduled run cannot be"
                f" given; change {name} and install again"
            )
    return root


def _control(text: str) -> bool:
    # A tab is the one control character every scheduler holds (cron and systemd quote it).
    return any((ord(c) < 0x20 and c != "\t") or 0x7F <= ord(c) < 0xA0 for c in text)
