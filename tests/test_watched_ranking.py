"""With a watcher running, it ranks for the hooks (``relevance = "bm25"`` and ``"history"``),
from each task word's notes held in memory: its answer is the one the hook finds by itself,
order and ties included, on corpora where most notes share most words, after edits, and
with past sessions of the workspace indexed by the real `hippo ingest`.

The watcher runs for real in a thread (inotify, its socket in a folder of the test's own).
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hippo_core import Workspace
from hippo_core.context.relevance import relevant_paths
from hippo_core.notes import postings, watched
from hippo_core.notes.postings import TermNotes
from hippo_core.notes.terms import terms as stems

from .claude_factory import ClaudeSession
from .conftest import HippoRunner, WorkspaceMaker
from .watchers import WatcherThread, runtime_folder  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the watcher needs inotify")

WORDS = ["deploy", "queue", "cache", "ledger", "refund", "retry", "lock", "token", "build"]


def corpus(rng: random.Random, count: int) -> dict[str, str]:
    notes = {"Home.md": "# Home\n\nWelcome.\n"}
    for i in range(count):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40)))
        dated = f"---\nupdated: 2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}\n---\n"
        title = " ".join(rng.sample(WORDS, 2))
        notes[f"area-{i % 4}/n{i:03}.md"] = f"{dated if i % 3 else ''}# {title}\n\n{body}\n"
    return notes


def tasks(rng: random.Random) -> list[str]:
    found = [*WORDS, "deploy nowhere", "nowhere at all"]
    return found + [" ".join(rng.sample(WORDS, rng.randint(2, 5))) for _ in range(20)]


class Watching:
    """A watcher of the workspace at ``root`` in a thread, and the rankings it gave."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.answers: list[list[str] | None] = []
        ask = watched.watched_ranking

        def recorded(*args: object) -> list[str] | None:
            found = ask(*args)  # type: ignore[arg-type]
            self.answers.append(found)
            return found

        monkeypatch.setattr(watched, "watched_ranking", recorded)
        self.serving = WatcherThread(root, with_terms=True)

    def stop(self) -> None:
        self.serving.stop()


def by_itself(root: Path, task: str) -> list[str]:
    """The ranking the hook finds with no watcher asked."""
    workspace = Workspace.open(root)
    workspace.notes_index.watched = False
    return relevant_paths(workspace, task)


def asked(root: Path, task: str) -> list[str]:
    workspace = Workspace.open(root)
    assert workspace.notes_index.watched  # the watcher said the index is fresh
    return relevant_paths(workspace, task)


@pytest.mark.parametrize("seed", range(3))
def test_the_watcher_ranks_by_bm25_as_the_hook_does(
    make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    root = make_workspace('relevance = "bm25"\n', corpus(rng, 120))
    monkeypatch.setattr(postings, "FIRST_READ", 2)  # read few at a time: stop early, often
    watching = Watching(root, monkeypatch)
    try:
        for task in tasks(rng):
            assert asked(root, task) == by_itself(root, task), task
        # Edits move the mean length and every impact: the watcher reads its notes again.
        for i in rng.sample(range(120), 30):
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(50, 150)))
            (root / "notes" / f"area-{i % 4}" / f"n{i:03}.md").write_text(f"# Edited\n\n{body}\n")
        (root / "notes" / "area-0" / "n000.md").unlink()
        for task in tasks(rng):
            assert asked(root, task) == by_itself(root, task), task
    finally:
        watching.stop()
    assert watching.answers and all(answer is not None for answer in watching.answers)


def test_notes_tied_across_the_cut_are_all_in_the_running(
    make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Twelve notes score alike; the five shown are the most recently updated.
    notes = {"Home.md": "# Home\n\nWelcome.\n"} | {
        f"n{i:02}.md": f"---\nupdated: 2026-01-{i + 1:02}\n---\n# Zebra\n\nLine {i:02}.\n"
        for i in range(12)
    }
    root = make_workspace('relevance = "bm25"\n', notes)
    watching = Watching(root, monkeypatch)
    try:
        assert asked(root, "zebra") == [f"n{i:02}.md" for i in (11, 10, 9, 8, 7)]
    finally:
        watching.stop()
    assert watching.answers == [[f"n{i:02}.md" for i in (11, 10, 9, 8, 7)]]


def test_the_watcher_ranks_by_history_as_the_hook_does(
    make_workspace: WorkspaceMaker,
    monkeypatch: pytest.MonkeyPatch,
    hippo: HippoRunner,
    claude_home: Path,
) -> None:
    rng = random.Random(7)
    notes = corpus(rng, 80)
    root = make_workspace('relevance = "history"\n', notes)
    paths = sorted(path for path in notes if path != "Home.md")
    start = datetime.now(UTC) - timedelta(days=300)
    for number in range(60):
        made = ClaudeSession(claude_home, str(root), start=start + timedelta(days=5 * number))
        made.prompt(" ".join(rng.sample(WORDS, 3)) + " please")
        for path in rng.sample(paths, rng.randint(1, 3)):
            made.tool("Read", file_path=str(root / "notes" / path))
        made.answer("done").write()
    assert hippo("ingest", cwd=root).code == 0
    watching = Watching(root, monkeypatch)
    try:
        for task in tasks(rng):
            assert asked(root, task) == by_itself(root, task), task
        # A note the sessions opened is superseded: neither ranks it any more.
        superseded = root / "notes" / paths[0]
        superseded.write_text("---\nstatus: superseded\n---\n# Old\n\ndeploy queue cache\n")
        for task in tasks(rng):
            assert asked(root, task) == by_itself(root, task), task
    finally:
        watching.stop()
    assert watching.answers and all(answer is not None for answer in watching.answers)


def test_the_watcher_never_ranks_the_session_log_either(
    make_workspace: WorkspaceMaker,
    monkeypatch: pytest.MonkeyPatch,
    hippo: HippoRunner,
    claude_home: Path,
) -> None:
    # The log holds every word the sessions used, and sessions read it: no ranking names it.
    rng = random.Random(11)
    root = make_workspace('relevance = "history"\n', corpus(rng, 40))
    for number in range(12):
        hippo("session", "start", "--id", f"s{number}", cwd=root)
        handoff = " ".join(rng.sample(WORDS, 6)) + " done."
        hippo("session", "end", "--id", f"s{number}", "--handoff", handoff, cwd=root)
    assert hippo("log", cwd=root).code == 0
    for _ in range(5):
        made = ClaudeSession(claude_home, str(root)).prompt(" ".join(rng.sample(WORDS, 3)))
        made.tool("Read", file_path=str(root / "notes" / "Session log.md")).answer("ok").write()
    assert hippo("ingest", cwd=root).code == 0
    watching = Watching(root, monkeypatch)
    try:
        for task in tasks(rng):
            found = asked(root, task)
            assert found == by_itself(root, task), task
            assert "Session log.md" not in found, task
    finally:
        watching.stop()
    assert watching.answers and all(answer is not None for answer in watching.answers)


@pytest.mark.parametrize("way", ["titles first", "threshold alone"])
def test_term_notes_are_what_scoring_every_note_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    # From the titles first (falling back on the threshold algorithm when their bound is too
    # loose), or the threshold algorithm alone, read two notes at a time: the index's own.
    from hippo_core.notes.index import open_index

    rng = random.Random(3)
    folder = tmp_path / "notes"
    folder.mkdir()
    for path, text in corpus(rng, 200).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    index = open_index(folder, tmp_path / "notes.sqlite", with_terms=True)
    held = TermNotes(index)
    monkeypatch.setattr(postings, "FIRST_READ", 2)
    answered = []
    by_titles = postings._by_titles

    def counted(*args: object) -> list[str] | None:
        found = None if way == "threshold alone" else by_titles(*args)  # type: ignore[arg-type]
        answered.append(found is not None)
        return found

    monkeypatch.setattr(postings, "_by_titles", counted)
    for task in tasks(rng):
        wanted = stems(task)
        for limit in (1, 5, 12):
            assert held.best(wanted, limit) == index.bm25_scored(wanted, limit), task
    assert any(answered) == (way == "titles first")


def test_a_question_the_watcher_cannot_answer_leaves_the_ranking_to_the_hook(
    make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    root = make_workspace('relevance = "bm25"\n', corpus(random.Random(1), 30))
    watching = Watching(root, monkeypatch)
    index = str(root / ".hippo" / "cache" / "notes.sqlite")
    notes = str(root / "notes")
    where = watched.socket_path(index)
    assert where is not None
    try:
        wrong = (
            '{"terms": "deploy", "limit": 5}',
            '{"terms": ["deploy"], "limit": "5"}',
            '{"terms": ["deploy"], "limit": 5, "history": "yes"}',
        )
        for question in ("not json", '{"limit": 5}', '["x"]', "{}", *wrong):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(5)
            conn.connect(where)
            conn.sendall(watched.request(index, notes, True, question))
            assert conn.recv(100) == watched.FRESH, question  # fresh, and no ranking
            conn.close()
        # A task with a lone surrogate cannot be sent: the hook ranks by itself.
        assert watched.watched_ranking(index, notes, {"terms": ["\ud800"], "limit": 5}) is None
        # The watcher still answers, and ranks.
        task = "deploy queue"
        assert asked(root, task) == by_itself(root, task)
    finally:
        watching.stop()
    assert watching.answers[-1] is not None
