"""`hippo init` writes the relevance that finds most, and `hippo doctor` says when another
would find clearly more on the workspace's own sessions (as `hippo eval context` counts)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hippo_core import Workspace
from hippo_core.agents.sessions import session_records

from .claude_factory import ClaudeSession
from .conftest import HippoRunner, write_notes


def sessions(home: Path, root: Path, prompt: str, note: str, count: int = 20) -> None:
    """``count`` sessions of ``root``, a day apart, each asking ``prompt`` and reading ``note``."""
    for day in range(count):
        start = datetime.now(UTC) - timedelta(days=count - day)
        made = ClaudeSession(home, str(root), start=start).prompt(prompt)
        made.tool("Read", file_path=str(root / "notes" / note)).answer("done").write()


def test_init_writes_history_with_why_and_a_file_without_it_keeps_the_rule(
    tmp_path: Path, hippo: HippoRunner
) -> None:
    assert hippo("init", cwd=tmp_path).code == 0
    text = (tmp_path / ".hippo" / "settings.toml").read_text()
    assert '\nrelevance = "history"\n' in text
    assert "# hippo init set history: on the public retrieval sets replayed in date order" in text
    assert "recall@5 0.86; headings 0.40, bm25 0.84" in text
    assert Workspace.open(tmp_path).settings.relevance == "history"
    lines = [line for line in text.splitlines() if not line.startswith("relevance =")]
    (tmp_path / ".hippo" / "settings.toml").write_text("\n".join(lines) + "\n")
    assert hippo("config", "get", "relevance", cwd=tmp_path).out == "headings\n"
    assert hippo("init", cwd=tmp_path).code == 0  # an existing file is kept as it is
    assert "relevance =" not in (tmp_path / ".hippo" / "settings.toml").read_text()


def test_init_keeps_the_rule_when_this_folders_own_sessions_say_it_finds_more(
    tmp_path: Path, hippo: HippoRunner, claude_home: Path
) -> None:
    # Six notes say "zebra" all over their bodies; the one sessions opened has it as its
    # title only. BM25, and history beside it, rank the six first; the headings rule finds it.
    notes = {"Home.md": "# Home\n\nWelcome.\n", "A.md": "# Zebra\n\nThe one.\n"}
    notes |= {f"d{i}.md": f"# Other {i}\n\n{'zebra ' * 12}\n" for i in range(6)}
    write_notes(tmp_path, notes)
    sessions(claude_home, tmp_path, "zebra", "A.md")
    assert hippo("ingest", cwd=tmp_path).code == 0
    assert hippo("init", cwd=tmp_path).code == 0
    text = (tmp_path / ".hippo" / "settings.toml").read_text()
    assert '# relevance = "headings"' in text and "\nrelevance =" not in text


def test_doctor_suggests_the_setting_that_finds_clearly_more(
    tmp_path: Path, hippo: HippoRunner, claude_home: Path
) -> None:
    notes = {
        "Home.md": "# Home\n\nWelcome.\n",
        "Stripe webhooks.md": "# Stripe webhooks\n\nEvents arrive signed.\n",
        "Checkout.md": "# Checkout\n\nThe cart becomes an order.\n",
    }
    write_notes(tmp_path, notes)
    (tmp_path / ".hippo").mkdir()
    (tmp_path / ".hippo" / "settings.toml").write_text("")
    sessions(claude_home, tmp_path, "checkout hangs when paying", "Stripe webhooks.md")
    assert hippo("ingest", cwd=tmp_path).code == 0
    run = hippo("doctor", cwd=tmp_path)
    suggestion = (
        ".hippo/settings.toml: info: relevance: relevance = history would name more of the "
        "notes this workspace's sessions opened: recall@5 0.95 against 0.00 with headings, "
        "over the last 20 sessions (hippo eval context); switch with "
        "`hippo config set relevance history`"
    )
    assert suggestion in run.out.splitlines(), run.out
    assert run.code == 0  # a suggestion, not a problem
    assert hippo("config", "set", "relevance", "history", cwd=tmp_path).code == 0
    assert "relevance: relevance =" not in hippo("doctor", cwd=tmp_path).out


def test_doctor_says_nothing_of_relevance_with_few_sessions_or_no_index(
    tmp_path: Path, hippo: HippoRunner, claude_home: Path
) -> None:
    write_notes(tmp_path, {"Home.md": "# Home\n\nWelcome.\n", "S.md": "# Stripe\n\nSigned.\n"})
    (tmp_path / ".hippo").mkdir()
    (tmp_path / ".hippo" / "settings.toml").write_text("")
    assert "relevance:" not in hippo("doctor", cwd=tmp_path).out  # no index at all
    sessions(claude_home, tmp_path, "checkout hangs", "S.md", count=19)
    assert hippo("ingest", cwd=tmp_path).code == 0
    assert "relevance:" not in hippo("doctor", cwd=tmp_path).out  # 19 < 20 sessions


def test_doctor_reads_only_the_latest_sessions_however_long_the_history(
    tmp_path: Path, hippo: HippoRunner, claude_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35, F3: the check read every session's files and first prompt (two queries
    each, and a team index's every row) before it kept the latest 300, so `hippo doctor`
    grew with the history. It cuts first now: the index is asked of the latest alone."""
    from hippo_core.builtins import relevance_doctor
    from hippo_core.dream.turns import TurnIndex

    write_notes(tmp_path, {"Home.md": "# Home\n\nWelcome.\n", "S.md": "# Stripe\n\nSigned.\n"})
    (tmp_path / ".hippo").mkdir()
    (tmp_path / ".hippo" / "settings.toml").write_text("")
    sessions(claude_home, tmp_path, "checkout hangs", "S.md", count=30)
    assert hippo("ingest", cwd=tmp_path).code == 0
    monkeypatch.setattr(relevance_doctor, "LATEST", 10)
    asked: list[str] = []
    queries = 0
    files, rows = TurnIndex.session_files, TurnIndex._rows

    def session_files(self: TurnIndex, session: str) -> list[tuple[str, str]]:
        asked.append(session)
        return files(self, session)

    def counted(self: TurnIndex, sql: str, params: dict[str, object]) -> list[object]:
        nonlocal queries
        queries += 1
        return rows(self, sql, params)

    monkeypatch.setattr(TurnIndex, "session_files", session_files)
    monkeypatch.setattr(TurnIndex, "_rows", counted)
    workspace = Workspace.open(tmp_path)
    assert relevance_doctor.hippo_doctor_checks(workspace) == []  # too few to judge
    records = sorted(session_records(workspace), key=lambda record: record["started"])
    assert asked == [record["id"] for record in records[-10:]]
    assert queries <= 2 * 10
