"""``hippo log``: the session log, one line per session, newest first.

Built from the session records, the index (turn counts) and the receipts (changes that
cite a session's turns). It is generated: running it again rewrites the whole file.
"""

from __future__ import annotations

import json

from hippo_core.agents import sessions
from hippo_core.files.atomic import atomic_write
from hippo_core.notes.text import LOG_HEADER
from hippo_core.workspace.folder import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HEADER = LOG_HEADER


def _turn_counts() -> dict[str, int]:
    """Turns per session from the index; empty when there is no readable index."""
    from hippo_core.base.errors import HippoError
    from hippo_core.files.home import index_path

    try:
        from sqlalchemy import text

        from hippo_core.index.db import open_for_reading

        engine = open_for_reading(index_path())
    except HippoError:
        return {}
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT session, count(*) FROM turns GROUP BY session"))
            return {sid: count for sid, count in rows}
    finally:
        engine.dispose()


def _changes(workspace: Workspace) -> dict[str, int]:
    """How many applied changes, not reverted since, cite each session in their evidence."""
    from hippo_core.dream.receipts import reverts

    counts: dict[str, int] = {}
    undone = {record.get("reverts") for record in reverts(workspace)}
    for path in sorted((workspace.hippo_dir / "receipts").glob("*.json")):
        try:
            receipt = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if not isinstance(receipt, dict) or receipt.get("state") != "applied":
            continue
        if receipt.get("id") in undone:
            continue
        evidence = receipt.get("evidence")
        cited = {e.get("session") for e in evidence or [] if isinstance(e, dict)}
        for sid in cited:
            if isinstance(sid, str):
                counts[sid] = counts.get(sid, 0) + 1
    return counts


def _outcome(record: dict[str, Any]) -> str:
    handoff = record.get("handoff")
    if isinstance(handoff, str) and handoff.strip():
        first = " ".join(handoff.strip().splitlines()[0].split())
        label = "handoff (derived)" if record.get("handoff_derived") else "handoff"
        return f"{label}: {first[:157] + '...' if len(first) > 160 else first}"
    if record.get("kind") != sessions.DECLARED:
        return "no handoff"
    if record.get("no_change"):
        return f"no change: {record['no_change']}"
    if record.get("ended") or record.get("end_reason"):
        return f"ended ({record.get('end_reason') or sessions.UNSPECIFIED})"
    return "open"


def render(workspace: Workspace) -> tuple[str, int]:
    """The log's text and the number of sessions in it."""
    records = sessions.session_records(workspace)
    turns, changes = _turn_counts(), _changes(workspace)
    records.sort(key=lambda r: (str(r.get("started") or ""), r["id"]), reverse=True)
    lines = []
    for record in records:
        sid = record["id"]
        started = str(record.get("started") or "unknown time").replace("T", " ")[:16]
        details = [record.get("kind") or "unknown"]
        if sid in turns:
            details.append(f"{turns[sid]} turn{'' if turns[sid] == 1 else 's'}")
        notes = record.get("notes") or []
        if notes:
            details.append("notes: " + ", ".join(f"`{n}`" for n in notes))
        if changes.get(sid):
            details.append(f"{changes[sid]} change{'' if changes[sid] == 1 else 's'}")
        lines.append(
            f"- {started} {record.get('tool') or 'unknown'} `{sid}` ({'; '.join(details)}): "
            f"{_outcome(record)}\n"
        )
    return HEADER + ("".join(lines) if lines else "No sessions recorded yet.\n"), len(lines)


def write_log(workspace: Workspace) -> int:
    """Write the log to ``log_path``; the number of sessions in it."""
    text, count = render(workspace)
    atomic_write(workspace.log_path, text)
    return count
