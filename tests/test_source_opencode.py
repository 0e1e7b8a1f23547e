"""The OpenCode source on the real 1.18 database, a live WAL database, and the JSON tree."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hippo_core.plugins.manager import load_plugins
from hippo_core.transcripts.model import Parsed, Resume
from hippo_core.transcripts.sources import opencode
from hippo_core.transcripts.sources.opencode import OpenCodeSource

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "opencode"
DB = FIXTURES / "opencode.db"
PLAIN = "ses_dd53b19ebffelJaXqlnD3II9p6"
TOOLS = "ses_dd53ac8c1ffect6mXVxXLdnjXu"
DELEGATE = "ses_dd53ab34affe3dd0JwGxEEvLub"
CHILD = "ses_dd53aacc6ffebdGqEWK8pxPPoS"
THINK = "ses_dd53aa4d8ffe6Ah7vcPXd2SNX8"
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def parse(path: Path, resume: Resume | None = None) -> Parsed:
    return OpenCodeSource().parse(path, resume or Resume())


@pytest.fixture(scope="module")
def real() -> Parsed:
    return parse(DB)


# --- the real database ----------------------------------------------------------------------


def test_five_runs_give_five_sessions(real: Parsed):
    assert real.problems == [] and real.corrupt == 0
    ids = [s.id for s in real.sessions]
    assert ids == [
        f"opencode-{PLAIN}",
        f"opencode-{TOOLS}",
        f"opencode-{DELEGATE}",
        f"opencode-{DELEGATE}-agent-{CHILD}",
        f"opencode-{THINK}",
    ]
    for session in real.sessions:
        assert session.tool == "opencode"
        assert session.cwd == "/home/dev/proj-opencode"
        assert ISO.fullmatch(session.started or "") and ISO.fullmatch(session.ended or "")
    assert real.sessions[0].started == "2026-11-30T04:44:36.756Z"


def test_sub_agent_session(real: Parsed):
    child = next(s for s in real.sessions if s.native_id == CHILD)
    assert child.parent == f"opencode-{DELEGATE}"
    assert child.title == "List project files (@general subagent)"
    [turn] = [t for t in real.turns if t.session == child.id]
    # the task's prompt reaches the sub-agent without the quotes of `opencode run`
    assert turn.prompt == "HIPPO-CHILD: list the files in the project root and report them."
    assert turn.tools == ["bash"]
    assert child.handoff == turn.answer
    assert turn.answer.startswith("Sub-agent result:")
    [parent_turn] = [t for t in real.turns if t.session == f"opencode-{DELEGATE}"]
    assert parent_turn.tools == ["task"]
    assert parent_turn.answer.endswith("The sub-agent reported the file list; all done.")


def test_continued_session_has_two_turns(real: Parsed):
    turns = [t for t in real.turns if t.session == f"opencode-{THINK}"]
    assert [t.prompt for t in turns] == [
        "HIPPO-THINK: think, then answer",
        "HIPPO-PLAIN: follow-up via --continue",
    ]
    assert [t.ordinal for t in turns] == [0, 1]
    assert [t.key for t in turns] == [
        "msg_22ac55b5b001JvhGrcQ8d8vb0L",
        "msg_22ac575b5001GhmUmCd7Fle4dy",
    ]
    # reasoning is not part of the answer
    assert turns[0].answer == "After thinking: the answer is 42."
    assert turns[1].answer.startswith("Hello from the fake model.")
    session = next(s for s in real.sessions if s.native_id == THINK)
    assert session.handoff == turns[1].answer


def test_tools_session_shows_reads_writes_and_the_failed_read(real: Parsed):
    [turn] = [t for t in real.turns if t.session == f"opencode-{TOOLS}"]
    assert turn.prompt == (
        "HIPPO-TOOLS: look around the project, read the README and write a notes file"
    )
    assert turn.tools == ["bash", "read", "read", "write"]  # the second read failed
    assert turn.files_read == ["/home/dev/proj-opencode/README.md"]
    assert "/home/dev/proj-opencode/missing.txt" not in turn.files_read
    assert turn.files_edited == ["/home/dev/proj-opencode/notes.txt"]
    assert turn.answer.startswith("I'll start by listing the project files.")
    assert "Done. I listed the files" in turn.answer
    assert turn.started == "2026-11-30T04:44:57.598Z"
    assert turn.ended == "2026-11-30T04:44:59.496Z"
    assert turn.cwd == "/home/dev/proj-opencode"


def test_whole_database_reads_resume_at_zero(real: Parsed):
    assert real.resume == Resume()
    assert real.committed == 0
    assert len(real.turns) == 6
    assert all((t.start, t.end, t.source) == (0, 0, str(DB)) for t in real.turns)
    # a resume point handed back changes nothing: the database is read whole
    again = parse(DB, Resume(offset=1234, state={"ordinals": {"x": 3}}, seen=99))
    assert [t.key for t in again.turns] == [t.key for t in real.turns]
    assert [t.ordinal for t in again.turns] == [t.ordinal for t in real.turns]


def test_roots_discover_and_hook(tmp_path: Path):
    source = OpenCodeSource()
    assert source.roots({"XDG_DATA_HOME": "/x/data"}, tmp_path) == [Path("/x/data/opencode")]
    assert source.roots({}, tmp_path) == [tmp_path / ".local/share/opencode"]
    assert list(source.discover(FIXTURES)) == [DB]
    assert list(source.discover(tmp_path / "nowhere")) == []
    found: list[Any] = list(load_plugins().sources().values())
    assert [type(s) for s in found if s.name == "opencode"] == [opencode.OpenCodeSource]


@pytest.mark.parametrize(
    ("stored", "prompt"),
    [
        ('"say hello"', "say hello"),
        ('"say \\"hi\\" now"', 'say "hi" now'),
        ('fix "the bug"', 'fix "the bug"'),
        ('"a" and "b"', '"a" and "b"'),
        ('"', '"'),
        ("plain", "plain"),
    ],
)
def test_unquote(stored: str, prompt: str):
    assert opencode._unquote(stored) == prompt


# --- unreadable databases -------------------------------------------------------------------


def test_a_missing_database_is_a_problem(tmp_path: Path):
    parsed = parse(tmp_path / "opencode.db")
    assert parsed.turns == [] and parsed.sessions == []
    assert len(parsed.problems) == 1


def test_a_corrupt_database_is_a_problem(tmp_path: Path):
    path = tmp_path / "opencode.db"
    path.write_bytes(b"this is not a database\n" * 200)
    parsed = parse(path)
    assert parsed.turns == []
    assert len(parsed.problems) == 1 and "cannot be read" in parsed.problems[0]


def test_a_database_without_the_tables_is_a_problem(tmp_path: Path):
    path = tmp_path / "opencode.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE other (x)")
    conn.close()
    parsed = parse(path)
    assert parsed.turns == [] and "session" in parsed.problems[0]


# --- a database in use (WAL) ----------------------------------------------------------------


def copy_rows(target: sqlite3.Connection, sessions: tuple[str, ...]) -> None:
    """Create the real schema in ``target`` and copy the rows of ``sessions`` into it."""
    source = sqlite3.connect(f"{DB.as_uri()}?mode=ro", uri=True)
    for table in ("project", "session", "message", "part"):
        (sql,) = source.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        target.execute(sql)
    target.executemany(
        "INSERT INTO project VALUES (" + ",".join("?" * 12) + ")",
        source.execute("SELECT * FROM project"),
    )
    marks = ",".join("?" * len(sessions))
    for table, column in (("session", "id"), ("message", "session_id"), ("part", "session_id")):
        rows = source.execute(f"SELECT * FROM {table} WHERE {column} IN ({marks})", sessions)
        rows_list = rows.fetchall()
        width = len(rows_list[0])
        target.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * width)})", rows_list)
    source.close()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """A WAL database whose writer is still open, its rows only in ``-wal``."""
    folder = tmp_path / "data dir ?#%"  # characters a URI must escape
    folder.mkdir()
    path = folder / "opencode.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("BEGIN")
    copy_rows(writer, (PLAIN, THINK))
    writer.execute("COMMIT")
    yield path, writer
    writer.close()


def test_a_live_wal_database_is_read_with_its_wal(live: tuple[Path, sqlite3.Connection]):
    path, writer = live
    wal = path.with_name("opencode.db-wal")
    assert wal.stat().st_size > path.stat().st_size  # the rows are in the WAL only
    parsed = parse(path)
    assert parsed.problems == []
    assert [t.prompt for t in parsed.turns] == [
        "HIPPO-PLAIN: say hello",
        "HIPPO-THINK: think, then answer",
        "HIPPO-PLAIN: follow-up via --continue",
    ]
    # an open write transaction is not seen, and does not block the read
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("DELETE FROM part")
    again = parse(path)
    writer.execute("ROLLBACK")
    assert again.problems == []
    assert [t.answer for t in again.turns] == [t.answer for t in parsed.turns]
    assert all(t.answer for t in again.turns)


def test_the_database_is_read_as_one_snapshot(
    live: tuple[Path, sqlite3.Connection], monkeypatch: pytest.MonkeyPatch
):
    path, writer = live
    original = opencode._Database.messages

    def racing(self: Any, conn: Any, native: str) -> Any:
        writer.execute("DELETE FROM message")  # committed while the reader is half way
        return original(self, conn, native)

    monkeypatch.setattr(opencode._Database, "messages", racing)
    assert len(parse(path).turns) == 3
    assert parse(path).turns == []


def test_a_locked_database_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "opencode.db"
    writer = sqlite3.connect(path, isolation_level=None)
    copy_rows(writer, (PLAIN,))
    writer.execute("BEGIN EXCLUSIVE")  # rollback journal: an exclusive lock bars readers
    monkeypatch.setattr(opencode, "BUSY_TIMEOUT", 0.05)
    parsed = parse(path)
    writer.execute("ROLLBACK")
    writer.close()
    assert parsed.turns == [] and "locked" in parsed.problems[0]


def test_rows_that_are_not_json_are_counted(live: tuple[Path, sqlite3.Connection]):
    path, writer = live
    reasoning = "json_extract(data, '$.type') = 'reasoning'"
    writer.execute(f"UPDATE part SET data = '{{broken' WHERE {reasoning}")
    writer.execute("UPDATE message SET data = '[1]' WHERE id = 'msg_22ac578bd001DyCyYCc4c4wOK5'")
    parsed = parse(path)
    assert parsed.corrupt == 2
    turns = [t for t in parsed.turns if t.session == f"opencode-{THINK}"]
    assert turns[0].answer == "After thinking: the answer is 42."
    assert turns[1].answer == ""  # its assistant message is unreadable


# --- the JSON tree of OpenCode 1.1 and earlier ----------------------------------------------


def legacy_tree(root: Path) -> Path:
    """``storage/`` as OpenCode 1.1 wrote it (research notes 4.1): a session and its sub-agent."""
    storage = root / "storage"

    def put(rel: str, value: Any) -> None:
        path = storage / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))

    project = "8f3c2a"
    put(f"project/{project}.json", {"id": project, "worktree": "/w/app"})
    put(
        f"session/{project}/ses_A.json",
        {
            "id": "ses_A",
            "projectID": project,
            "directory": "/w/app",
            "title": "Fix date test",
            "time": {"created": 1767865803494, "updated": 1767865903494},
        },
    )
    put(
        f"session/{project}/ses_B.json",
        {"id": "ses_B", "parentID": "ses_A", "directory": "/w/app", "title": "child", "time": {}},
    )
    put(
        f"session/{project}/ses_C.json",
        {"id": "ses_C", "parentID": "ses_B", "directory": "/w/app", "time": {}},
    )
    user = {"role": "user", "sessionID": "ses_A", "time": {"created": 1767865803600}}
    put("message/ses_A/msg_01.json", {"id": "msg_01", **user})
    put("part/msg_01/prt_01.json", {"id": "prt_01", "type": "text", "text": '"Fix the test"'})
    put(
        "part/msg_01/prt_00.json",
        {"id": "prt_00", "type": "text", "text": "<system-reminder>", "synthetic": True},
    )
    answer = {
        "id": "msg_02",
        "sessionID": "ses_A",
        "role": "assistant",
        "parentID": "msg_01",
        "time": {"created": 1767865803700, "completed": 1767865809000},
        "path": {"cwd": "/w/app", "root": "/w/app"},
    }
    put("message/ses_A/msg_02.json", answer)
    tool = {"status": "completed", "input": {"filePath": "/w/app/src/dates.py"}}
    failed = {"status": "error", "input": {"filePath": "/w/app/gone.py"}, "error": "nope"}
    patch = "*** Begin Patch\n*** Update File: src/b.py\n*** End Patch"
    parts = [
        {"id": "prt_03", "type": "tool", "tool": "read", "state": tool},
        {"id": "prt_04", "type": "tool", "tool": "edit", "state": tool},
        {"id": "prt_05", "type": "tool", "tool": "read", "state": failed},
        {
            "id": "prt_06",
            "type": "tool",
            "tool": "apply_patch",
            "state": {"status": "completed", "input": {"patchText": patch}},
        },
        {"id": "prt_07", "type": "patch", "hash": "9a1b", "files": ["/w/app/src/c.py"]},
        {"id": "prt_08", "type": "reasoning", "text": "hmm"},
        {"id": "prt_09", "type": "text", "text": "Fixed."},
    ]
    for part in parts:
        put(f"part/msg_02/{part['id']}.json", {**part, "messageID": "msg_02"})
    put("message/ses_C/msg_10.json", {"id": "msg_10", "role": "user", "time": {"created": 5}})
    put("part/msg_10/prt_10.json", {"id": "prt_10", "type": "text", "text": "grandchild task"})
    (storage / "message/ses_A/msg_99.json").write_text("{not json")
    return root


def test_legacy_tree(tmp_path: Path):
    root = legacy_tree(tmp_path / "opencode")
    source = OpenCodeSource()
    files = list(source.discover(root))
    assert [p.name for p in files] == ["ses_A.json", "ses_B.json", "ses_C.json"]
    parsed = parse(files[0])
    assert parsed.corrupt == 1 and parsed.resume == Resume()
    [session] = parsed.sessions
    assert (session.id, session.title, session.cwd) == ("opencode-ses_A", "Fix date test", "/w/app")
    assert session.started == "2026-01-08T09:50:03.494Z" and session.handoff == "Fixed."
    [turn] = parsed.turns
    assert (turn.key, turn.prompt, turn.answer) == ("msg_01", "Fix the test", "Fixed.")
    assert turn.tools == ["read", "edit", "read", "apply_patch"]
    assert turn.files_read == ["/w/app/src/dates.py"]
    assert turn.files_edited == ["/w/app/src/dates.py", "/w/app/src/b.py", "/w/app/src/c.py"]
    assert (turn.started, turn.ended) == ("2026-01-08T09:50:03.600Z", "2026-01-08T09:50:09.000Z")
    assert turn.source == str(files[0]) and (turn.start, turn.end) == (0, 0)


def test_legacy_sub_agents_hang_off_the_top_session(tmp_path: Path):
    files = list(OpenCodeSource().discover(legacy_tree(tmp_path / "opencode")))
    child, grandchild = parse(files[1]), parse(files[2])
    assert child.sessions[0].id == "opencode-ses_A-agent-ses_B"
    assert child.sessions[0].parent == "opencode-ses_A"
    assert grandchild.sessions[0].id == "opencode-ses_A-agent-ses_C"
    assert grandchild.sessions[0].parent == "opencode-ses_A"
    [turn] = grandchild.turns
    assert turn.prompt == "grandchild task" and turn.session == "opencode-ses_A-agent-ses_C"


def test_the_database_wins_over_the_tree_it_was_migrated_from(tmp_path: Path):
    root = legacy_tree(tmp_path / "opencode")
    (root / "opencode.db").write_bytes(DB.read_bytes())
    assert [p.name for p in OpenCodeSource().discover(root)] == ["opencode.db"]


def test_an_unreadable_legacy_session_file(tmp_path: Path):
    path = tmp_path / "storage/session/p/ses_X.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe not json")
    parsed = parse(path)
    assert parsed.turns == [] and len(parsed.problems) == 1


def test_legacy_ids_are_file_names_not_paths_or_patterns(tmp_path: Path):
    """An id read from a legacy file never walks out of the tree or reads as a glob."""
    root = legacy_tree(tmp_path / "opencode")
    storage = root / "storage"
    child = storage / "session/8f3c2a/ses_B.json"
    child.write_text(json.dumps({"id": "ses_B", "parentID": "**", "directory": "/w/app"}))
    (storage / "message/ses_B").mkdir(parents=True)
    escaping = {"id": "../../../elsewhere", "role": "user", "time": {"created": 5}}
    (storage / "message/ses_B/msg_20.json").write_text(json.dumps(escaping))
    (storage / "part/msg_20").mkdir(parents=True)
    said = {"id": "prt_20", "type": "text", "text": "a task"}
    (storage / "part/msg_20/prt_20.json").write_text(json.dumps(said))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.json").write_text(json.dumps({"type": "text", "text": "not this"}))
    parsed = parse(child)
    assert parsed.problems == [] and parsed.sessions[0].native_id == "ses_B"
    [turn] = parsed.turns
    assert (turn.key, turn.prompt) == ("msg_20", "a task")
