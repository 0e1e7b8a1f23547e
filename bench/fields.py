"""The fields' weights, k1 and b (hippo_core/notes/fields.py), chosen leaving one set out.

On each public data set (../shared/evals/retrieval, held-in), as bench/chronological.py
builds it (a session per commit, ingested by the real `hippo ingest`), every candidate of a
grid is measured by recall@5 of `relevance = bm25` over all the tasks and of `relevance =
history` on the tasks replayed in date order (each with only the sessions before its cut),
the sum of the two being a candidate's figure on a set. A candidate is a title weight, k1
and b (the headings share the title's k1 and b), a headings weight (0: the headings are no
field of their own, their lines count in the body alone) and the body's k1 and b.

- Leave one set out: the candidate best on one set, measured on the other, both ways. The
  held-out figures say what choosing on one set is worth on a set it did not see.
- Kept: the candidate whose worse set is nearest that set's best (the least worst regret):
  chosen on both, favouring neither. hippo's FIELDS should be it; the last line says so.
- Headings as a field: the same leave-one-set-out among the candidates with a headings
  weight of 0 and among the others.

The notes are read into fields by hippo's own note_terms, and each candidate ranks as the
notes index does (idf and mean length of each field; ties to the body's score, then updated,
then the path) and fuses with the history as relevance.fuse does. The grid's figures for
hippo's own FIELDS are checked against hippo's own ranking (relevant_paths) task by task.

Run: python bench/fields.py [--data FOLDER ...]  (about three minutes of CPU)
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "evals" / "retrieval"
K = 5
#: The grid: the body's k1 and b, the title's weight, k1 and b, the headings' weight.
BODY_K1, BODY_B = (1.0, 1.2, 1.6), (0.2, 0.3, 0.5)
TITLE_WEIGHT, TITLE_K1, TITLE_B = (0.4, 0.5, 0.6, 0.8, 1.0), (0.8, 1.2, 1.6, 2.0), (0.3, 0.5, 0.75)
HEADINGS_WEIGHT = (0.0, 0.15, 0.25, 0.35)

Rates = list[tuple[float, float]]


class Candidate(tuple):  # type: ignore[type-arg]
    """(title weight, title k1, title b, headings weight, body k1, body b)."""

    def __str__(self) -> str:
        wt, kt, bt, wh, k1, b = self
        return f"title {wt} (k1 {kt}, b {bt}), headings {wh}, body k1 {k1} b {b}"


class Fielded:
    """A data set's notes by field, and each task's per-field sums for any k1 and b."""

    FIELDS = ("title", "headings", "body")

    def __init__(self, workspace: object) -> None:
        from hippo_core.notes.terms import note_terms

        index = workspace.notes_index  # type: ignore[attr-defined]
        notes = index.notes()
        self.updated = {
            p: n.meta.updated.toordinal() if n.meta.updated else 0 for p, n in notes.items()
        }
        self.count = len(notes)
        self.postings: list[dict[str, list[tuple[str, int]]]] = [{}, {}, {}]
        self.lengths: list[dict[str, int]] = [{}, {}, {}]
        for path, note in notes.items():
            raw = (workspace.notes_dir / path).read_bytes()  # type: ignore[attr-defined]
            found = note_terms(note, raw)
            for f, counts in enumerate((found.title, found.headings, found.body)):
                self.lengths[f][path] = sum(counts.values())
                for term, tf in counts.items():
                    self.postings[f].setdefault(term, []).append((path, tf))
        self.means = [
            max(sum(lengths.values()) / max(self.count, 1), 1.0) for lengths in self.lengths
        ]
        self._sums: dict[tuple[tuple[str, ...], int, float, float], dict[str, float]] = {}

    def sums(self, wanted: tuple[str, ...], f: int, k1: float, b: float) -> dict[str, float]:
        """What the task's terms give each note in field ``f`` at weight 1: the sum over
        the terms of idf * tf / (tf + k1 * (1 - b + b * length / mean))."""
        key = (wanted, f, k1, b)
        found = self._sums.get(key)
        if found is None:
            found = {}
            for term in wanted:
                rows = self.postings[f].get(term, [])
                if not rows:
                    continue
                idf = math.log(1 + (self.count - len(rows) + 0.5) / (len(rows) + 0.5))
                for path, tf in rows:
                    norm = k1 * (1 - b + b * self.lengths[f][path] / self.means[f])
                    found[path] = found.get(path, 0.0) + idf * tf / (tf + norm)
            self._sums[key] = found
        return found

    def rank(
        self, wanted: tuple[str, ...], c: Candidate, history: dict[str, float] | None
    ) -> list[str]:
        """``bm25`` (no ``history``) or ``history`` under candidate ``c``."""
        from hippo_core.context.relevance import fuse

        wt, kt, bt, wh, k1, b = c
        title = self.sums(wanted, 0, kt, bt)
        headings = self.sums(wanted, 1, kt, bt) if wh else {}
        body = self.sums(wanted, 2, k1, b)
        score = {}
        for path in {*title, *headings, *body}:
            total = wt * title.get(path, 0.0) + wh * headings.get(path, 0.0) + body.get(path, 0.0)
            score[path] = (round(total, 9), round(body.get(path, 0.0), 9))
        best = heapq.nsmallest(
            K, score, key=lambda p: (-score[p][0], -score[p][1], -self.updated[p], p)
        )
        ranked = [(path, score[path][0]) for path in best]
        if not history:
            return best
        more = [(path, score[path][0]) for path in history if path in score]
        return fuse(ranked, history, more)[:K]


def rates(ranked: list[str], truth: set[str]) -> tuple[float, float]:
    top = ranked[:K]
    return len(truth & set(top)) / len(truth), next(
        (1 / (i + 1) for i, p in enumerate(top) if p in truth), 0.0
    )


def measure(name: str, candidates: list[Candidate]) -> dict[Candidate, tuple[Rates, Rates]]:
    """Each candidate's rates on data set ``name``: bm25 over all tasks, history in date
    order; and a check of hippo's own FIELDS against hippo's own ranking."""
    import json

    from chronological import workspace_of

    from hippo_core.context.relevance import history_scores, relevant_paths
    from hippo_core.notes.fields import FIELDS
    from hippo_core.notes.terms import terms

    data = DATA / name
    with tempfile.TemporaryDirectory() as tmp:
        workspace, _order, cases = workspace_of(data, Path(tmp))
        fielded = Fielded(workspace)
        have = set(fielded.updated)
        every = [json.loads(line) for line in (data / "tasks.jsonl").read_text().splitlines()]
        every = [(t["task"], set(t["truth"]) & have) for t in every]
        every = [(task, truth) for task, truth in every if truth]
        asked = [
            (
                tuple(sorted(set(terms(c.task)))),
                c.truth,
                history_scores(workspace, terms(c.task), before=c.before, now=c.now),
            )
            for c in cases
        ]
        title, headings, body = FIELDS
        own = Candidate((title.weight, title.k1, title.b, headings.weight, body.k1, body.b))
        agree = all(
            fielded.rank(tuple(sorted(set(terms(task)))), own, None)
            == relevant_paths(workspace, task, "bm25")
            for task, _ in every
        ) and all(
            fielded.rank(wanted, own, history)
            == relevant_paths(workspace, c.task, "history", before=c.before, now=c.now)
            for (wanted, _, history), c in zip(asked, cases, strict=True)
        )
        print(
            f"{name}: the grid ranks as hippo does with its own fields: {'yes' if agree else 'NO'}"
        )
        found = {}
        every_terms = [(tuple(sorted(set(terms(task)))), truth) for task, truth in every]
        for c in candidates:
            found[c] = (
                [rates(fielded.rank(wanted, c, None), truth) for wanted, truth in every_terms],
                [
                    rates(fielded.rank(wanted, c, history), truth)
                    for wanted, truth, history in asked
                ],
            )
    return found


def mean(rows: Rates, k: int = 0) -> float:
    return sum(row[k] for row in rows) / len(rows)


def main() -> None:
    from hippo_core.notes.fields import FIELDS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["pypa-hatch", "vitejs-vite"])
    args = parser.parse_args()
    candidates = [
        Candidate((wt, kt, bt, wh, k1, b))
        for k1, b, wt, kt, bt, wh in itertools.product(
            BODY_K1, BODY_B, TITLE_WEIGHT, TITLE_K1, TITLE_B, HEADINGS_WEIGHT
        )
    ]
    found = {name: measure(name, candidates) for name in args.data}

    def figure(c: Candidate, name: str) -> float:
        every, ordered = found[name][c]
        return mean(every) + mean(ordered)

    def line(c: Candidate, name: str) -> str:
        every, ordered = found[name][c]
        return (
            f"all tasks bm25 {mean(every):.3f} / {mean(every, 1):.3f}, in date order history "
            f"{mean(ordered):.3f} / {mean(ordered, 1):.3f}"
        )

    print(f"\n{len(candidates)} candidates; recall@5 / MRR@5 (held-in data)")
    names = args.data
    for group, among in (
        ("all candidates", candidates),
        ("headings no field", [c for c in candidates if not c[3]]),
        ("headings a field", [c for c in candidates if c[3]]),
    ):
        print(f"\nleave one set out, {group}:")
        for train in names:
            best = max(among, key=lambda c: figure(c, train))
            print(f"  chosen on {train}: {best}")
            for name in names:
                held = "held out" if name != train else "chosen on"
                print(f"    {name:<12} {line(best, name)}  ({held})")
    top = {name: max(figure(c, name) for c in candidates) for name in names}
    kept = min(candidates, key=lambda c: max(top[name] - figure(c, name) for name in names))
    print(f"\nkept (the least worst regret): {kept}")
    for name in names:
        print(f"  {name:<12} {line(kept, name)}")
    title, headings, body = FIELDS
    own = Candidate((title.weight, title.k1, title.b, headings.weight, body.k1, body.b))
    print(f"hippo's FIELDS: {own}: {'the one kept' if own == kept else 'NOT the one kept'}")


if __name__ == "__main__":
    main()
