"""``hippo session start|end``, the declared records, and ``hippo log``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, WorkspaceMaker


def record(ws: Path, sid: str) -> dict:
    return json.loads((ws / ".hippo" / "sessions" / f"{sid}.json").read_text())


def test_start_declares_a_session_and_prints_its_id(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    run = hippo("session", "start", "--id", "abc-123", "--tool", "codex", "--task", "fix", cwd=ws)
    assert (run.code, run.out) == (0, "abc-123\n")
    rec = record(ws, "abc-123")
    assert rec["kind"] == "declared" and rec["task"] == "fix" and rec["tool"] == "codex"
    assert rec["context_bytes"] == 0 and rec["notes"] == [] and rec["ended"] is None

    context = hippo("context", "--session", "abc-123", cwd=ws)
    assert f"session: abc-123 codex {rec['started']}\n" in context.out


def test_start_without_an_id_makes_one(hippo: HippoRunner, make_workspace: WorkspaceMaker) -> None:
    ws = make_workspace()
    sid = hippo("session", "start", cwd=ws).out.strip()
    assert sid.startswith("s-") and record(ws, sid)["tool"] == "manual"


@pytest.mark.parametrize("raw", ["x" * 500, "a/b", "../../etc/passwd", "sp ace"])
def test_invalid_ids_are_hashed_into_valid_file_names(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, raw: str
) -> None:
    ws = make_workspace()
    sid = hippo("session", "start", "--id", raw, cwd=ws).out.strip()
    assert sid.startswith("h-") and len(sid) == 34
    assert record(ws, sid)["native_id"] == raw
    assert hippo("session", "start", "--id", raw, cwd=ws).out.strip() == sid


def test_end_records_notes_handoff_and_no_change(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace("", {"A.md": "# A\n", "sub/B.md": "# B\n"})
    hippo("session", "start", "--id", "s1", cwd=ws)
    run = hippo(
        "session",
        "end",
        "--id",
        "s1",
        "--note",
        "notes/A.md",  # from the workspace's folder
        "--note",
        "B.md",  # from the current folder
        "--handoff",
        "Prices moved to [[Pricing]].",
        cwd=ws / "notes" / "sub",
    )
    assert run.code == 0 and "ended s1 (changed)" in run.out
    rec = record(ws, "s1")
    assert rec["notes"] == ["notes/A.md", "notes/sub/B.md"]
    assert rec["handoff"] == "Prices moved to [[Pricing]]."

    hippo("session", "start", "--id", "s2", cwd=ws)
    hippo("session", "end", "--id", "s2", "--no-change", "only read code", cwd=ws)
    assert record(ws, "s2")["no_change"] == "only read code"
    assert record(ws, "s2")["end_reason"] == "no-change"


def test_end_refuses_a_note_that_is_not_one_and_records_nothing(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace("", {"A.md": "# A\n"})
    (ws / "notes" / "data.txt").write_text("not a note\n")
    hippo("session", "start", "--id", "s1", cwd=ws)
    before = (ws / ".hippo" / "sessions" / "s1.json").read_bytes()
    outside = "not a note of this workspace; give the path of a .md file below notes/"
    for given, problem in [
        ("../../etc/passwd", outside),
        ("/etc/passwd", outside),
        ("notes/data.txt", outside),
        ("README.md", outside),
        ("notes/Nope.md", "no such note; check the path (notes are in notes/)"),
    ]:
        run = hippo("session", "end", "--id", "s1", "--note", "notes/A.md", "--note", given, cwd=ws)
        assert run.code == 1 and run.err.startswith(f"error: --note {given}: {problem}"), run.err
        assert (ws / ".hippo" / "sessions" / "s1.json").read_bytes() == before


def test_end_with_nothing_is_unspecified_and_defaults_to_the_latest_open_session(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    hippo("session", "start", "--id", "only", cwd=ws)
    run = hippo("session", "end", cwd=ws)
    assert run.code == 0 and "ended only (unspecified)" in run.out
    assert record(ws, "only")["end_reason"] == "unspecified"
    again = hippo("session", "end", cwd=ws)
    assert again.code == 1 and "no open session" in again.err


def test_end_of_an_unknown_session_is_one_clear_error(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    run = hippo("session", "end", "--id", "nope", cwd=make_workspace())
    assert run.code == 1 and run.err.count("\n") == 1 and "session 'nope' not found" in run.err


def test_declaring_replaces_a_derived_record(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    ws = make_workspace()
    session = ClaudeSession(tmp_path / "claude", str(ws))
    session.prompt("hello").write()
    hippo("ingest", cwd=ws)
    derived = record(ws, session.session)
    assert derived["kind"] == "derived"
    hippo("session", "start", "--id", session.session, "--task", "now declared", cwd=ws)
    rec = record(ws, session.session)
    assert rec["kind"] == "declared" and rec["task"] == "now declared"
    assert (rec["started"], rec["cwd"], rec["tool"]) == (
        derived["started"],
        derived["cwd"],
        "claude-code",
    )


def test_log_lists_sessions_newest_first_and_is_regenerated(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    for sid, started in (("old", "2026-11-01T09:00:00Z"), ("new", "2026-11-29T10:30:00Z")):
        hippo("session", "start", "--id", sid, cwd=ws)
        path = ws / ".hippo" / "sessions" / f"{sid}.json"
        rec = json.loads(path.read_text())
        rec["started"] = started
        path.write_text(json.dumps(rec))
    hippo("session", "end", "--id", "new", "--handoff", "Moved prices.\nMore.", cwd=ws)

    run = hippo("log", cwd=ws)

    assert run.code == 0 and "wrote notes/Session log.md (2 sessions)" in run.out
    log = (ws / "notes" / "Session log.md").read_text()
    lines = [line for line in log.splitlines() if line.startswith("- ")]
    assert lines == [
        "- 2026-11-29 10:30 manual `new` (declared): handoff: Moved prices.",
        "- 2026-11-01 09:00 manual `old` (declared): open",
    ]
    (ws / "notes" / "Session log.md").write_text("hand edit")
    hippo("log", cwd=ws)
    assert (ws / "notes" / "Session log.md").read_text() == log
    lint = hippo("notes", "lint", cwd=ws)
    assert "Session log.md" not in lint.out


def test_a_declared_task_handoff_and_reason_are_kept_redacted_and_the_log_shows_no_secret(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    """Finding R4: the session log lies in the notes, where the context and read_note
    serve it; what a session declares is redacted as it is written, for every reader."""
    aws = "AKIA" + "QWERTYUIOP123456"
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    ws = make_workspace()
    hippo("session", "start", "--id", "s1", "--task", f"rotate {token}", cwd=ws)
    hippo("session", "start", "--id", "s2", cwd=ws)
    hippo("session", "start", "--id", "s2", "--task", f"later {token}", cwd=ws)  # a missing task
    ended = hippo(
        "session",
        "end",
        "--id",
        "s1",
        "--handoff",
        f"aws key {aws} in prose\nsee [[Deploy]]",
        cwd=ws,
    )
    assert ended.code == 0
    hippo("session", "end", "--id", "s2", "--no-change", "mysql -uroot -pSup3rS3cretFlag", cwd=ws)

    first, second = record(ws, "s1"), record(ws, "s2")
    assert first["task"] == "rotate [redacted:github-token]"
    assert first["handoff"] == "aws key [redacted:aws-access-key] in prose\nsee [[Deploy]]"
    assert second["task"] == "later [redacted:github-token]"
    assert second["no_change"] == "mysql -uroot -p[redacted:password]"
    hippo("log", cwd=ws)
    log = (ws / "notes" / "Session log.md").read_text()
    assert "handoff: aws key [redacted:aws-access-key] in prose" in log
    assert "no change: mysql -uroot -p[redacted:password]" in log
    for path in (ws / ".hippo" / "sessions").glob("*.json"):
        assert aws not in path.read_text() and token not in path.read_text()
    assert aws not in log and "Sup3rS3cretFlag" not in log


def test_a_tool_a_letter_off_a_known_agent_is_named_and_kept(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    """Any agent may declare its sessions, so the name is kept; a typo of a known agent's
    is said (newcomer defect 11)."""
    ws = make_workspace()
    typo = hippo("session", "start", "--id", "s1", "--tool", "codx", cwd=ws)
    assert (typo.code, typo.out) == (0, "s1\n")
    assert typo.err == "warning: --tool 'codx' is recorded as given; did you mean 'codex'?\n"
    assert record(ws, "s1")["tool"] == "codx"
    other = hippo("session", "start", "--id", "s2", "--tool", "aider", cwd=ws)
    assert (other.code, other.err) == (0, "")
