"""BM25's best few as the watcher finds them, from each term's notes held in memory.

A hook ranks by scoring every note that has a word of the task, one pass of SQL over those
notes' rows (:meth:`~hippo_core.notes.index.NotesIndex.bm25_scored`): its cost grows with
the notes. The watcher (:mod:`hippo_core.notes.watch`) runs anyway, so it keeps, for each
term it was asked, the term's notes sorted by what the term gives each (its impact, summed
over the fields: :meth:`~hippo_core.notes.fields.Scoring.impact`) and a dictionary of them.
It then finds the best few by Fagin's threshold algorithm: it reads each term's notes from
the top, a few more at a time, scores each note it meets from every term's dictionary, and
stops once the last of the best few scores more than any note it has not met can: the sum
over the terms of the impact at the depth read. The notes index then scores
those few (and any within a rounding of the last) as the hook would, so the order, ties and
all, is the hook's.

A term's notes are read from the index the first time it is asked, and kept until the
index changes (any change moves the mean lengths and the idfs, and so every impact); at most
:data:`MAX_POSTINGS` of them are kept, the terms asked longest ago dropped first.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict

from hippo_core.notes.fields import FIELDS
from hippo_core.notes.index import MARGIN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.notes.fields import Scoring
    from hippo_core.notes.index import NotesIndex

#: How many (term, note) pairs are kept in memory at most: about 100 bytes each.
MAX_POSTINGS = 400_000
#: How many of each term's notes are read first, at least (then twice as many each time).
FIRST_READ = 16

Postings = tuple[list[str], list[float], dict[str, float]]


class TermNotes:
    """The notes of each term asked of ``index``, by impact, while the index stays as it was."""

    def __init__(self, index: NotesIndex) -> None:
        self.index = index
        self._held: OrderedDict[str, Postings] = OrderedDict()
        self._size = 0
        self._as_of: tuple[object, ...] | None = None

    def best(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """:meth:`NotesIndex.bm25_scored` ``(terms, limit)``, found from the top of each
        term's notes."""
        terms = list(dict.fromkeys(terms))
        scoring = self.index.scoring(terms)
        if scoring is None or limit <= 0:
            return []
        self._still(scoring.means)
        lists = [self._postings(term, scoring) for term in scoring.terms]
        given = [impacts for _, _, impacts in lists]
        scored: dict[str, float] = {}
        depth, step = 0, max(FIRST_READ, 2 * limit)
        while True:
            end, ceiling, deeper = depth + step, 0.0, False
            for paths, impacts, _ in lists:
                for path in paths[depth:end]:
                    if path not in scored:
                        scored[path] = sum(found.get(path, 0.0) for found in given)
                if len(paths) > end:  # a note not met gives at most the next one's impact
                    ceiling += impacts[end]
                    deeper = True
            depth = end
            if not deeper:
                break  # every note that has a term is scored
            if len(scored) >= limit and heapq.nlargest(limit, scored.values())[-1] > (
                ceiling + MARGIN
            ):
                break
            step *= 2
        last = heapq.nlargest(limit, scored.values())[-1] if len(scored) >= limit else 0.0
        near = [path for path, score in scored.items() if score >= last - MARGIN]
        return self.index.bm25_scored(terms, 0, among=near)[:limit]

    def _still(self, means: tuple[float, ...]) -> None:
        """Forget every term's notes when the index changed since they were read (its
        means, and the idfs with them, change only with it)."""
        conn = self.index.conn
        now = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes, means)
        if now != self._as_of:
            self._held.clear()
            self._size = 0
            self._as_of = now

    def _postings(self, term: str, scoring: Scoring) -> Postings:
        held = self._held.get(term)
        if held is not None:
            self._held.move_to_end(term)
            return held
        counts = ", ".join(field.name for field in FIELDS)
        lengths = ", ".join(f"{field.name}_length" for field in FIELDS)
        rows = self.index.conn.execute(
            f"SELECT path, {counts}, {lengths} FROM terms WHERE term = ?", (term,)
        ).fetchall()
        n = len(FIELDS)
        impact = {row[0]: scoring.impact(term, row[1 : 1 + n], row[1 + n :]) for row in rows}
        order = sorted(impact, key=lambda path: (-impact[path], path))
        postings = (order, [impact[path] for path in order], impact)
        self._held[term] = postings
        self._size += len(order)
        while self._size > MAX_POSTINGS and len(self._held) > 1:
            _, (dropped, _, _) = self._held.popitem(last=False)
            self._size -= len(dropped)
        return postings
