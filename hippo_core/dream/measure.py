"""``hippo eval verify``: how well verify's turn search finds what touched each note, on this
workspace's own sessions, with no model.

For each note, the truth is every turn of the workspace's sessions in the index that read,
edited or cited it. The search is asked over the whole history twice: as a dream asks it
(file hits first), and from the text alone (the note's title, headings, sources and name),
which is what finds a turn that only talked about the note. Each keeps its turns only when
a dream would prompt the note with them (one window: the whole history). Recall counts the
truth found over the truth a note could get (at most the search's 40 places); precision,
the text search's turns that did touch the note.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from hippo_core.base.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace


def measure_verify(workspace: Workspace) -> dict[str, Any]:
    from hippo_core.agents.sessions import session_records
    from hippo_core.dream.team_turns import turn_index
    from hippo_core.dream.turns import BODY_TERMS, MAX_TURNS

    index = turn_index(workspace)
    if index is None:
        raise HippoError("no transcript index yet: run `hippo ingest` first")
    records = session_records(workspace) + index.records()
    sessions = frozenset(str(r["id"]) for r in records)
    start, end = datetime(1970, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC)
    rows, truth_total, possible = [], 0, 0
    hits = text_hits = text_found = 0
    try:
        for note in workspace.notes:
            if note.path == workspace.log_note:
                continue
            note_file = workspace.notes_dir / note.path
            truth = index.touching(note_file, sessions)
            terms = workspace.terms_index
            telling = terms.telling(note.path, BODY_TERMS)
            found = index.mentioning(note, note_file, start, end, sessions, body_terms=telling)
            text = index.mentioning(
                note, note_file, start, end, sessions, by_file=False, body_terms=telling
            )
            # As a dream asks: turns that only share some words of the note prompt nothing.
            if not index.worth_a_prompt(found, note, terms, start, end, sessions):
                found = []
            if not index.worth_a_prompt(text, note, terms, start, end, sessions):
                text = []
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


class Case(NamedTuple):
    """A task to rank: its text, the notes its session read or edited, when the session
    started (seconds since the epoch; None when unknown) and its id."""

    task: str
    truth: set[str]
    started: float | None = None
    session: str | None = None


#: A ranking of the notes for a case's task. ``relevance = history`` may count only the
#: sessions that started before the case's own, and never that one, so that no task is
#: helped by its own session or a later one.
Ranker = Callable[[Case], list[str]]


def measure_context(
    workspace: Workspace, *, baseline: bool = True, latest: int | None = None
) -> dict[str, Any]:
    """``hippo eval context``: for each session of the workspace that read or edited notes,
    its task (declared, else its first prompt) against the notes it touched: recall@5 and
    MRR of the relevant list, beside a plain BM25 ranking of the whole notes (unless not
    ``baseline``: it reads every note). ``latest``: only that many sessions, those that
    started last, cut before the index is asked anything of them (a team index gives no
    more), so that ``hippo doctor`` costs the same after a year as after a month."""
    from hippo_core.agents.sessions import session_records
    from hippo_core.dream.team_turns import turn_index
    from hippo_core.index.history import epoch

    index = turn_index(workspace)
    if index is None:
        raise HippoError("no transcript index yet: run `hippo ingest` first")
    notes_root = str(workspace.notes_dir) + "/"
    cases: list[Case] = []
    try:
        records = session_records(workspace) + index.records(latest=latest)
        if latest is not None:
            records.sort(key=lambda record: epoch(_text(record.get("started"))) or 0.0)
            records = records[-latest:] if latest > 0 else []
        for record in records:
            sid = str(record["id"])
            truth = {
                path[len(notes_root) :]
                for kind, path in index.session_files(sid)
                if kind in ("read", "edited")
                and path.startswith(notes_root)
                and path.endswith(".md")
            }
            task = record.get("task") or index.first_prompt(sid)
            if truth and task.strip():
                started = record.get("started")
                when = epoch(started) if isinstance(started, str) else None
                cases.append(Case(task, truth, when, sid))
    finally:
        index.close()
    notes = [n for n in workspace.notes if n.path != workspace.log_note]
    rankings = {f"relevance = {name}": rank for name, rank in relevance_rankers(workspace).items()}
    if baseline:
        rankings["bm25 (baseline)"] = bm25_ranker(workspace)
    rated = {name: rates(rank, cases) for name, rank in rankings.items()}
    return {
        "tasks": len(cases),
        "notes": len(notes),
        "relevance": workspace.settings.relevance,
        "rankings": rated,
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def rates(rank: Ranker, cases: list[Case]) -> dict[str, Any]:
    """recall@5 and MRR of ``rank`` over the cases, averaged over tasks."""
    recall = mrr = 0.0
    for case in cases:
        top, truth = rank(case), case.truth
        recall += len(truth & set(top)) / len(truth)
        mrr += next((1 / (i + 1) for i, path in enumerate(top) if path in truth), 0.0)
    if not cases:
        return {"recall_at_5": None, "mrr": None}
    return {"recall_at_5": round(recall / len(cases), 3), "mrr": round(mrr / len(cases), 3)}


def relevance_rankers(workspace: Workspace) -> dict[str, Ranker]:
    """The context block's ranking for each ``relevance`` setting, as ``hippo context
    --task`` ranks with it: ``headings`` (the spec's rule, the five notes with most task
    words in their title and headings), ``bm25`` (terms of the whole note) and ``history``
    (bm25 with the notes past sessions opened: only the sessions that started before the
    task's own, their recency reckoned from its start; none when its start is unknown)."""
    from hippo_core.context.relevance import SETTINGS, relevant_paths

    def ranker(setting: str) -> Ranker:
        if setting != "history":
            return lambda case: relevant_paths(workspace, case.task, setting)
        return lambda case: relevant_paths(
            workspace,
            case.task,
            setting,
            before=case.started or 0.0,
            now=case.started,
            besides=case.session,
        )

    return {setting: ranker(setting) for setting in SETTINGS}


def bm25_ranker(workspace: Workspace) -> Ranker:
    """A plain BM25 (k1 1.2, b 0.75) over each note's whole text, words as the block reads
    them; the baseline the block's ranking is measured beside."""
    import math
    from collections import Counter

    from hippo_core.context.relevance import MAX_RELEVANT
    from hippo_core.notes.text import words

    bags: dict[str, Counter[str]] = {}
    for note in workspace.notes:
        if note.path == workspace.log_note:
            continue
        try:
            text = (workspace.notes_dir / note.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        bags[note.path] = Counter(words(text))
    frequency = Counter(w for bag in bags.values() for w in bag)
    lengths = {path: sum(bag.values()) for path, bag in bags.items()}
    mean = max(sum(lengths.values()) / max(len(bags), 1), 1)

    def rank(case: Case) -> list[str]:
        scores: dict[str, float] = {}
        for word in dict.fromkeys(words(case.task)):
            if not frequency[word]:
                continue
            idf = math.log(1 + (len(bags) - frequency[word] + 0.5) / (frequency[word] + 0.5))
            for path, bag in bags.items():
                tf = bag[word]
                if tf:
                    norm = 1.2 * (0.25 + 0.75 * lengths[path] / mean)
                    scores[path] = scores.get(path, 0.0) + idf * tf * 2.2 / (tf + norm)
        return sorted(scores, key=lambda p: (-scores[p], p))[:MAX_RELEVANT]

    return rank
