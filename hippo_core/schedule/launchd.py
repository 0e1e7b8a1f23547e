"""launchd (macOS): an agent plist per job in ``~/Library/LaunchAgents``, loaded into the
user's GUI domain with ``launchctl bootstrap``.

A plist is XML, so paths need no quoting: the program and its arguments are an array. A
daily job uses ``StartCalendarInterval`` (launchd runs a missed one when the Mac wakes),
a shorter one ``StartInterval``. Every plist is checked by reading it back before it is
written, and written whole.
"""

from __future__ import annotations

import contextlib
import os
import plistlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

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

PREFIX = "dev.hippo"


def agents_folder() -> Path:
    return Path.home() / "Library" / "LaunchAgents"


def timing(when: When) -> dict[str, Any]:
    if when.daily is not None:
        hour, minute = when.daily
        return {"StartCalendarInterval": {"Hour": hour, "Minute": minute}}
    return {"StartInterval": when.minutes * 60}


def agent(root: Path, job: Job) -> dict[str, Any]:
    """The plist of ``job`` in ``root``, as a dictionary."""
    log = str(log_path(root))
    return {
        "Label": f"{PREFIX}.{workspace_id(root)}.{job.name}",
        "ProgramArguments": [hippo_program(), *job.args],
        "WorkingDirectory": str(root),
        "EnvironmentVariables": environment(),
        "StandardOutPath": log,
        "StandardErrorPath": log,
        "ProcessType": "Background",
        **timing(job.when),
    }


def rendered(plist: dict[str, Any]) -> bytes:
    try:
        data = plistlib.dumps(plist, sort_keys=True)
    except ValueError as exc:  # a control character in a value (HIPPO_HOME, the program)
        raise HippoError(f"{plist['Label']}: launchd's plist cannot hold it: {exc}") from None
    if plistlib.loads(data) != plist:  # what launchd will read is what was meant
        raise HippoError(f"{plist['Label']}: the agent plist does not read back as written")
    return data


def _when(plist: dict[str, Any]) -> str:
    if "StartInterval" in plist:
        return f"StartInterval {plist['StartInterval']}"
    calendar = plist.get("StartCalendarInterval", {})
    return f"StartCalendarInterval {calendar.get('Hour', 0):02d}:{calendar.get('Minute', 0):02d}"


class Launchd:
    name = "launchd"

    def missing(self) -> str | None:
        if shutil.which("launchctl") is None:
            return "launchd is macOS's scheduler and this machine has no launchctl"
        return None

    def _files(self, root: Path) -> list[Path]:
        folder = agents_folder()
        if not folder.is_dir():
            return []
        return sorted(folder.glob(f"{PREFIX}.{workspace_id(root)}.*.plist"))

    def _launchctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        program = shutil.which("launchctl")
        if program is None:
            raise HippoError(f"{self.missing()}: use --systemd or --cron")
        return run([program, *args])

    def _domain(self) -> str:
        return f"gui/{os.getuid()}"

    def _load(self, path: Path, label: str) -> None:
        if self._launchctl("print", f"{self._domain()}/{label}").returncode == 0:
            self._launchctl("bootout", f"{self._domain()}/{label}")
        done = self._launchctl("bootstrap", self._domain(), str(path))
        if done.returncode != 0:
            raise HippoError(f"launchctl bootstrap {path} failed: {done.stderr.strip()}")

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            found = plistlib.loads(path.read_bytes())
        except (OSError, plistlib.InvalidFileException, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def _entry(self, path: Path, plist: dict[str, Any]) -> Entry:
        job = " ".join(("hippo", *plist.get("ProgramArguments", ["", "?"])[1:]))
        return Entry(self.name, job, _when(plist), str(path))

    def install(self, root: Path, found: list[Job]) -> tuple[list[Entry], bool]:
        plists = [agent(root, job) for job in found]
        # Every plist is rendered before anything changes: one that cannot be is refused whole.
        wanted = {agents_folder() / f"{p['Label']}.plist": (p, rendered(p)) for p in plists}
        changed = False
        for stale in set(self._files(root)) - set(wanted):
            self._remove(stale)
            changed = True
        log_path(root).parent.mkdir(parents=True, exist_ok=True)
        entries = []
        for path, (plist, data) in wanted.items():
            fresh = not path.is_file() or path.read_bytes() != data
            if fresh:
                atomic_write(path, data)
                changed = True
            if fresh or self._launchctl("print", f"{self._domain()}/{plist['Label']}").returncode:
                self._load(path, plist["Label"])  # a run killed before it loaded, settled
            entries.append(self._entry(path, plist))
        return entries, changed

    def entries(self, root: Path) -> list[Entry]:
        found = []
        for path in self._files(root):
            plist = self._read(path)
            if plist is not None:
                found.append(self._entry(path, plist))
        return found

    def _remove(self, path: Path) -> None:
        if self.missing() is None:
            self._launchctl("bootout", f"{self._domain()}/{path.name.removesuffix('.plist')}")
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def uninstall(self, root: Path) -> list[Entry]:
        removed = self.entries(root)
        for path in self._files(root):
            self._remove(path)
        return removed
