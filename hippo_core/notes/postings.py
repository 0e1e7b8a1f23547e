"""BM25's best few as the watcher finds them, from each term's notes held in memory.

A hook ranks by scoring every note that has a word of the task, one pass of SQL over those
notes' rows (:meth:`~hippo_core.notes.index.NotesIndex.bm25_scored`): its cost grows with
the notes. The watcher (:mod:`hippo_core.notes.watch`) runs anyway, so it keeps, for each
term it was asked, the term's notes sorted by what the term gives each (its impact,
``tf / (tf + K1 * (1 - B + B * length / mean))``, the idf aside) and a dictionary of them.
It then finds the best few by Fagin's threshold algorithm: it reads each term's notes from
the top, a few more at a time, scores each note it meets from every term's dictionary, and
stops once the last of the best few scores more than any note it has not met can: the sum
over the terms of the idf times the impact at the depth read. The notes index then scores
those few (and any within a rounding of the last) as the hook would, so the order, ties and
all, is the hook's.

A term's notes are read from the index the first time it is asked, and kept until the
index changes (any change moves the mean length, and so every impact); at most
:data:`MAX_POSTINGS` of them are kept, the terms asked longest ago dropped first.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict

from hippo_core.notes.index import K1, B

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.notes.index import NotesIndex

#: How many (term, note) pairs are kept in memory at most: about 100 bytes each.
MAX_POSTINGS = 400_000
#: Far above where scores computed here and by SQLite may differ (their last bits), and
#: above the 1e-9 that scores are rounded to: a note this close to the last place is
#: scored by the index with the best few.
MARGIN = 2e-9
#: How many of each term's notes are read first, at least (then twice as many each time).
FIRST_READ = 16

Postings = tuple[list[str], list[float], dict[str, float]]


class TermNotes:
    """The notes of each term asked of ``index``, by impact, while the index stays as it was."""

    def __init__(self, index: NotesIndex) -> None:
        self.index = index
        self._held: OrderedDict[str, Postings] = OrderedDict()
        self._size = 0
        self._as_of: tuple[int, int, float] | None = None

    def best(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """:meth:`NotesIndex.bm25_scored` ``(terms, limit)``, found from the top of each
        term's notes."""
        terms = list(dict.fromkeys(terms))
        idf, mean = self.index.idf(terms)
        if not idf or limit <= 0:
            return []
        self._still(mean)
        lists = [(weight, self._postings(term, mean)) for term, weight in idf.items()]
        given = [(weight, impacts) for weight, (_, _, impacts) in lists]
        scored: dict[str, float] = {}
        depth, step = 0, max(FIRST_READ, 2 * limit)
        while True:
            end, ceiling, deeper = depth + step, 0.0, False
            for weight, (paths, impacts, _) in lists:
                for path in paths[depth:end]:
                    if path not in scored:
                        scored[path] = sum(w * found.get(path, 0.0) for w, found in given)
                if len(paths) > end:  # a note not met gives at most the next one's impact
                    ceiling += weight * impacts[end]
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

    def _still(self, mean: float) -> None:
        """Forget every term's notes when the index changed since they were read."""
        conn = self.index.conn
        now = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes, mean)
        if now != self._as_of:
            self._held.clear()
            self._size = 0
            self._as_of = now

    def _postings(self, term: str, mean: float) -> Postings:
        held = self._held.get(term)
        if held is not None:
            self._held.move_to_end(term)
            return held
        rows = self.index.conn.execute(
            "SELECT path, tf, length FROM terms WHERE term = ?", (term,)
        ).fetchall()
        impact = {path: tf / (tf + K1 * (1 - B + B * length / mean)) for path, tf, length in rows}
        order = sorted(impact, key=lambda path: (-impact[path], path))
        postings = (order, [impact[path] for path in order], impact)
        self._held[term] = postings
        self._size += len(order)
        while self._size > MAX_POSTINGS and len(self._held) > 1:
            _, (dropped, _, _) = self._held.popitem(last=False)
            self._size -= len(dropped)
        return postings
