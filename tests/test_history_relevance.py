"""``relevance = "history"``: BM25 fused with the notes past sessions of like tasks opened.

Every test writes real Claude Code transcripts, indexes them with the real `hippo ingest`
and asks `hippo context --task` (or the hook, or `hippo eval context`) over real files.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hippo_core import Workspace
from hippo_core.context.relevance import relevant_paths
from hippo_core.transcripts.privacy import model_call_line

from .claude_factory import ClaudeSession
from .conftest import HippoRunner, WorkspaceMaker

NOTES = {
    "Home.md": "# Home\n\nWelcome.\n",
    # Nothing of "the checkout page hangs" is in this note: only history can find it.
    "Payments/Stripe webhooks.md": "# Stripe webhooks\n\nEvents arrive signed; verify them.\n",
    "Checkout.md": "# Checkout\n\nThe cart becomes an order here.\n",
    "Deploy.md": "# Deploy\n\nShip from main.\n",
    "Old.md": "---\nstatus: superseded\n---\n# Old webhooks\n\nNo longer true.\n",
}
TASK = "the checkout page hangs after paying"


def past(home: Path, root: Path, prompt: str, opened: list[str], days: float = 2) -> str:
    """A session of ``days`` ago that asked ``prompt`` and read each note of ``opened``."""
    made = ClaudeSession(home, str(root), start=datetime.now(UTC) - timedelta(days=days))
    made.prompt(prompt)
    for note in opened:
        made.tool("Read", file_path=str(root / "notes" / note))
    made.answer("done").write()
    return made.session


def relevant(hippo: HippoRunner, root: Path, task: str) -> list[str]:
    run = hippo("context", "--task", task, cwd=root)
    assert run.code == 0 and run.err == "", run.err
    if "relevant:\n" not in run.out:
        return []
    shown = run.out.split("relevant:\n", 1)[1].split("linter:", 1)[0]
    return [line.split(":", 1)[0][2:] for line in shown.splitlines()]


def set_relevance(hippo: HippoRunner, root: Path, value: str) -> None:
    assert hippo("config", "set", "relevance", value, cwd=root).code == 0


def test_history_names_the_notes_sessions_of_like_tasks_opened(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    root = make_workspace('relevance = "history"\n', NOTES)
    past(claude_home, root, "checkout hangs when paying by card", ["Payments/Stripe webhooks.md"])
    past(claude_home, root, "deploy the hotfix", ["Deploy.md"])
    assert hippo("ingest", cwd=root).code == 0
    assert relevant(hippo, root, TASK) == ["Checkout", "Stripe webhooks"]
    set_relevance(hippo, root, "bm25")
    assert relevant(hippo, root, TASK) == ["Checkout"]


def test_with_no_sessions_history_ranks_exactly_as_bm25(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    notes = NOTES | {f"n{i}.md": f"# Zebra {i}\n\nzebra stripes {'x ' * i}\n" for i in range(9)}
    root = make_workspace('relevance = "bm25"\n', notes)
    tasks = ["zebra", "zebra stripes", "checkout webhooks", TASK, "deploy zebra", "x"]
    bm25 = [hippo("context", "--task", task, cwd=root).out for task in tasks]
    set_relevance(hippo, root, "history")
    assert [hippo("context", "--task", task, cwd=root).out for task in tasks] == bm25
    # Sessions that opened no note (or no file at all) change nothing either.
    made = ClaudeSession(claude_home, str(root)).prompt("zebra stripes everywhere")
    made.tool("Read", file_path=str(root / "README.txt")).answer("done").write()
    ClaudeSession(claude_home, str(root)).prompt("zebra").answer("no files").write()
    assert hippo("ingest", cwd=root).code == 0
    assert [hippo("context", "--task", task, cwd=root).out for task in tasks] == bm25


def test_private_sessions_and_hippos_own_model_calls_never_count(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    root = make_workspace('relevance = "history"\n', NOTES)
    opened = ["Payments/Stripe webhooks.md"]
    past(claude_home, root, "<private-session>\ncheckout hangs when paying", opened)
    past(claude_home, root, f"{model_call_line()}\ncheckout hangs when paying", opened)
    assert hippo("ingest", cwd=root).code == 0
    assert relevant(hippo, root, TASK) == ["Checkout"]
    past(claude_home, root, "checkout hangs when paying", opened)  # the control
    assert hippo("ingest", cwd=root).code == 0
    assert relevant(hippo, root, TASK) == ["Checkout", "Stripe webhooks"]


def test_only_the_sessions_of_this_workspaces_notes_count(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    root = make_workspace('relevance = "history"\n', NOTES)
    other = make_workspace('relevance = "history"\n', NOTES)
    # Another project's session opened its own copy of the note.
    past(claude_home, other, "checkout hangs when paying", ["Payments/Stripe webhooks.md"])
    assert hippo("ingest", cwd=root).code == 0
    assert relevant(hippo, root, TASK) == ["Checkout"]
    assert relevant(hippo, other, TASK) == ["Checkout", "Stripe webhooks"]


def test_sessions_in_a_git_worktree_of_the_workspace_count(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path, tmp_path: Path
) -> None:
    import subprocess

    root = make_workspace('relevance = "history"\n', NOTES)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], check=True)
    tree = tmp_path / "feature-tree"
    subprocess.run([*git, "worktree", "add", "-q", str(tree)], check=True)
    # The session worked in the worktree and read the note there.
    past(claude_home, tree, "checkout hangs when paying by card", ["Payments/Stripe webhooks.md"])
    assert hippo("ingest", cwd=root).code == 0
    assert relevant(hippo, root, TASK) == ["Checkout", "Stripe webhooks"]
    # What the first prompt reads of the worktrees is a small file of its own.
    kept = json.loads((root / ".hippo" / "cache" / "folders.json").read_text())
    assert kept["payload"] == [str(root), str(tree)]


def test_notes_no_longer_there_or_superseded_are_ignored(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    root = make_workspace('relevance = "history"\n', NOTES)
    past(claude_home, root, "checkout hangs when paying", ["Old.md", "Gone.md"])
    past(claude_home, root, "checkout hangs on the card form", ["Payments/Stripe webhooks.md"])
    assert hippo("ingest", cwd=root).code == 0
    assert relevant(hippo, root, TASK) == ["Checkout", "Stripe webhooks"]
    # The notes folder renamed since: what the sessions opened is no note now.
    (root / "notes").rename(root / "docs")
    assert hippo("config", "set", "notes_dir", "docs", cwd=root).code == 0
    assert relevant(hippo, root, TASK) == ["Checkout"]


@pytest.mark.parametrize(
    "task",
    ["x", "結帳頁面卡住", "   ", "the checkout page hangs " * 2000],
    ids=["one letter", "another language", "blank", "huge"],
)
def test_odd_tasks_rank_as_bm25_does(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path, task: str
) -> None:
    root = make_workspace('relevance = "bm25"\n', NOTES)
    past(claude_home, root, "結帳 hangs", ["Deploy.md"])
    assert hippo("ingest", cwd=root).code == 0
    bm25 = hippo("context", "--task", task, cwd=root)
    set_relevance(hippo, root, "history")
    found = hippo("context", "--task", task, cwd=root)
    assert (found.code, found.err) == (0, "")
    if task.startswith("the checkout"):  # "hangs" is the past session's word too
        assert found.out == bm25.out.replace("linter:", "- Deploy: Ship from main.\nlinter:")
    else:
        assert found.out == bm25.out


def test_sessions_with_empty_or_huge_prompts_are_indexed_and_harmless(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    root = make_workspace('relevance = "history"\n', NOTES)
    past(claude_home, root, "", ["Deploy.md"])  # no prompt: no turn, nothing indexed
    past(claude_home, root, "do it now!", ["Deploy.md"])  # a prompt of no term
    huge = "checkout " + "log line with many words " * 20_000
    past(claude_home, root, huge, ["Payments/Stripe webhooks.md"])
    assert hippo("ingest", cwd=root).code == 0
    from hippo_core.files.home import index_path

    conn = sqlite3.connect(index_path())
    lengths = sorted(row[0] for row in conn.execute("SELECT length FROM history"))
    conn.close()
    # The prompt of common words has no terms; the huge one only those of its first 16,000
    # characters.
    assert lengths[0] == 0 and lengths[1] < 16_000 / 3
    assert relevant(hippo, root, TASK)[0] == "Checkout"


@pytest.mark.parametrize("index", [b"not a database at all" * 100, b""], ids=["garbage", "empty"])
def test_an_index_that_cannot_be_read_ranks_as_bm25(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, index: bytes
) -> None:
    from hippo_core.files.home import index_path

    root = make_workspace('relevance = "bm25"\n', NOTES)
    bm25 = hippo("context", "--task", TASK, cwd=root).out
    set_relevance(hippo, root, "history")
    index_path().parent.mkdir(parents=True, exist_ok=True)
    index_path().write_bytes(index)
    found = hippo("context", "--task", TASK, cwd=root)
    assert (found.code, found.out, found.err) == (0, bm25, "")


def test_an_index_of_an_older_hippo_ranks_as_bm25(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    from hippo_core.files.home import index_path

    root = make_workspace('relevance = "history"\n', NOTES)
    past(claude_home, root, "checkout hangs when paying", ["Payments/Stripe webhooks.md"])
    assert hippo("ingest", cwd=root).code == 0
    conn = sqlite3.connect(index_path())
    conn.execute("DROP TABLE history_terms")  # as an index written before the table was
    conn.commit()
    conn.close()
    found = hippo("context", "--task", TASK, cwd=root)
    assert (found.code, found.err) == (0, "")
    assert relevant(hippo, root, TASK) == ["Checkout"]


def test_the_first_prompts_hook_ranks_by_history(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path, monkeypatch
) -> None:
    import io
    import sys

    root = make_workspace('relevance = "history"\n', NOTES)
    past(claude_home, root, "checkout hangs when paying by card", ["Payments/Stripe webhooks.md"])
    assert hippo("ingest", cwd=root).code == 0
    payload = {"session_id": "s-1", "cwd": str(root), "prompt": TASK}
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    run = hippo("hook", "prompt", cwd=root)
    assert run.code == 0
    assert "- Stripe webhooks: Events arrive signed; verify them.\n" in run.out
    from hippo_core.files.home import hippo_home

    assert not (hippo_home() / "hooks.log").exists()


def test_eval_context_lets_no_task_see_its_own_session_or_a_later_one(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    root = make_workspace("", NOTES)
    # Two sessions ask alike and open the note no word of theirs finds. The earlier one has
    # nothing before it; the later one has the earlier: history finds 1 of 2, not 2 of 2.
    opened = ["Payments/Stripe webhooks.md"]
    past(claude_home, root, "card payments hang at checkout", opened, days=3)
    past(claude_home, root, "payments by card hang", opened, days=1)
    assert hippo("ingest", cwd=root).code == 0
    found = json.loads(hippo("eval", "context", "--json", cwd=root).out)
    assert found["tasks"] == 2
    rankings = found["rankings"]
    assert rankings["relevance = bm25"] == {"recall_at_5": 0.0, "mrr": 0.0}
    assert rankings["relevance = history"] == {"recall_at_5": 0.5, "mrr": 0.5}
    shown = hippo("eval", "context", cwd=root).out
    assert "relevance = history        0.50   0.50\n" in shown


def test_relevant_paths_measures_with_only_the_sessions_before_a_time(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path
) -> None:
    root = make_workspace('relevance = "history"\n', NOTES)
    past(claude_home, root, "checkout hangs when paying", ["Payments/Stripe webhooks.md"], days=5)
    assert hippo("ingest", cwd=root).code == 0
    workspace = Workspace.open(root)
    now = datetime.now(UTC)
    earlier = (now - timedelta(days=6)).timestamp()
    assert relevant_paths(workspace, TASK, before=earlier) == ["Checkout.md"]
    later = (now - timedelta(days=4)).timestamp()
    assert relevant_paths(workspace, TASK, before=later) == [
        "Checkout.md",
        "Payments/Stripe webhooks.md",
    ]


def test_sessions_page_by_page_are_in_the_order_sorting_them_all_gives() -> None:
    # Scores with ties, undated sessions: page after page of a few, the order is the one
    # sorting every session at once gives.
    import random

    from hippo_core.index.history import _pages

    rng = random.Random(4)
    for _ in range(300):
        count = rng.randint(1, 40)
        score = {row: rng.choice([1, 2, 2, 3, 7]) for row in range(count)}
        started = {row: rng.choice([None, 10.0, 20.0]) for row in range(count)}
        everything = sorted(
            score,
            key=lambda row, s=score, t=started: (-s[row], t[row] is None, -(t[row] or 0.0), -row),
        )
        pages = list(_pages(score, started, rng.randint(1, 5)))
        assert [row for page in pages for row, _, _ in page] == everything
