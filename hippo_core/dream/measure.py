"""``hippo eval verify``: how well verify's turn search finds what touched each note, on this
workspace's own sessions, with no model.

For each note, the truth is every turn of the workspace's sessions in the index that read,
edited or cited it. The search is asked over the whole history twice: as a dream asks it
(file hits first), and from the text alone (the note's title, headings, sources and name),
which is what finds a turn that only talked about the note. Recall counts the truth found
over the truth a note could get (at most the search's 40 places); precision, the text
search's turns that did touch the note.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hippo_core.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.workspace import Workspace


def measure_verify(workspace: Workspace) -> dict[str, Any]:
    from hippo_core.dream.turns import MAX_TURNS, TurnIndex
    from hippo_core.home import index_path
    from hippo_core.sessions import all_records

    index = TurnIndex.open(index_path())
    if index is None:
        raise HippoError("no transcript index yet: run `hippo ingest` first")
    sessions = frozenset(str(r["id"]) for r in all_records(workspace))
    start, end = datetime(1970, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC)
    rows, truth_total, possible = [], 0, 0
    hits = text_hits = text_found = 0
    try:
        for note in workspace.notes:
            if note.path == workspace.log_note:
                continue
            note_file = workspace.notes_dir / note.path
            truth = index.touching(note_file, sessions)
            found = index.mentioning(note, note_file, start, end, sessions)
            text = index.mentioning(note, note_file, start, end, sessions, by_file=False)
            keys = {(t.session, t.ordinal) for t in found}
            text_keys = {(t.session, t.ordinal) for t in text}
            rows.append(
                {
                    "note": note.path,
                    "truth": len(truth),
                    "found": len(truth & keys),
                    "text_found": len(truth & text_keys),
                    "text_returned": len(text_keys),
                }
            )
            truth_total += len(truth)
            possible += min(len(truth), MAX_TURNS)
            hits += len(truth & keys)
            text_hits += len(truth & text_keys)
            text_found += len(text_keys)
    finally:
        index.close()
    touched = [r for r in rows if r["truth"]]
    return {
        "notes": len(rows),
        "notes_touched": len(touched),
        "sessions": len(sessions),
        "truth": truth_total,
        "recall": _rate(hits, possible),
        "text_recall": _rate(text_hits, possible),
        "text_precision": _rate(text_hits, text_found),
        "nothing_found": sum(1 for r in touched if not r["text_found"]),
        "by_note": rows,
    }


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None
