"""Where dreaming stands: ``.hippo/dream-state.json`` and the reports' names and first lines.

Light on purpose: ``hippo context`` reads it for its warning line on every session start.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.files.atomic import atomic_write
from hippo_core.index.team_dreamed import TEAM_DREAMED

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

STATE_FILE = "dream-state.json"
CHUNK = timedelta(hours=24)
STALE = timedelta(hours=36)
#: The line a dry run's report carries in its Window section (DESIGN decision 8).
DRY_RUN_LINE = "- dry run: nothing was written but this report"
_REPORT = re.compile(r"(\d{4}-\d{2}-\d{2})(?:-(\d+))?-dream\.md")


def parse_time(value: object) -> datetime | None:
    """An ISO time as hippo writes it (``Z`` or an offset), in UTC; None when unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def show_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def state_path(workspace: Workspace) -> Path:
    return workspace.hippo_dir / STATE_FILE


def read_state(workspace: Workspace) -> dict[str, Any]:
    """The dream state; an unreadable file counts as none (the next run starts afresh)."""
    try:
        state = json.loads(state_path(workspace).read_bytes())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def write_state(workspace: Workspace, state: dict[str, Any]) -> None:
    atomic_write(state_path(workspace), json.dumps(state, indent=2) + "\n")


#: A last piece shorter than this joins the chunk before it: a dream run at the same time
#: each night starts a little later on some nights, and its window is then a day and a
#: few seconds long, which made a chunk of those seconds of its own.
TAIL = timedelta(minutes=15)


def chunks(start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """``[start, end)`` in pieces of 24 hours, the last of them up to :data:`TAIL` longer
    (a shorter remainder joins it); a last piece under a second is left to the next run
    (``--since 24h`` would otherwise end with an empty chunk)."""
    pieces = []
    while end - start >= timedelta(seconds=1):
        stop = start + CHUNK
        if end - stop < TAIL:
            stop = end
        pieces.append((start, stop))
        start = stop
    return pieces


def reports(workspace: Workspace) -> list[Path]:
    """The dream reports, oldest first: by date, then by their ``-2-``, ``-3-`` number."""
    folder = workspace.hippo_dir / "reports"
    try:
        names = [(m, name) for name in _names(folder) if (m := _REPORT.fullmatch(name))]
    except OSError:
        return []
    names.sort(key=lambda pair: (pair[0].group(1), int(pair[0].group(2) or 1)))
    return [folder / name for _match, name in names]


def _names(folder: Path) -> list[str]:
    import os

    return os.listdir(folder) if folder.is_dir() else []


def report_head(path: Path) -> tuple[str, bool]:
    """A report's status (``ok``/``failed``) and whether it is a dry run's."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return "", False
    lines = head.splitlines()
    status = lines[0].removeprefix("status: ").strip() if lines else ""
    return status, DRY_RUN_LINE in lines


def next_report(workspace: Workspace, day: str) -> Path:
    """Where a run on ``day`` writes its report: the day's newest report when that is a dry
    run's (so dry runs do not pile up), else ``<day>-dream.md`` or the first free
    ``<day>-<n>-dream.md``. A real run's report is never replaced."""
    folder = workspace.hippo_dir / "reports"
    days = [path for path in reports(workspace) if path.name.startswith(f"{day}-")]
    if days and report_head(days[-1])[1]:
        return days[-1]
    first = folder / f"{day}-dream.md"
    if not first.exists():
        return first
    n = 2
    while (folder / f"{day}-{n}-dream.md").exists():
        n += 1
    return folder / f"{day}-{n}-dream.md"


def team_dream(workspace: Workspace) -> tuple[str, datetime] | None:
    """Who last dreamed the workspace's project on its team index, and when, as the last
    ingest or dream that reached the server saw it; None without one."""
    try:
        found = json.loads((workspace.cache_dir / TEAM_DREAMED).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("member"), str):
        return None
    at = parse_time(found.get("at"))
    return (found["member"], at) if at is not None else None


def warnings(workspace: Workspace, now: datetime | None = None) -> list[str]:
    """The warning lines of the context block: none before any report exists."""
    found = reports(workspace)
    if not found:
        return []
    # The newest real run's report decides; older ones are not read.
    real = next((status for status, dry in map(report_head, reversed(found)) if not dry), None)
    if real is None:
        return ["warning: no dreaming run recorded"]
    lines = []
    success = parse_time(read_state(workspace).get("last_success"))
    from hippo_core.base.clock import utc_now

    now = now or utc_now()
    if success is not None and now - success > STALE:
        # This machine's dreaming is stale; a teammate's dream of the project may not be.
        team = team_dream(workspace)
        success = max(success, team[1]) if team else success
    if success is not None and now - success > STALE:
        lines.append(f"warning: last dreaming success {show_time(success)} (older than 36 hours)")
    if real == "failed":
        lines.append("warning: last dreaming run failed")
    return lines
