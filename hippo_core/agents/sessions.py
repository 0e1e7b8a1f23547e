"""Session records: ``.hippo/sessions/<id>.json``, one per agent session.

A *declared* record is written by ``hippo session`` and ``hippo hook``; a *derived* one by
``hippo ingest`` for a transcript of this workspace that has no declared record. Declaring
a session replaces its derived record; ingest never replaces a declared one.

Ids become file names (:mod:`hippo_core.transcripts.session_ids`). A declared task, handoff or
no-change reason is redacted as it is recorded (:func:`_redacted`), so every reader (the
session log, the dream, a plugin, the team push) gets what the index would hold.
"""

from __future__ import annotations

import contextlib
import os

from hippo_core.base.clock import stamp
from hippo_core.base.errors import HippoError
from hippo_core.files import jsontext
from hippo_core.files.jsonfiles import json_objects_in, read_json_object
from hippo_core.files.owner_only import owner_only_write
from hippo_core.transcripts.session_ids import DECLARED, DERIVED, session_id
from hippo_core.workspace.locate import HIPPO_DIR

# The agents' hooks import this module on every prompt: typing, pathlib, datetime and
# hashlib are left to the type checker and to the rare call that needs them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

    from hippo_core.workspace.folder import Workspace

__all__ = [
    "DECLARED",
    "DERIVED",
    "UNSPECIFIED",
    "declare",
    "end",
    "end_session",
    "latest_open",
    "load_record",
    "new_declared",
    "now",
    "read_record",
    "record_path",
    "records_lock",
    "session_id",
    "session_records",
    "write_record",
]

UNSPECIFIED = "unspecified"


def now() -> str:
    """hippo's clock as it writes a time: ``2026-11-30T05:21:00Z``
    (:mod:`hippo_core.base.clock`)."""
    return stamp()


def record_path(workspace: Workspace, raw_id: str) -> Path:
    from pathlib import Path

    return Path(_record_file(workspace, raw_id))


def _record_file(workspace: Workspace, raw_id: str) -> str:
    # record_path as a string: the agents' hooks read and write records without pathlib.
    return workspace.inside(HIPPO_DIR, "sessions", f"{session_id(raw_id)}.json")


def load_record(workspace: Workspace, raw_id: str) -> dict[str, Any] | None:
    """The record of ``raw_id``, or None when there is none (or it is unreadable)."""
    try:
        return read_record(workspace, raw_id)
    except HippoError:
        return None


def read_record(workspace: Workspace, raw_id: str) -> dict[str, Any]:
    """The record of session ``raw_id``; a missing or unreadable record is an error."""
    path = _record_file(workspace, raw_id)
    shown = workspace.relative(path)
    missing = f"session {raw_id!r} not found: there is no {shown}"
    return read_json_object(path, shown, kind="session record", missing=missing)


def write_record(workspace: Workspace, record: dict[str, Any], *, durable: bool = True) -> str:
    """Write ``record`` atomically under its id, owner-only; without fsync when it is a
    derived one or ``durable`` is False (what a power cut may lose, ingest writes again)."""
    path = _record_file(workspace, record["id"])
    text = jsontext.dumps(record) + "\n"
    durable = durable and record.get("kind") != DERIVED
    owner_only_write(path, text, durable=durable)
    return path


def session_records(workspace: Workspace, *, model_runs: bool = False) -> list[dict[str, Any]]:
    """Every readable session record of the workspace (unreadable ones are skipped). A
    record whose ``cwd`` is one of hippo's model folders (left from before hippo knew
    them: a dream's model run, :mod:`hippo_core.files.model_folder`) is no session of the
    workspace and is left out, unless ``model_runs`` asks for every file."""
    from hippo_core.files.model_folder import in_model_folder

    return [
        record
        for _path, record in json_objects_in(workspace.sessions_dir)
        if isinstance(record.get("id"), str)
        and (model_runs or not in_model_folder(record.get("cwd")))
    ]


@contextlib.contextmanager
def records_lock(workspace: Workspace) -> Iterator[None]:
    """Serialise read-modify-write of records (hooks may run twice, in parallel)."""
    from hippo_core.files.locks import file_lock

    folder = workspace.inside(HIPPO_DIR, "sessions")
    with file_lock(os.path.join(folder, ".lock"), owner_only=folder):
        yield


def _redacted(text: str | None) -> str | None:
    # Imported here: a hook that records no text (most of them) never loads the rules.
    if text is None:
        return None
    from hippo_core.transcripts.privacy import redact

    return redact(text).text


def new_declared(raw_id: str, tool: str, *, task: str | None, cwd: str | None) -> dict[str, Any]:
    """A fresh declared record (not yet written); ``task`` is redacted."""
    task = _redacted(task)
    return {
        "id": session_id(raw_id),
        "tool": tool,
        "kind": DECLARED,
        "native_id": raw_id,
        "started": now(),
        "ended": None,
        "cwd": cwd,
        "task": task,
        "context_bytes": 0,
        "notes": [],
        "handoff": None,
        "no_change": None,
        "end_reason": None,
    }


def declare(
    workspace: Workspace,
    raw_id: str,
    tool: str,
    *,
    task: str | None = None,
    cwd: str | None = None,
    write: bool = True,
) -> dict[str, Any]:
    """The declared record of ``raw_id``, created (replacing a derived one) if needed.

    ``write=False`` leaves writing it to the caller, who changes it further first.
    """
    record = load_record(workspace, raw_id)
    if record is None or record.get("kind") != DECLARED:
        derived = record or {}
        record = new_declared(raw_id, tool, task=task, cwd=cwd)
        # What the transcript already told about the session stays true once declared.
        for key in ("tool", "native_id", "started", "cwd", "branch", "parent"):
            if derived.get(key):
                record[key] = derived[key]
    elif task and not record.get("task"):
        record["task"] = _redacted(task)
    if write:
        write_record(workspace, record)
    return record


def touched_note(workspace: Workspace, given: str) -> str:
    """The note a session names with ``--note``, as its path from the workspace
    (``notes/Deploy.md``): a ``.md`` file below ``notes_dir`` that exists. The path is read
    from the current folder, or from the workspace's when it is not found there."""
    notes = os.path.realpath(workspace.notes_dir)
    for base in (os.getcwd(), workspace.folder):
        path = os.path.realpath(os.path.join(base, given))
        if os.path.isfile(path):
            break
    shown = workspace.relative(workspace.notes_dir)
    if os.path.commonpath([notes, path]) != notes or not path.endswith(".md"):
        raise HippoError(
            f"--note {given}: not a note of this workspace; give the path of a .md file "
            f"below {shown}/, such as {shown}/Deploy.md"
        )
    if not os.path.isfile(path):
        raise HippoError(f"--note {given}: no such note; check the path (notes are in {shown}/)")
    return workspace.relative(os.path.join(workspace.notes_dir, os.path.relpath(path, notes)))


def end(
    workspace: Workspace,
    record: dict[str, Any],
    *,
    notes: list[str] | None = None,
    handoff: str | None = None,
    no_change: str | None = None,
) -> dict[str, Any]:
    """End a declared session, recording what it touched, its handoff or why nothing
    (both redacted)."""
    notes = list(dict.fromkeys(notes or []))
    record["ended"] = now()
    record["notes"] = list(dict.fromkeys([*record.get("notes", []), *notes]))
    if handoff is not None:
        record["handoff"] = _redacted(handoff)
        record["handoff_derived"] = False  # the session's own words win over a derived one
    if no_change is not None:
        record["no_change"] = _redacted(no_change)
    if notes or handoff is not None:
        record["end_reason"] = "changed"
    elif no_change is not None:
        record["end_reason"] = "no-change"
    elif not record.get("end_reason"):
        record["end_reason"] = UNSPECIFIED
    write_record(workspace, record)
    announce(workspace, "session-ended", {"session": record["id"], "tool": record.get("tool")})
    return record


def announce(workspace: Workspace, name: str, data: dict[str, Any]) -> None:
    """Tell the plugins what happened to a session (``hippo_event``): the activity
    triggers start a dream on it."""
    from hippo_core.plugins.events import Event
    from hippo_core.plugins.manager import load_plugins

    load_plugins(hot=True).event(workspace, Event(name, data))


def end_session(
    workspace: Workspace,
    raw_id: str | None,
    *,
    notes: list[str] | None = None,
    handoff: str | None = None,
    no_change: str | None = None,
) -> dict[str, Any]:
    """What ``hippo session end`` does: end session ``raw_id`` (or the latest open declared
    one), declaring it first if only a derived record had it; each note is checked with
    :func:`touched_note`. Returns the record as written."""
    touched = [touched_note(workspace, note) for note in notes or []]
    with records_lock(workspace):
        if raw_id is None:
            record = latest_open(workspace)
            if record is None:
                raise HippoError("no open session here: give --id ID (see `hippo session start`)")
        else:
            record = read_record(workspace, raw_id)
            if record.get("kind") != DECLARED:
                record = declare(workspace, raw_id, str(record.get("tool") or "manual"))
        return end(workspace, record, notes=touched, handoff=handoff, no_change=no_change)


def latest_open(workspace: Workspace) -> dict[str, Any] | None:
    """The most recently started declared session that has not ended."""
    open_records = [
        r for r in session_records(workspace) if r.get("kind") == DECLARED and not r.get("ended")
    ]
    return max(open_records, key=lambda r: str(r.get("started") or ""), default=None)
