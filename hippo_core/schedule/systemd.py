"""systemd (Linux): a user service and timer per job in ``~/.config/systemd/user`` (or
``$XDG_CONFIG_HOME/systemd/user``), enabled with ``systemctl --user enable --now``.

The timer says ``Persistent=true``, so a run missed while the machine was off happens when it
next starts. Values are escaped for unit files: ``%`` (a specifier) is doubled everywhere,
and the command line and environment are double-quoted with ``$`` doubled. When
``systemd-analyze`` is on PATH, the units are verified in a scratch folder before they are
written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from hippo_core.base.errors import HippoError
from hippo_core.files.atomic import atomic_write
from hippo_core.schedule.jobs import (
    Entry,
    Job,
    When,
    environment,
    hippo_program,
    log_path,
    run,
    workspace_id,
)

MARK = "# hippo schedule"


def units_folder() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user"


def calendar(when: When) -> str:
    """``when`` as an ``OnCalendar=`` expression."""
    if when.daily is not None:
        hour, minute = when.daily
        return f"*-*-* {hour:02d}:{minute:02d}:00"
    if when.minutes < 60:
        return f"*-*-* *:00/{when.minutes}:00"
    return f"*-*-* 00/{when.minutes // 60}:00:00"


def plain(value: str) -> str:
    """A unit-file value taken as it is (a path): only specifiers escaped."""
    return value.replace("%", "%%")


def quoted(value: str) -> str:
    """One word of a command line or an environment assignment, double-quoted."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$")
    return f'"{plain(escaped)}"'


def units(root: Path, job: Job) -> tuple[str, str]:
    """The service and timer files of ``job`` in ``root``."""
    log = plain(str(log_path(root)))
    env = " ".join(quoted(f"{key}={value}") for key, value in environment().items())
    command = " ".join(quoted(word) for word in (hippo_program(), *job.args))
    what = plain(f"{job.label} in {root}")
    service = (
        f"{MARK} {plain(str(root))}\n"
        f"[Unit]\nDescription={what}\n\n"
        "[Service]\nType=oneshot\n"
        f"WorkingDirectory={plain(str(root))}\n"
        f"Environment={env}\n"
        f"ExecStart={command}\n"
        f"StandardOutput=append:{log}\nStandardError=append:{log}\n"
    )
    timer = (
        f"{MARK} {plain(str(root))}\n"
        f"[Unit]\nDescription={what}, on a clock\n\n"
        f"[Timer]\nOnCalendar={calendar(job.when)}\nPersistent=true\n\n"
        "[Install]\nWantedBy=timers.target\n"
    )
    return service, timer


def _job(timer: str) -> str:
    """The job a timer of :func:`units` runs, from its description (``hippo dream in
    /path, on a clock``)."""
    line = next((x for x in timer.splitlines() if x.startswith("Description=")), "")
    what = line.removeprefix("Description=").replace("%%", "%")
    return what.split(" in /", 1)[0] if " in /" in what else what or "hippo"


def verify(files: dict[str, str]) -> None:
    """``systemd-analyze verify`` on the units, in a scratch folder, when it is here."""
    program = shutil.which("systemd-analyze")
    if program is None:
        return
    with tempfile.TemporaryDirectory(prefix="hippo-units-") as scratch:
        paths = []
        for name, text in files.items():
            (Path(scratch) / name).write_text(text, encoding="utf-8")
            paths.append(str(Path(scratch) / name))
        done = run([program, "verify", *paths])
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise HippoError(f"systemd-analyze verify refused the units: {said[-1] if said else ''}")


class Systemd:
    name = "systemd"

    def missing(self) -> str | None:
        program = shutil.which("systemctl")
        if program is None:
            return "systemd's systemctl is not on PATH"
        try:
            probe = run([program, "--user", "show-environment"])
        except HippoError:
            probe = None
        if probe is None or probe.returncode != 0:
            return "no systemd user manager runs for this user (systemctl --user failed)"
        return None

    def _systemctl(self, *args: str) -> None:
        program = shutil.which("systemctl")
        if program is None:
            raise HippoError(f"{self.missing()}: use --cron or --launchd")
        done = run([program, "--user", *args])
        if done.returncode != 0:
            raise HippoError(f"systemctl --user {' '.join(args)} failed: {done.stderr.strip()}")

    def _timers(self, root: Path) -> list[Path]:
        folder = units_folder()
        if not folder.is_dir():
            return []
        return sorted(folder.glob(f"hippo-{workspace_id(root)}-*.timer"))

    def _entry(self, timer: Path) -> Entry | None:
        try:
            text = timer.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        when = next((line for line in text.splitlines() if line.startswith("OnCalendar=")), "")
        return Entry(self.name, _job(text), when, str(timer))

    def install(self, root: Path, found: list[Job]) -> tuple[list[Entry], bool]:
        folder, prefix = units_folder(), f"hippo-{workspace_id(root)}"
        files: dict[str, str] = {}
        for job in found:
            service, timer = units(root, job)
            files[f"{prefix}-{job.name}.service"], files[f"{prefix}-{job.name}.timer"] = (
                service,
                timer,
            )
        verify(files)
        changed = False
        for stale in self._timers(root):
            if stale.name not in files:
                self._remove(stale)
                changed = True
        log_path(root).parent.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            path = folder / name
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                atomic_write(path, text)
                changed = True
        self._systemctl("daemon-reload")
        timers = [name for name in files if name.endswith(".timer")]
        self._systemctl("enable", "--now", *timers)  # idempotent: settles a killed install
        entries = [self._entry(folder / name) for name in timers]
        return [entry for entry in entries if entry is not None], changed

    def entries(self, root: Path) -> list[Entry]:
        entries = [self._entry(timer) for timer in self._timers(root)]
        return [entry for entry in entries if entry is not None]

    def _remove(self, timer: Path) -> None:
        if self.missing() is None:
            with contextlib.suppress(HippoError):
                self._systemctl("disable", "--now", timer.name)
        for path in (timer, timer.with_suffix(".service")):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def uninstall(self, root: Path) -> list[Entry]:
        removed = self.entries(root)
        for timer in self._timers(root):
            self._remove(timer)
        if removed and self.missing() is None:
            self._systemctl("daemon-reload")
        return removed
