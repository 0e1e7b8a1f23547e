"""``hippo ingest`` over real files into a real SQLite index, and the derived records."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from hippo_core.index import db
from hippo_core.index.ingest import ingest
from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, WorkspaceMaker

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def index_rows(query: str) -> list[tuple]:
    path = Path(os.environ["HIPPO_HOME"]) / "index.sqlite"
    with sqlite3.connect(path) as conn:
        return conn.execute(query).fetchall()


def turns() -> list[tuple]:
    return index_rows(
        "SELECT session, ordinal, key, prompt, answer FROM turns ORDER BY session, ordinal"
    )


def test_ingest_indexes_turns_and_says_what_it_did(
    hippo: HippoRunner, claude_home: Path, tmp_path: Path
) -> None:
    session = ClaudeSession(claude_home, "/elsewhere/app")
    session.prompt("fix the date test").tool("Read", file_path="/elsewhere/app/x.py")
    session.answer("Fixed it.").prompt("now the docs").answer("Done.").write()

    run = hippo("ingest", cwd=tmp_path)

    assert run.code == 0, run.err
    assert run.out.startswith("ingested 1 of 1 transcript files, 2 new turns, 1 new session")
    rows = turns()
    assert [(r[1], r[3], r[4]) for r in rows] == [
        (0, "fix the date test", "Fixed it."),
        (1, "now the docs", "Done."),
    ]
    touched = index_rows("SELECT kind, path FROM touched")
    assert ("r", "/elsewhere/app/x.py") in touched


def test_incremental_ingest_reads_only_what_was_appended(
    hippo: HippoRunner, claude_home: Path, tmp_path: Path
) -> None:
    session = ClaudeSession(claude_home, "/p")
    session.prompt("first").answer("one").write()
    assert hippo("ingest", cwd=tmp_path).code == 0

    again = hippo("ingest", cwd=tmp_path)
    assert "ingested 0 of 1 transcript files, 0 new turns" in again.out

    session.prompt("second").answer("two").write()
    third = hippo("ingest", cwd=tmp_path)
    assert "ingested 1 of 1 transcript files, 1 new turn" in third.out
    assert [r[3] for r in turns()] == ["first", "second"]


def test_a_turn_cut_before_its_answer_is_completed_by_a_later_ingest(
    claude_home: Path,
) -> None:
    """The Stop hook can fire before Claude Code flushed the answer: ingest catches up."""
    session = ClaudeSession(claude_home, "/p")
    session.prompt("question").write()
    ingest()
    assert [r[4] for r in turns()] == [""]
    session.answer("the answer").write()
    ingest()
    assert [(r[3], r[4]) for r in turns()] == [("question", "the answer")]


def test_full_rebuild_yields_the_same_turns(claude_home: Path) -> None:
    session = ClaudeSession(claude_home, "/p")
    session.prompt("a").answer("1").write()
    ingest()
    session.prompt("b").tool("Write", file_path="/p/n.txt").answer("2").write()
    ingest()
    before = turns()
    Path(os.environ["HIPPO_HOME"], "index.sqlite").unlink()
    summary = ingest(full=True)
    assert turns() == before
    assert summary.turns == 2


def test_unterminated_tail_is_retried_and_corrupt_lines_are_counted_once(
    claude_home: Path,
) -> None:
    session = ClaudeSession(claude_home, "/p")
    path = session.prompt("one").answer("1").write()
    broken = ClaudeSession(claude_home, "/p").prompt("cut off by a crash").lines[0]
    with path.open("a") as handle:
        handle.write(broken[:-12] + "\n")  # a record cut off near its end
    full_line = ClaudeSession(claude_home, "/p", session=session.session)
    full_line.parent, full_line.clock = session.parent, 10
    full_line.prompt("two")
    tail = full_line.lines[0]
    with path.open("a") as handle:
        handle.write(tail[:40])
    first = ingest()
    assert first.corrupt == 1
    assert [r[3] for r in turns()] == ["one"]
    with path.open("a") as handle:
        handle.write(tail[40:] + "\n")
    second = ingest()
    assert second.corrupt == 0
    assert [r[3] for r in turns()] == ["one", "two"]


def test_a_rewritten_file_is_read_again(claude_home: Path) -> None:
    session = ClaudeSession(claude_home, "/p")
    path = session.prompt("old prompt").answer("x").write()
    ingest()
    path.unlink()
    replacement = ClaudeSession(claude_home, "/p", session=session.session)
    replacement.prompt("new").write()
    summary = ingest()
    assert summary.reread == 1 or summary.read == 1
    assert [r[3] for r in turns()] == ["new"]


def test_a_vanished_file_keeps_its_turns(claude_home: Path) -> None:
    session = ClaudeSession(claude_home, "/p")
    path = session.prompt("kept").write()
    ingest()
    path.unlink()
    ingest()
    assert [r[3] for r in turns()] == ["kept"]


def test_two_ingests_at_once_count_nothing_twice(claude_home: Path) -> None:
    for n in range(20):
        ClaudeSession(claude_home, f"/p{n}").prompt(f"prompt {n}").answer("ok").write()
    results = []
    threads = [threading.Thread(target=lambda: results.append(ingest())) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(s.turns for s in results) == [0, 20]
    assert len(turns()) == 20


def test_an_index_of_another_schema_is_rebuilt_with_a_message(
    hippo: HippoRunner, claude_home: Path, tmp_path: Path
) -> None:
    ClaudeSession(claude_home, "/p").prompt("hello").write()
    hippo("ingest", cwd=tmp_path)
    path = Path(os.environ["HIPPO_HOME"]) / "index.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")

    search = hippo("search", "hello", cwd=tmp_path)
    assert search.code == 1
    assert "run `hippo ingest --full`" in search.err

    run = hippo("ingest", cwd=tmp_path)
    assert "has schema version 0" in run.err and "rebuilding it" in run.err
    assert len(turns()) == 1


def test_a_file_that_is_not_an_index_is_rebuilt(claude_home: Path) -> None:
    path = Path(os.environ["HIPPO_HOME"]) / "index.sqlite"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not sqlite" * 100)
    said: list[str] = []
    ClaudeSession(claude_home, "/p").prompt("hello").write()
    ingest(say=said.append)
    assert any("not a readable SQLite database" in line for line in said)
    assert len(turns()) == 1


def test_secrets_are_redacted_before_indexing(claude_home: Path) -> None:
    session = ClaudeSession(claude_home, "/p")
    session.prompt("use AKIAABCDEFGHIJKLMNOP and <private>my address</private> please")
    session.answer("ok").write()
    summary = ingest()
    assert summary.redacted == 2
    prompt = turns()[0][3]
    assert "AKIAABCDEFGHIJKLMNOP" not in prompt and "my address" not in prompt
    fts = index_rows("SELECT prompt FROM turns_fts")[0][0]
    assert "AKIAABCDEFGHIJKLMNOP" not in fts


def test_hippos_own_model_calls_are_never_sessions_or_evidence(
    claude_home: Path, make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """`claude -p` as the model keeps each dream call as a transcript; ingest leaves it out,
    though its prompt names the workspace's notes by absolute path."""
    from hippo_core.dream.backends import marked

    root = make_workspace()
    call = ClaudeSession(claude_home, str(root / ".hippo"))
    call.prompt(marked(f"# Task: check one note\n\n### Note `{root}/notes/Home.md`\n"))
    call.answer("[]").write()
    real = ClaudeSession(claude_home, str(root)).prompt("fix the docs").answer("done")
    real.write()
    run = hippo("ingest", cwd=root)
    assert run.code == 0 and "1 hippo model call left out" in run.out
    assert [row[0] for row in index_rows("SELECT session FROM turns")] == [real.session]
    records = sorted(p.stem for p in (root / ".hippo/sessions").glob("*.json"))
    assert records == [real.session]


def test_a_private_session_marker_leaves_the_whole_session_out(claude_home: Path) -> None:
    session = ClaudeSession(claude_home, "/p")
    session.prompt("a secret plan").answer("noted").write()
    ingest()
    session.prompt("<private-session>\nforget all of this").answer("ok").write()
    summary = ingest()
    assert summary.private_sessions == 1
    assert turns() == []
    session.prompt("and more").write()
    ingest()
    assert turns() == []


def test_derived_records_for_sessions_of_the_workspace_only(
    hippo: HippoRunner, claude_home: Path, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace("", {"Home.md": "# Home\n", "Pricing.md": "# Pricing\n"})
    inside = ClaudeSession(claude_home, str(ws / "src"))
    inside.prompt("work here").answer("done").write()
    reader = ClaudeSession(claude_home, "/somewhere/else")
    reader.prompt("look at the pricing").tool("Read", file_path=str(ws / "notes" / "Pricing.md"))
    reader.write()
    other = ClaudeSession(claude_home, "/unrelated")
    other.prompt("nothing to do with it").write()

    run = hippo("ingest", cwd=ws)

    assert run.code == 0, run.err
    assert "2 session records written" in run.out
    records = {p.stem for p in (ws / ".hippo" / "sessions").glob("*.json")}
    assert records == {inside.session, reader.session}
    record = json.loads((ws / ".hippo" / "sessions" / f"{inside.session}.json").read_text())
    assert record["kind"] == "derived" and record["task"] is None and record["notes"] == []
    assert record["tool"] == "claude-code" and record["handoff"] is None
    assert index_rows("SELECT count(*) FROM sessions")[0][0] == 3


def test_ingest_never_replaces_a_declared_record(
    hippo: HippoRunner, claude_home: Path, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    session = ClaudeSession(claude_home, str(ws))
    session.prompt("declared work").write()
    assert hippo("session", "start", "--id", session.session, "--task", "t", cwd=ws).code == 0
    path = ws / ".hippo" / "sessions" / f"{session.session}.json"
    before = path.read_bytes()
    hippo("ingest", cwd=ws)
    assert path.read_bytes() == before


def test_ingest_json_summary(hippo: HippoRunner, claude_home: Path, tmp_path: Path) -> None:
    ClaudeSession(claude_home, "/p").prompt("hi").write()
    run = hippo("ingest", "--json", cwd=tmp_path)
    data = json.loads(run.out)
    assert data["turns"] == 1 and data["files"] == 1 and data["problems"] == []


def test_extra_folders_from_settings_are_ingested(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path
) -> None:
    other = tmp_path / "other-machine" / ".claude"
    ClaudeSession(other, "/p").prompt("from the other folder").write()
    ws = make_workspace(f'[transcript_dirs]\nclaude-code = ["{other}"]\nnope = ["/x"]\n')
    run = hippo("ingest", cwd=ws)
    assert run.code == 0, run.err
    assert "1 new turn" in run.out
    assert "transcript_dirs names 'nope'" in run.err


def test_a_database_that_cannot_be_read_keeps_its_turns(
    hippo: HippoRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "xdg"
    (data / "opencode").mkdir(parents=True)
    database = data / "opencode" / "opencode.db"
    shutil.copy(FIXTURES / "opencode" / "opencode.db", database)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    assert hippo("ingest", cwd=tmp_path).code == 0
    before = turns()
    assert before

    database.write_bytes(b"not a database any more" * 100)
    run = hippo("ingest", cwd=tmp_path)

    assert run.code == 0 and "warning: opencode:" in run.err
    assert turns() == before
    shutil.copy(FIXTURES / "opencode" / "opencode.db", database)
    assert "ingested 1 of 1" in hippo("ingest", cwd=tmp_path).out  # tried again
    assert turns() == before


def test_an_index_locked_by_another_program_is_one_clear_error(
    hippo: HippoRunner, claude_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ClaudeSession(claude_home, "/p").prompt("one").write()
    hippo("ingest", cwd=tmp_path)
    ClaudeSession(claude_home, "/p").prompt("two").write()
    monkeypatch.setattr(db, "BUSY_SECONDS", 0.1)
    holder = sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        run = hippo("ingest", cwd=tmp_path)
    finally:
        holder.rollback()
        holder.close()
    assert run.code == 1 and run.err.count("\n") == 1 and "database is locked" in run.err
    assert "ingested 1 of 2" in hippo("ingest", cwd=tmp_path).out


def test_relative_and_missing_extra_folders(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace('[transcript_dirs]\nclaude-code = ["machines/laptop", "nowhere"]\n')
    ClaudeSession(ws / "machines" / "laptop", "/p").prompt("from a relative folder").write()
    run = hippo("ingest", cwd=ws / "notes")
    assert "1 new turn" in run.out
    assert f"transcript_dirs: {ws / 'nowhere'} (claude-code) does not exist" in run.err


def test_a_session_marked_private_later_loses_its_derived_record(
    hippo: HippoRunner, claude_home: Path, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    session = ClaudeSession(claude_home, str(ws))
    session.prompt("ordinary work").answer("ok").write()
    hippo("ingest", cwd=ws)
    record = ws / ".hippo" / "sessions" / f"{session.session}.json"
    assert record.exists()
    session.prompt("<private-session>").write()
    hippo("ingest", cwd=ws)
    assert not record.exists() and turns() == []


def test_a_file_that_grows_while_it_is_read_is_counted_once(
    claude_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hippo_core.transcripts.sources.claude_code import ClaudeCodeSource

    session = ClaudeSession(claude_home, "/p")
    session.prompt("first").answer("one").write()
    real_parse = ClaudeCodeSource.parse
    grown = []

    def parse_while_the_agent_writes(self, path, resume):  # type: ignore[no-untyped-def]
        if not grown:
            session.prompt("second").answer("two").write()  # after the ingest looked
            grown.append(path)
        return real_parse(self, path, resume)

    monkeypatch.setattr(ClaudeCodeSource, "parse", parse_while_the_agent_writes)
    first = ingest()
    session.prompt("third").write()
    second = ingest()
    third = ingest()
    assert [r[3] for r in turns()] == ["first", "second", "third"]
    assert first.turns + second.turns + third.turns == 3


def test_a_file_that_is_not_a_transcript_is_reported_once(
    hippo: HippoRunner, tmp_path: Path
) -> None:
    foreign = Path(os.environ["HOME"]) / ".muse" / "sessions" / "2026" / "11" / "30" / "x"
    foreign.mkdir(parents=True)
    (foreign / "session.jsonl").write_text('{"type":"session","id":"pi"}\n')
    first = hippo("ingest", cwd=tmp_path)
    assert "not a Muse Code session log" in first.err
    assert hippo("ingest", cwd=tmp_path).err == ""


def test_a_session_in_a_git_worktree_of_the_workspace_belongs_to_it(
    hippo: HippoRunner, claude_home: Path, make_workspace: WorkspaceMaker, tmp_path: Path
) -> None:
    import subprocess

    ws = make_workspace()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(ws)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], check=True)
    worktree = tmp_path / "feature-tree"
    subprocess.run([*git, "worktree", "add", "-q", str(worktree)], check=True)
    session = ClaudeSession(claude_home, str(worktree / "src"))
    session.prompt("work on the feature branch").write()

    assert "1 session record written" in hippo("ingest", cwd=ws).out
    assert (ws / ".hippo" / "sessions" / f"{session.session}.json").exists()


def test_a_terminal_gets_a_progress_bar_and_a_pipe_does_not(
    hippo: HippoRunner, claude_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    ClaudeSession(claude_home, "/p").prompt("one").write()
    piped = hippo("ingest", cwd=tmp_path)
    assert "ingest [" not in piped.err
    ClaudeSession(claude_home, "/q").prompt("two").write()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    shown = hippo("ingest", "--full", cwd=tmp_path)
    assert "\ringest [##############################] 100% 2/2 files" in shown.err
    assert shown.out.startswith("ingested 2 of 2")
