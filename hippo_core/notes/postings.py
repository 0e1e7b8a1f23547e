"""BM25's best few as the watcher finds them, from each term's notes held in memory.

A hook ranks from the notes index in SQL (:meth:`~hippo_core.notes.index.NotesIndex.
bm25_scored`), reading the rows of the notes with a task word in their titles first. The
watcher (:mod:`hippo_core.context.watch`) runs anyway, so it keeps, for each term it was
asked, the term's notes sorted by what the term gives each (its impact, summed over the
fields: :meth:`~hippo_core.notes.fields.Scoring.impact`), a dictionary of them, what the
title gives each note that has the term in its title, and the most the other fields give
any note. It finds the best few as the hook does, from the titles first: the notes scored
in order of what their titles give, until what the other fields could add to a title
cannot reach the last of the best few. When that bound is too loose, it falls back on
Fagin's threshold algorithm: it reads each term's notes from the top, a few more at a
time, scores each note it meets from every term's dictionary, and stops once the last of
the best few scores more than any note it has not met can: the sum over the terms of the
impact at the depth read. The notes index then scores those few (and any within a rounding
of the last) as the hook would, so the order, ties and all, is the hook's.

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

#: A term's notes by impact, their impacts, a dictionary of them, what the title gives each
#: note that has the term in its title, and the most the other fields give any note.
Postings = tuple[list[str], list[float], dict[str, float], dict[str, float], float]


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
        near = _by_titles(lists, limit)
        if near is None:
            near = _threshold(lists, limit)
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
        nothing = (0,) * (n - 1)
        titles = {
            row[0]: scoring.impact(term, (row[1], *nothing), (row[1 + n], *nothing))
            for row in rows
            if row[1]
        }
        rest = max((impact[path] - titles.get(path, 0.0) for path in impact), default=0.0)
        postings = (order, [impact[path] for path in order], impact, titles, rest)
        self._held[term] = postings
        self._size += len(order)
        while self._size > MAX_POSTINGS and len(self._held) > 1:
            _, (dropped, *_) = self._held.popitem(last=False)
            self._size -= len(dropped)
        return postings


def _by_titles(lists: list[Postings], limit: int) -> list[str] | None:
    """The notes that may be among the ``limit`` best, found from the titles first (as
    :meth:`~hippo_core.notes.index.NotesIndex._by_titles` finds them); None when a note with
    no task word in its title may be among them."""
    given: dict[str, float] = {}
    for _, _, _, titles, _ in lists:
        for path, part in titles.items():
            given[path] = given.get(path, 0.0) + part
    if len(given) < limit:
        return None
    rest = sum(most for *_, most in lists) + MARGIN  # the others' bound, rounding and all
    impacts = [impact for _, _, impact, _, _ in lists]

    def score(path: str) -> float:
        return sum(impact.get(path, 0.0) for impact in impacts)

    first = heapq.nlargest(max(FIRST_READ, 2 * limit), given, key=given.__getitem__)
    scored = {path: score(path) for path in first}
    floor = heapq.nlargest(limit, scored.values())[-1]
    if rest >= floor - MARGIN:
        return None
    for path, part in given.items():
        if part + rest >= floor - MARGIN and path not in scored:
            scored[path] = score(path)
    last = heapq.nlargest(limit, scored.values())[-1]
    return [path for path, value in scored.items() if value >= last - MARGIN]


def _threshold(lists: list[Postings], limit: int) -> list[str]:
    """The notes that may be among the ``limit`` best, by Fagin's threshold algorithm over
    each term's notes by impact."""
    given = [impacts for _, _, impacts, _, _ in lists]
    scored: dict[str, float] = {}
    depth, step = 0, max(FIRST_READ, 2 * limit)
    while True:
        end, ceiling, deeper = depth + step, 0.0, False
        for paths, impacts, _, _, _ in lists:
            for path in paths[depth:end]:
                if path not in scored:
                    scored[path] = sum(found.get(path, 0.0) for found in given)
            if len(paths) > end:  # a note not met gives at most the next one's impact
                ceiling += impacts[end]
                deeper = True
        depth = end
        if not deeper:
            break  # every note that has a term is scored
        if len(scored) >= limit and heapq.nlargest(limit, scored.values())[-1] > (ceiling + MARGIN):
            break
        step *= 2
    last = heapq.nlargest(limit, scored.values())[-1] if len(scored) >= limit else 0.0
    return [path for path, score in scored.items() if score >= last - MARGIN]
