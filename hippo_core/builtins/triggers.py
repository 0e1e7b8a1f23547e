"""Activity triggers: a dream started by what the agents do, not only by the clock.

Two, in the workspace's ``[triggers]`` table, both off until set::

    [triggers]
    after_sessions = 5   # dream once 5 sessions have ended since the last dream
    on_compact = true    # dream when an agent compacts its context (its PreCompact hook)

They listen to two events: ``session-ended`` (a session hook, ``hippo session end``, or the
MCP tool ended a session) and ``compacting`` (``hippo hook compact``). A trigger that fires
starts ``hippo dream`` detached, in a session of its own with its output in
``.hippo/reports/triggers.log``, and returns at once: the agent never waits for a dream.
It starts none while one runs: a lock keeps triggers to one at a time, the pid of the dream
it started is kept in ``.hippo/cache/triggered.json``, and the dream lock is tried; whatever
it decides is one line of the log.

A workspace without the table pays one dictionary lookup per event.
"""

from __future__ import annotations

from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from hippo_core.base.findings import Finding
    from hippo_core.builtins.trigger_settings import Triggers
    from hippo_core.plugins.events import Event
    from hippo_core.workspace.folder import Workspace

TABLE = "triggers"
LOG = "reports/triggers.log"
STATE = "cache/triggered.json"


@hookimpl
def hippo_register_settings(register: Callable[[str, type], None]) -> None:
    from hippo_core.builtins.trigger_settings import Triggers

    register(TABLE, Triggers)


@hookimpl
def hippo_event(workspace: Workspace, event: Event) -> None:
    if event.name not in ("session-ended", "compacting"):
        return
    if not workspace.settings.tables.get(TABLE):
        return  # the usual case: no triggers
    from hippo_core.base.errors import HippoError

    try:
        why = _due(workspace, event)
        if why:
            start_dream(workspace, why)
    except (HippoError, OSError) as exc:
        log(workspace, f"no dream started: {exc}")


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.errors import HippoError
    from hippo_core.base.findings import Finding

    if not workspace.settings.tables.get(TABLE):
        return []
    try:
        found = settings(workspace)
    except HippoError as exc:
        return [Finding("error", "triggers", str(exc))]
    said = []
    if found.after_sessions:
        said.append(f"after {found.after_sessions} ended sessions")
    if found.on_compact:
        said.append("when an agent compacts its context")
    if not said:
        return []
    detail = f"dreams start {' and '.join(said)}"
    problem = _no_model(workspace)
    if problem:
        # Each dream they start would fail, and the block of every session would say so.
        detail += f", but every one would fail: {problem}; or turn the triggers off"
        return [Finding("warning", "triggers", detail)]
    return [Finding("info", "triggers", detail)]


def _no_model(workspace: Workspace) -> str:
    """Why a dream started here could not call a model; empty when it could."""
    from hippo_core.base.errors import HippoError
    from hippo_core.plugins.manager import load_plugins

    factory = load_plugins().backends().get(workspace.settings.model_backend)
    if factory is None:
        return f"model_backend {workspace.settings.model_backend!r} is not a backend here"
    try:
        factory(workspace)
    except HippoError as exc:
        return str(exc)
    return ""


def settings(workspace: Workspace) -> Triggers:
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.settings.tables import settings_table

    found, _warnings = settings_table(workspace, load_plugins(), TABLE)
    return found  # type: ignore[no-any-return]


def _due(workspace: Workspace, event: Event) -> str | None:
    """Why a dream should start for ``event``, or None."""
    found = settings(workspace)
    session = event.data.get("session", "?")
    if event.name == "compacting" and found.on_compact:
        return f"session {session} is compacting its context"
    if event.name == "session-ended" and found.after_sessions:
        ended = ended_since_dream(workspace)
        if ended >= found.after_sessions:
            limit = found.after_sessions
            return f"{ended} sessions ended since the last dream (after_sessions = {limit})"
    return None


def ended_since_dream(workspace: Workspace) -> int:
    """Sessions whose record says they ended after the second the last dream started (all
    of them when no dream ran). Only records written since then are read."""
    import os

    from hippo_core.dream import state
    from hippo_core.files import jsontext
    from hippo_core.files.model_folder import in_model_folder

    last = state.parse_time((state.read_state(workspace).get("last_run") or {}).get("at"))
    since = last.timestamp() if last else 0.0
    count = 0
    try:
        entries = list(os.scandir(workspace.sessions_dir))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.endswith(".json") or entry.stat().st_mtime < since:
            continue
        try:
            with open(entry.path, "rb") as handle:
                record = jsontext.loads(handle.read())
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict) or in_model_folder(record.get("cwd")):
            continue  # a dream's own model run is no session of the workspace
        ended = state.parse_time(record.get("ended"))
        # Both times are to the second: a session that ended in the second the dream
        # started is the dream's (its transcript was there to read).
        if ended is not None and ended.timestamp() > since:
            count += 1
    return count


def start_dream(workspace: Workspace, why: str) -> int | None:
    """Start ``hippo dream`` detached unless one runs, saying which in the log; its pid."""
    import json
    import subprocess
    import sys
    import threading

    from hippo_core.dream.run import dream_lock_path
    from hippo_core.files.atomic import atomic_write
    from hippo_core.files.locks import file_lock
    from hippo_core.files.processes import process_alive

    state_path = workspace.hippo_dir / STATE
    with file_lock(state_path.with_suffix(".lock"), wait=0) as mine:
        if mine is None:
            _not(workspace, why, "another trigger is starting one")
            return None
        pid = _started_pid(state_path)
        if pid and process_alive(pid):
            _not(workspace, why, f"the dream triggered before runs (pid {pid})")
            return None
        with file_lock(dream_lock_path(workspace), wait=0) as free:
            if free is None:
                _not(workspace, why, "a dream is running")
                return None
        log(workspace, f"starting hippo dream: {why}")
        with open(workspace.hippo_dir / LOG, "ab") as output:
            child = subprocess.Popen(
                [sys.executable, "-m", "hippo_core", "dream"],
                cwd=workspace.root,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # the agent's hook ends; the dream goes on
            )
        # A long-lived caller (the MCP server) reaps it; a hook exits before it matters.
        threading.Thread(target=child.wait, daemon=True).start()
        atomic_write(state_path, json.dumps({"pid": child.pid, "why": why}) + "\n")
    return child.pid


def _not(workspace: Workspace, why: str, because: str) -> None:
    log(workspace, f"no dream started ({why}): {because}")


def _started_pid(path: Path) -> int:
    import json

    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    pid = found.get("pid") if isinstance(found, dict) else None
    return pid if isinstance(pid, int) else 0


def log(workspace: Workspace, line: str) -> None:
    """One line of ``.hippo/reports/triggers.log``, stamped."""

    path = workspace.hippo_dir / LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    from hippo_core.base.clock import stamp

    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"{stamp()} {line}\n")
