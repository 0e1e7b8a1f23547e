"""How many notes hold each term, in all and in each field, what BM25's idf needs, is kept
in the notes index as notes come, change, are superseded and go (a count of the terms' rows
would read every row of a word most notes have, on every ranking), and ranks as counting
the rows would; with each field's bounds on what a term can give a note, which the ranking
without a watcher trusts."""

from __future__ import annotations

import math
import random
from pathlib import Path

from hippo_core.notes.fields import FIELDS
from hippo_core.notes.index import NotesIndex, open_index
from hippo_core.notes.terms import terms as stems

WORDS = ["deploy", "queue", "cache", "ledger", "refund", "retry", "lock", "token", "build"]


def write_notes(folder: Path, rng: random.Random, count: int, length: int) -> None:
    for i in range(count):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, length)))
        (folder / f"n{i:03}.md").write_text(f"# {' '.join(rng.sample(WORDS, 2))}\n\n{body}\n")


def test_the_counts_kept_as_notes_change_are_those_of_the_notes(tmp_path: Path):
    rng = random.Random(5)
    notes = tmp_path / "notes"
    notes.mkdir()
    write_notes(notes, rng, 60, 30)
    cache = tmp_path / "notes.sqlite"
    open_index(notes, cache, with_terms=True)
    (notes / "n001.md").unlink()
    (notes / "n002.md").write_text("# Zebra\n\nzebra only\n")
    (notes / "n003.md").write_text("---\nstatus: superseded\n---\n# Deploy\n\ndeploy\n")
    (notes / "n004.md").write_text("# Cache\n\ncache cache\n")
    (notes / "n005.md").write_text("# Lock\n\n## Queue queue\n\nlock " + "cache " * 90 + "\n")
    index = open_index(notes, cache, with_terms=True)
    kept = dict(index.conn.execute("SELECT term, notes FROM frequency"))
    counted = dict(index.conn.execute("SELECT term, count(*) FROM terms GROUP BY term"))
    assert kept == counted
    assert kept[stems("zebra")[0]] == 1
    assert_fields_counted(index)
    # A term no note holds any more is gone from the counts.
    (notes / "n002.md").unlink()
    index = open_index(notes, cache, with_terms=True)
    assert stems("zebra")[0] not in dict(index.conn.execute("SELECT term, notes FROM frequency"))


def assert_fields_counted(index: NotesIndex) -> None:
    """Each field's count of the notes that hold each term is the count of its rows, and its
    bounds bound them: no note holds the term there more often, or is shorter there."""
    for field in FIELDS:
        name = field.name
        kept = {
            term: (notes, most, least)
            for term, notes, most, least in index.conn.execute(
                f"SELECT term, {name}, {name}_most, {name}_least FROM frequency"
            )
        }
        for term, notes, most, least in index.conn.execute(
            f"SELECT term, count(*), max({name}), min({name}_length) FROM terms "
            f"WHERE {name} GROUP BY term"
        ):
            assert kept[term][0] == notes, (name, term)
            assert kept[term][1] >= most and kept[term][2] <= least, (name, term)
        held = {row[0] for row in index.conn.execute(f"SELECT term FROM terms WHERE {name}")}
        assert {term for term, (notes, _, _) in kept.items() if notes} == held, name


def test_the_counts_and_bounds_stay_true_through_random_edits(tmp_path: Path):
    rng = random.Random(11)
    notes = tmp_path / "notes"
    notes.mkdir()
    write_notes(notes, rng, 30, 40)
    cache = tmp_path / "notes.sqlite"
    for _ in range(25):
        path = notes / f"n{rng.randrange(40):03}.md"
        if path.exists() and rng.random() < 0.3:
            path.unlink()
        else:
            heading = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 60)))
            title = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
            path.write_text(f"# {title}\n\n## {heading}\n\n{body}\n")
        index = open_index(notes, cache, with_terms=True)
        assert_fields_counted(index)
        index.conn.close()


def test_bm25_ranks_by_the_counts_of_notes_that_hold_each_term(tmp_path: Path):
    # "ledger" is in one note of twenty, "cache" in all: a note with "ledger" once ranks
    # above one with "cache" thrice, as idf says.
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(19):
        (notes / f"c{i:02}.md").write_text(f"# Note {i}\n\ncache cache cache\n")
    (notes / "ledger.md").write_text("# Books\n\nledger cache\n")
    index = open_index(notes, tmp_path / "notes.sqlite", with_terms=True)
    wanted = stems("ledger cache")
    ranked = index.bm25_scored(wanted, 3)
    assert ranked[0][0] == "ledger.md"
    count = 20
    rare = math.log(1 + (count - 1 + 0.5) / (1 + 0.5))
    assert ranked[0][1] > rare * 0.5 > ranked[1][1]
