"""The sessions' history as ``relevance = "history"`` reads it: what each past session asked
and which Markdown files it opened.

Every ingest keeps three small tables of the transcript index up to date for the sessions it
changed (:func:`refresh`): ``history`` (a session that read or edited a Markdown file, when it
started, how many terms its prompts have), ``history_terms`` (those terms, stemmed as the
notes' are, with their counts) and ``history_notes`` (the files, absolute). A private session,
or one of hippo's own model calls, has no turns in the index and so no rows here.

The context block asks them once per task (:func:`best_sessions`, :func:`notes_of`): BM25
over the prompts of the sessions that opened a file of the workspace's notes folder, then the
notes those sessions opened. Both are one query over indexed rows, with no scan of the turns,
so the first prompt's hook can afford them.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections import Counter

from hippo_core.notes.terms import terms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: How much of a session's prompts is read for its terms: a pasted log or file must not
#: drown what the session was asked (nor the index).
MAX_PROMPT_CHARS = 16_000
#: BM25's saturation and length normalisation over the sessions' prompts (the textbook
#: values: a long session is long because it asked more, unlike a long note).
K1, B = 1.2, 0.75
#: Sessions per chunk of ``IN (...)`` at ingest.
CHUNK = 500
#: How long a reader waits for an ingest's write lock (readers of a WAL index rarely wait).
BUSY_SECONDS = 1.0


# -- kept at ingest --------------------------------------------------------------------------


def refresh(conn: sqlite3.Connection, generation: int) -> None:
    """Make the history rows of every session this ingest changed (those marked with
    ``generation``) again from its turns, inside the ingest's transaction."""
    changed = [
        row[0] for row in conn.execute("SELECT id FROM sessions WHERE changed = ?", (generation,))
    ]
    for chunk in _chunks(changed):
        marks = ", ".join("?" * len(chunk))
        for table in ("history", "history_terms", "history_notes"):
            conn.execute(f"DELETE FROM {table} WHERE session IN ({marks})", chunk)
        files: dict[str, list[str]] = {}
        for sid, path in conn.execute(
            "SELECT DISTINCT t.session, x.path FROM touched x JOIN turns t ON t.id = x.turn "
            f"WHERE t.session IN ({marks}) AND x.kind IN ('r', 'e') AND x.path LIKE '%.md'",
            chunk,
        ):
            files.setdefault(sid, []).append(path)
        if not files:
            continue
        wanted = list(files)
        marks = ", ".join("?" * len(wanted))
        prompts: dict[str, list[str]] = {}
        for sid, prompt in conn.execute(
            f"SELECT session, prompt FROM turns WHERE session IN ({marks}) "
            "ORDER BY session, ordinal",
            wanted,
        ):
            prompts.setdefault(sid, []).append(prompt)
        started = dict(
            conn.execute(f"SELECT id, started FROM sessions WHERE id IN ({marks})", wanted)
        )
        for sid, paths in files.items():
            counts = Counter(terms("\n".join(prompts.get(sid, ()))[:MAX_PROMPT_CHARS]))
            conn.execute(
                "INSERT INTO history (session, started, length) VALUES (?, ?, ?)",
                (sid, epoch(started.get(sid)), sum(counts.values())),
            )
            conn.executemany(
                "INSERT INTO history_terms (term, session, tf) VALUES (?, ?, ?)",
                [(term, sid, tf) for term, tf in counts.items()],
            )
            conn.executemany(
                "INSERT INTO history_notes (path, session) VALUES (?, ?)",
                [(path, sid) for path in paths],
            )


def epoch(stamp: str | None) -> float | None:
    """An ISO 8601 time as seconds since the epoch (UTC when it names no zone); None when
    it is no time."""
    from datetime import UTC, datetime

    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


# -- read for the context block --------------------------------------------------------------


def open_history(index: str) -> sqlite3.Connection | None:
    """The transcript index at ``index``, to read; None when there is none (no ingest yet)."""
    if not os.path.isfile(index):
        return None  # connecting would make an empty file
    try:
        conn = sqlite3.connect(index, timeout=BUSY_SECONDS, isolation_level=None)
    except sqlite3.Error:
        return None
    conn.execute("PRAGMA query_only = ON")
    conn.create_function("hippo_ln", 1, math.log, deterministic=True)
    return conn


def _ranges(roots: list[str]) -> tuple[str, dict[str, object]]:
    """A condition on ``path`` for files below any of ``roots`` (each ending in ``/``), as
    ranges the primary key serves: below ``/w/notes/`` is from it up to ``/w/notes0``."""
    values: dict[str, object] = {}
    parts = []
    for i, root in enumerate(roots):
        values[f"lo{i}"], values[f"hi{i}"] = root, root[:-1] + chr(ord(root[-1]) + 1)
        parts.append(f"(path >= :lo{i} AND path < :hi{i})")
    return " OR ".join(parts), values


def best_sessions(
    conn: sqlite3.Connection,
    roots: list[str],
    task_terms: list[str],
    limit: int,
    before: float | None = None,
    besides: str | None = None,
) -> list[tuple[str, float, float | None]]:
    """The ``limit`` sessions whose prompts BM25 ranks best for ``task_terms``, among those
    that opened a file below one of ``roots`` (and started before ``before``, seconds since
    the epoch, and are not ``besides``, when given): ``(session, score, started)``, best
    first, ties to the later."""
    task_terms = list(dict.fromkeys(task_terms))
    if not task_terms or not roots:
        return []
    below, values = _ranges(roots)
    values.update((f"t{i}", term) for i, term in enumerate(task_terms))
    among = ", ".join(f":t{i}" for i in range(len(task_terms)))
    kept = []
    if before is not None:
        kept.append("h.started < :before")
        values["before"] = before
    if besides is not None:
        kept.append("h.session <> :besides")
        values["besides"] = besides
    started = f"WHERE {' AND '.join(kept)}" if kept else ""
    norm = f"{K1} * (1 - {B} + {B} * p.length / s.mean)"
    query = f"""
        WITH mine AS MATERIALIZED (SELECT DISTINCT session FROM history_notes WHERE {below}),
        corpus AS MATERIALIZED (
            SELECT h.session, h.length, h.started FROM history h JOIN mine USING (session)
            {started}),
        sizes AS (SELECT count(*) AS n, max(total(length) / max(count(*), 1), 1.0) AS mean
                  FROM corpus),
        posts AS MATERIALIZED (
            SELECT t.term, t.session, t.tf, c.length, c.started
            FROM history_terms t JOIN corpus c USING (session) WHERE t.term IN ({among})),
        weights AS MATERIALIZED (
            SELECT p.term, hippo_ln(1 + (s.n - count(*) + 0.5) / (count(*) + 0.5)) AS idf
            FROM posts p, sizes s GROUP BY p.term)
        SELECT p.session, round(sum(w.idf * p.tf / (p.tf + {norm})), 9) AS score, p.started
        FROM posts p JOIN weights w USING (term), sizes s
        GROUP BY p.session ORDER BY score DESC, p.started DESC, p.session LIMIT {int(limit)}
    """
    return [(row[0], row[1], row[2]) for row in conn.execute(query, values)]


def notes_of(
    conn: sqlite3.Connection, sessions: list[str], roots: list[str]
) -> dict[str, list[str]]:
    """The files below ``roots`` each of ``sessions`` read or edited, relative to the root
    they are below, by session."""
    if not sessions or not roots:
        return {}
    below, values = _ranges(roots)
    values.update((f"s{i}", sid) for i, sid in enumerate(sessions))
    among = ", ".join(f":s{i}" for i in range(len(sessions)))
    found: dict[str, list[str]] = {}
    rows = conn.execute(
        f"SELECT session, path FROM history_notes WHERE session IN ({among}) AND ({below}) "
        "ORDER BY session, path",
        values,
    )
    for sid, path in rows:
        root = next(root for root in roots if path.startswith(root))
        found.setdefault(sid, []).append(path[len(root) :])
    return found
