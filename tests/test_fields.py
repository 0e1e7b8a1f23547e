"""BM25 over a note's fields (``relevance = "bm25"`` and ``"history"``): the title (with the
file name), the headings and the body each scored on its own; and the ranking that looks at
the notes with a task word in their titles first gives what scoring every note gives."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hippo_core.notes.index import NotesIndex, open_index
from hippo_core.notes.terms import terms as stems

from .conftest import HippoRunner, WorkspaceMaker

WORDS = ["deploy", "queue", "cache", "ledger", "refund", "retry", "lock", "token", "build"]
FILLER = " ".join(f"word{i}" for i in range(300))


def ranked(root: Path, task: str, hippo: HippoRunner) -> list[str]:
    run = hippo("context", "--task", task, cwd=root)
    assert run.code == 0, run.err
    return [line.split(":")[0] for line in run.out.split("relevant:\n")[1].splitlines()]


def test_a_word_every_body_has_finds_the_note_it_titles(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    # "cache" is in nearly every body but one title: the long note it titles comes first.
    # Folded into one bag, the word's idf is that of a word every note has, and the title's
    # three counts drown in the long note's length: the short notes came first.
    notes = {
        "Home.md": "# Home\n\nWelcome.\n",
        "Storage.md": f"# Cache\n\nWhat the cache keeps and for how long. {FILLER}\n",
        **{
            f"n{i}.md": f"# Note {i}\n\nThe worker reads the cache, fills the cache, empties it.\n"
            for i in range(10)
        },
    }
    root = make_workspace('relevance = "bm25"\n', notes)
    assert ranked(root, "cache", hippo)[0] == "- Cache"


def test_the_file_name_is_read_as_the_title_and_an_index_by_its_folder(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    notes = {
        "Home.md": "# Home\n\nWelcome.\n",
        "deploys.md": "# How we ship\n\nSteps.\n",
        "refunds/index.md": "# Money back\n\nSteps.\n",
        **{f"n{i}.md": f"# Note {i}\n\nA deploy and a refund, said once.\n" for i in range(6)},
    }
    root = make_workspace('relevance = "bm25"\n', notes)
    assert ranked(root, "deploy", hippo)[0] == "- How we ship"
    assert ranked(root, "refunds", hippo)[0] == "- Money back"


def test_a_heading_counts_beside_the_body(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    # The same body words; a heading "Retries" lifts one note above the other.
    body = "The worker waits and tries the queue again after a retry.\n"
    notes = {
        "Home.md": "# Home\n\nWelcome.\n",
        "a.md": f"# Worker\n\n{body}",
        "b.md": f"# Worker\n\n## Retries\n\n{body}",
    }
    root = make_workspace('relevance = "bm25"\n', notes)
    workspace_index = open_index(root / "notes", None, with_terms=True)
    assert workspace_index.bm25_paths(stems("retry"), 2) == ["b.md", "a.md"]


def corpus(folder: Path, rng: random.Random, count: int) -> None:
    for i in range(count):
        title = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        heading = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 50)))
        dated = f"---\nupdated: 2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}\n---\n"
        text = f"{dated if i % 2 else ''}# {title}\n\n## {heading}\n\n{body}\n"
        (folder / f"{rng.choice(WORDS)}-{i:03}.md").write_text(text)


@pytest.mark.parametrize("seed", range(4))
def test_ranking_from_the_titles_first_is_scoring_every_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
):
    rng = random.Random(seed)
    notes = tmp_path / "notes"
    notes.mkdir()
    corpus(notes, rng, 120)
    index = open_index(notes, tmp_path / "notes.sqlite", with_terms=True)
    answered = []
    by_titles = NotesIndex._by_titles

    def counted(self: NotesIndex, *args: object) -> object:
        found = by_titles(self, *args)  # type: ignore[arg-type]
        answered.append(found is not None)
        return found

    tasks = [*WORDS, *(" ".join(rng.sample(WORDS, rng.randint(2, 4))) for _ in range(25))]
    for task in tasks:
        for limit in (1, 5, 12):
            wanted = stems(task)
            monkeypatch.setattr(NotesIndex, "_by_titles", counted)
            first = index.bm25_scored(wanted, limit)
            monkeypatch.setattr(NotesIndex, "_by_titles", lambda *args: None)
            assert first == index.bm25_scored(wanted, limit), (task, limit)
    # The titles told the ranking often, and left it to scoring every note at times.
    assert 0 < sum(answered) < len(answered)


def test_notes_tied_across_the_cut_are_found_from_the_titles_too(tmp_path: Path):
    # Twelve notes alike but for their dates: the fifth place is shared, and the five are
    # the most recently updated, as when every note is scored.
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(12):
        (notes / f"n{i:02}.md").write_text(
            f"---\nupdated: 2026-01-{i + 1:02}\n---\n# Zebra\n\nA zebra.\n"
        )
    for i in range(30):
        (notes / f"o{i:02}.md").write_text("# Other\n\nA zebra went by.\n")
    index = open_index(notes, tmp_path / "notes.sqlite", with_terms=True)
    assert index.bm25_paths(stems("zebra"), 5) == [f"n{i:02}.md" for i in (11, 10, 9, 8, 7)]
