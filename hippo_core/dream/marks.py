"""Which notes a model changed lately, for the context block's marks.

A relevant line, or the entry section, whose note a dream (or any change hippo's applier
landed, a sleep's core included) changed in the last ``dreamed_days`` days says so, with
the date and the receipt, so that an agent and a person can tell a model's words from a
person's; a change a model approved (an agent's verdict on a queued item, as its receipt's
``invocation.by`` says) says that too. A change that was reverted leaves no mark.

Read on the agent's hot path: the latest change of each note is kept in
``.hippo/cache/dreamed.json``, made again from the receipts whenever their folder changed
(a dream, a revert, a pull of a teammate's receipts), so a prompt reads one small file.
Imports ``json`` and ``os`` only.
"""

from __future__ import annotations

import json
import os

from hippo_core.workspace.locate import HIPPO_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

CACHE = "dreamed.json"


def latest_changes(workspace: Workspace) -> dict[str, tuple[str, str, str]]:
    """For each note hippo's applier changed (and nobody reverted since), the time of its
    latest change, that change's receipt id, and ``model`` when an agent approved it (else
    "")."""
    folder = workspace.inside(HIPPO_DIR, "receipts")
    try:
        stamp = os.stat(folder).st_mtime_ns
    except OSError:
        return {}
    cache = workspace.inside(HIPPO_DIR, "cache", CACHE)
    try:
        with open(cache, "rb") as handle:
            kept = json.loads(handle.read())
        if kept.get("stamp") == stamp and isinstance(kept.get("notes"), dict):
            return {note: (at, rid, by) for note, (at, rid, by) in kept["notes"].items()}
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    found = _read(folder)
    try:  # written whole and renamed into place; plain os calls, as on the hot path
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = f"{cache}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"stamp": stamp, "notes": found}) + "\n")
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only workspace marks as well, reading the receipts each time
    return found


def _records(folder: str) -> list[dict[str, object]]:
    """Every readable JSON object in ``folder``, by name (ids sort by time)."""
    found = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            with open(os.path.join(folder, name), "rb") as handle:
                record = json.loads(handle.read())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def _read(folder: str) -> dict[str, tuple[str, str, str]]:
    changes: dict[str, tuple[str, str, str]] = {}
    undone: set[str] = set()
    try:
        records = _records(folder)
    except OSError:
        return {}
    for record in records:
        if record.get("type") == "revert" and record.get("state") == "reverted":
            undone.add(str(record.get("reverts")))
        elif record.get("state") == "applied" and isinstance(record.get("note"), str):
            at = str(record.get("applied") or "")
            note = str(record["note"])
            if at and (note not in changes or changes[note][0] <= at):
                changes[note] = (at, str(record.get("id")), _approver(record))
    return {note: change for note, change in changes.items() if change[1] not in undone}


def _approver(receipt: dict[str, object]) -> str:
    """``model`` when the receipt says an agent, not a person, approved the change."""
    invocation = receipt.get("invocation")
    by = invocation.get("by") if isinstance(invocation, dict) else None
    return "model" if isinstance(by, dict) and not by.get("person") else ""


def mark(workspace: Workspace, note: str, now: float) -> str:
    """``dreamed 2027-01-05, receipt <id>`` when a model changed ``note`` in the last
    ``dreamed_days`` days (``now``: seconds since the epoch), with ``approved by a model``
    before the receipt when an agent approved it; else empty."""
    days = workspace.settings.dreamed_days
    change = latest_changes(workspace).get(note) if days > 0 else None
    if change is None:
        return ""
    at, receipt, approver = change
    import calendar
    import time

    try:
        moment = calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return ""
    if now - moment > days * 86400:
        return ""
    approved = ", approved by a model" if approver == "model" else ""
    return f"dreamed {at[:10]}{approved}, receipt {receipt}"
