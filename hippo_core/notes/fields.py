"""BM25 over a note's fields: its title, its headings and its body, each scored on its own.

A note is read as a search engine reads a page. Folded into one bag of words, a title word
barely moves the score of a long note; scored as a field of its own, it counts as much on
a long note as on a short one. A task's term gives a note, in each field that holds it, the
field's weight times the term's idf in that field times its saturated count, and the parts
are summed (as Lucene and tantivy score a query over several fields):

    weight * idf * tf / (tf + k1 * (1 - b + b * length / mean))

where ``tf`` is the term's count in the field, ``length`` the field's length in the note
(in terms), ``mean`` the field's mean length over the notes, and ``idf`` is
``log(1 + (notes - df + 0.5) / (df + 0.5))`` with ``df`` the notes that hold the term in
that field: a word every body has but few titles do tells the notes apart by their titles.

The fields (:func:`~hippo_core.notes.terms.note_terms` reads them):

- ``title``: the title and the file name (``index.md`` and ``README.md`` by their folder's);
- ``headings``: the headings but the title;
- ``body``: everything after the frontmatter, the headings' lines among it.

The weights, k1 and b were chosen on the public retrieval sets
(``../shared/evals/retrieval``, held-in) leaving one set out: chosen on one, measured on the
other, both ways (``python bench/fields.py``); docs/limits.md gives the figures.
"""

from __future__ import annotations

import math

from hippo_core.base.records import Record


class Field(Record):
    """One field of a note: its column in the notes index, its weight, k1 and b."""

    __slots__ = ("name", "weight", "k1", "b")
    name: str
    weight: float
    k1: float
    b: float

    def __init__(self, name: str, weight: float, k1: float, b: float) -> None:
        self._set(name=name, weight=weight, k1=k1, b=b)


#: The fields, in the notes index's column order. b stays below 1, so that a field's norm
#: is never zero (an empty field of a note gives nothing, never a division by zero). The
#: body's b is low because a long note (a changelog, an index of the others) is long
#: because it holds much, not because it rambles.
FIELDS = (
    Field("title", 0.6, 1.2, 0.5),
    Field("headings", 0.25, 1.2, 0.5),
    Field("body", 1.0, 1.2, 0.3),
)
BODY = FIELDS[-1]


def idf(holders: int, notes: int) -> float:
    """BM25's idf of a term that ``holders`` of ``notes`` notes hold in a field (0 if none)."""
    if holders <= 0:
        return 0.0
    return math.log(1 + (notes - holders + 0.5) / (holders + 0.5))


class Scoring:
    """BM25 over the fields for one task's terms.

    ``found`` gives each term that some note holds, with how many notes hold it in each
    field; ``notes`` is how many notes there are and ``means`` each field's mean length.
    :meth:`sql` is the score of a note's rows of the index, :meth:`impact` the same sum in
    Python (what a term gives a note), :meth:`ceiling` the most a term can give any note in
    a field (from the largest count and the shortest length of a note that holds it there).
    """

    def __init__(
        self, found: list[tuple[str, tuple[int, ...]]], notes: int, means: tuple[float, ...]
    ) -> None:
        self.terms = [term for term, _ in found]
        self.means = means
        #: Each field's idf of each term, in the order of :data:`FIELDS`.
        self.idf = {term: tuple(idf(df, notes) for df in holders) for term, holders in found}
        self.values: dict[str, object] = {}
        for f, field in enumerate(FIELDS):
            self.values[f"{field.name}_mean"] = means[f]
        for i, term in enumerate(self.terms):
            self.values[f"w{i}"] = term
            for f, field in enumerate(FIELDS):
                self.values[f"{field.name}_{i}"] = self.idf[term][f]
        marks = ", ".join(f":w{i}" for i in range(len(self.terms)))
        #: The condition on the index's rows: those of the task's terms.
        self.having = f"term IN ({marks})"

    def sql(self, only: Field | None = None) -> str:
        """The score of a note as SQL over its rows (``GROUP BY path``): the sum over the
        task's terms and the fields (or the field ``only``), rounded to 9 places, so that
        sums of the same terms in another order tie and the next key decides."""
        parts = []
        for field in FIELDS if only is None else (only,):
            name = field.name
            cases = " ".join(f"WHEN :w{i} THEN :{name}_{i}" for i in range(len(self.terms)))
            norm = f"{field.k1!r} * (1 - {field.b!r} + {field.b!r} * {name}_length / :{name}_mean)"
            parts.append(f"{field.weight!r} * (CASE term {cases} END) * {name} / ({name} + {norm})")
        return f"round(sum({' + '.join(parts)}), 9)"

    def impact(self, term: str, counts: tuple[int, ...], lengths: tuple[int, ...]) -> float:
        """What ``term`` gives a note with these counts and lengths, field by field."""
        given = 0.0
        weights = self.idf[term]
        for f, field in enumerate(FIELDS):
            tf = counts[f]
            if tf:
                norm = field.k1 * (1 - field.b + field.b * lengths[f] / self.means[f])
                given += field.weight * weights[f] * tf / (tf + norm)
        return given

    def ceiling(self, term: str, f: int, most: int, least: int) -> float:
        """The most ``term`` can give a note in field ``f``, when no note holds it there
        more than ``most`` times and none that holds it is shorter there than ``least``."""
        if most <= 0:
            return 0.0
        field = FIELDS[f]
        norm = field.k1 * (1 - field.b + field.b * max(least, 0) / self.means[f])
        return field.weight * self.idf[term][f] * most / (most + norm)
