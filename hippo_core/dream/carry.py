"""Confirmed changes a dream could not land, carried to its next run.

A change confirmed after an earlier change of the same run to its note, which no longer
applies to the note as the run left it, or one whose note somebody edited while the run
went on, is not dropped: ``dream-state.json`` keeps it under ``carried`` (its pass, note
and evidence), and the next run dreams that evidence again, for that pass and note
alone, against the note as it is then. A change carried :data:`TRIES` times without
landing is let go, and the report says so.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from hippo_core.dream import state as dream_state
from hippo_core.dream.model import Chunk, Pass, SessionView

if TYPE_CHECKING:
    from hippo_core.dream.apply import Settled

#: How many runs a change is proposed again before it is let go.
TRIES = 3


def entry(settled: Settled, tries: int) -> dict[str, Any]:
    """What the state keeps of a carried change: enough to dream its evidence again."""
    proposal = settled.proposal
    return {
        "proposal": proposal.id,
        "pass": proposal.pass_key,
        "note": proposal.note,
        "evidence": [{"session": e.session, "ordinal": e.ordinal} for e in proposal.evidence],
        "tries": tries,
    }


def entries(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The carried changes the state holds, each checked; one a person broke is left out."""
    found = state.get("carried")
    if not isinstance(found, list):
        return []
    kept = []
    for item in found:
        if not isinstance(item, dict):
            continue
        evidence = item.get("evidence")
        if not (
            isinstance(item.get("pass"), str)
            and isinstance(item.get("note"), str)
            and isinstance(item.get("tries"), int)
            and isinstance(evidence, list)
            and all(
                isinstance(e, dict)
                and isinstance(e.get("session"), str)
                and type(e.get("ordinal")) is int
                for e in evidence
            )
        ):
            continue
        kept.append(item)
    return kept


def chunk_of(
    carried: list[dict[str, Any]],
    passes: list[Pass],
    views: dict[str, tuple[dict[str, Any], tuple[int, ...]]],
    index: Any,
) -> tuple[Chunk, list[SessionView], dict[str, frozenset[str] | None]] | None:
    """The chunk that dreams the carried changes' evidence again: its turns, their
    sessions (as the run's records show them) and, for each pass, the notes to look at
    (None for a pass that runs once for the chunk). None when no evidence turn is left."""
    known = {p.key: p for p in passes}
    times: dict[tuple[str, int], str] = {}
    wanted: dict[str, set[str]] = {}
    for item in carried:
        pass_ = known.get(item["pass"])
        if pass_ is None or index is None:
            continue
        found = False
        for evidence in item["evidence"]:
            pair = (evidence["session"], evidence["ordinal"])
            turn = index.turn(*pair)
            if turn is not None and turn.started and evidence["session"] in views:
                times[pair] = turn.started
                found = True
        if found:
            wanted.setdefault(pass_.key, set()).add(item["note"])
    moments = [m for m in map(dream_state.parse_time, times.values()) if m is not None]
    if not moments:
        return None
    chunk = Chunk(min(moments), max(moments) + timedelta(seconds=1), frozenset(times), "carried")
    sessions = []
    for sid in sorted({session for session, _ordinal in times}):
        record, _spans = views[sid]
        ordinals = tuple(sorted(o for s, o in times if s == sid))
        ended = dream_state.parse_time(record.get("ended"))
        sessions.append(SessionView(record, ordinals, max(moments), ended is not None))
    notes = {
        key: (frozenset(found) if known[key].per_note else None) for key, found in wanted.items()
    }
    return chunk, sessions, notes
