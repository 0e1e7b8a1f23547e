"""The session log `hippo log` writes is never one of the relevant notes (issue 35, F4).

It grows by a line per session, each with a task and a handoff, so every ranking matched it
to nearly every task: in a month of a team's sessions it was among the five relevant notes
of 73 % of first prompts, showing its generated disclaimer. It is kept and linted as a note,
but no `relevance` setting ranks it, wherever `log_path` puts it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, WorkspaceMaker

QUEUE = """---
type: topic
status: current
---
# Queue

The worker reads the `relay:outbox` Redis stream. Failed sends are retried with backoff.
"""
TASK = "why do retries back off so slowly in the worker log"
HANDOFFS = (
    "The worker parks messages without a tenant in relay:dead. [[Queue]] should say so.",
    "Retries back off 5 s, 30 s, 2 min. [[Queue]] should say so.",
)


def relevant(hippo: HippoRunner, root: Path) -> list[str]:
    shown = hippo("context", "--task", TASK, cwd=root).out
    return [line for line in shown.splitlines() if line.startswith("- ")]


@pytest.mark.parametrize("relevance", ["headings", "bm25", "history"])
@pytest.mark.parametrize("log_path", ["", "notes/Team/sessions.md"])
def test_the_session_log_is_never_a_relevant_note(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    claude_home: Path,
    relevance: str,
    log_path: str,
) -> None:
    settings = f'relevance = "{relevance}"\n' + (f'log_path = "{log_path}"\n' if log_path else "")
    root = make_workspace(settings, {"Home.md": "# Home\n\nWelcome.\n", "Queue.md": QUEUE})
    log = root / (log_path or "notes/Session log.md")
    for number, handoff in enumerate(HANDOFFS):
        sid = f"s{number}"
        hippo("session", "start", "--id", sid, "--task", "retries back off too slowly", cwd=root)
        assert hippo("session", "end", "--id", sid, "--handoff", handoff, cwd=root).code == 0
    assert hippo("log", cwd=root).code == 0
    # Past sessions like the task read the log and the queue note: the history ranking
    # would give both their score.
    for _ in range(3):
        made = ClaudeSession(claude_home, str(root)).prompt("retries back off slowly, why")
        made.tool("Read", file_path=str(log)).tool("Read", file_path=str(root / "notes/Queue.md"))
        made.answer("done").write()
    assert hippo("ingest", cwd=root).code == 0
    assert "Retries back off 5 s" in log.read_text()

    shown = relevant(hippo, root)
    assert not any("Session log" in line for line in shown), shown
    if relevance != "headings":  # the headings rule finds no task word in "Queue"
        assert shown[0].startswith("- Queue: ")
    # It is still a note: it is linted and linked, and a person may read it.
    log.write_text(log.read_text() + "See [[Nowhere]].\n")
    assert "dangling link" in hippo("notes", "lint", cwd=root).out
    assert not any("Session log" in line for line in relevant(hippo, root))


def test_a_note_that_only_looks_like_the_log_is_ranked(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    # The log is known by the exact lines `hippo log` begins it with, not by its title.
    notes = {"Home.md": "# Home\n\nWelcome.\n", "Log.md": "# Session log\n\nRetries back off.\n"}
    root = make_workspace('relevance = "bm25"\n', notes)
    assert relevant(hippo, root) == ["- Session log: Retries back off."]
