"""The Gemini CLI source, on chats written by Gemini CLI 0.61.0."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hippo_core.transcripts.model import Parsed, Resume
from hippo_core.transcripts.sources.gemini import GeminiSource

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "gemini"
CHATS = FIXTURES / "tmp" / "proj-gemini" / "chats"
TOOLS = CHATS / "session-2026-11-30T04-56-3434215c.jsonl"
RESUMED = CHATS / "session-2026-11-30T04-56-0319e6db.jsonl"
DELEGATE = CHATS / "session-2026-11-30T04-56-bad4d89a.jsonl"
CHILD = (
    CHATS / "bad4d89a-7639-485e-9904-434545556b10" / "b3bada7e-e204-4f72-8b83-6e35e4efa7b9.jsonl"
)
EDIT = CHATS / "session-2026-11-30T04-56-84883450.jsonl"
THINK = CHATS / "session-2026-11-30T04-56-200275fd.jsonl"
CWD = "/home/dev/proj-gemini"
DONE = (
    "Done. I listed the files, read README.md (missing.txt does not exist) "
    "and wrote notes.txt with two lines."
)

source = GeminiSource()


def parse(path: Path, resume: Resume | None = None) -> Parsed:
    return source.parse(path, resume or Resume())


def line(**record: Any) -> bytes:
    return json.dumps(record).encode() + b"\n"


def header(sid: str = "s1", **extra: Any) -> bytes:
    fields = {
        "projectHash": "abc",
        "startTime": "2026-11-30T04:00:00.000Z",
        "kind": "main",
        **extra,
    }
    return line(sessionId=sid, **fields)


def user(mid: str, text: str) -> bytes:
    return line(id=mid, timestamp="2026-11-30T04:00:01.000Z", type="user", content=[{"text": text}])


def gemini(mid: str, text: str, *calls: dict[str, Any]) -> bytes:
    extra = {"toolCalls": list(calls)} if calls else {}
    return line(id=mid, timestamp="2026-11-30T04:00:02.000Z", type="gemini", content=text, **extra)


def call(name: str, status: str = "success", **args: Any) -> dict[str, Any]:
    return {"id": f"{name}_1", "name": name, "args": args, "status": status}


def project(tmp_path: Path, name: str = "proj") -> Path:
    """An empty ``~/.gemini/tmp/<name>/chats`` whose ``.project_root`` is CWD."""
    chats = tmp_path / ".gemini" / "tmp" / name / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text(CWD + "\n")
    return chats


def test_roots_honour_gemini_cli_home(tmp_path: Path) -> None:
    assert source.roots({}, tmp_path) == [tmp_path / ".gemini"]
    assert source.roots({"GEMINI_CLI_HOME": "/x"}, tmp_path) == [Path("/x/.gemini")]


def test_discover_finds_main_and_sub_agent_chats(tmp_path: Path) -> None:
    root = tmp_path / ".gemini"
    shutil.copytree(FIXTURES, root)
    (root / "tmp" / "proj-gemini" / "chats" / "session-2025-01-01T00-00-legacy00.json").write_text(
        "{}"
    )
    names = [p.name for p in source.discover(root)]
    assert len(names) == 7
    assert CHILD.name in names and "session-2025-01-01T00-00-legacy00.json" in names


def test_tools_run() -> None:
    parsed = parse(TOOLS)
    assert parsed.corrupt == 0 and parsed.problems == []
    [turn] = parsed.turns  # neither <session_context> nor the functionResponse lines
    assert turn.prompt.startswith("HIPPO-TOOLS")
    assert turn.session == "gemini-3434215c-c155-4bd1-84db-f6e157fb8a50"
    assert turn.key == "514513ae-69ee-473f-9ab1-d9cc424177f5"
    # Each gemini message is written twice; its tool calls count once.
    assert turn.tools == ["run_shell_command", "read_file", "read_file", "write_file"]
    assert turn.files_read == [f"{CWD}/README.md"]  # the missing.txt read has status error
    assert turn.files_edited == [f"{CWD}/notes.txt"]
    assert turn.answer.endswith(DONE)
    assert turn.answer.count("Now reading two files at once.") == 1
    assert turn.cwd == CWD  # from tmp/proj-gemini/.project_root
    [session] = parsed.sessions
    assert session.cwd == CWD and session.parent is None
    assert session.handoff is None  # no derived handoff for Gemini
    assert session.started == "2026-11-30T04:56:28.416Z"
    assert parsed.resume.offset == 0  # always read whole
    assert parsed.committed == TOOLS.stat().st_size


def test_resumed_session_gives_two_turns_without_duplicates() -> None:
    parsed = parse(RESUMED)
    assert [t.prompt for t in parsed.turns] == [
        "HIPPO-PLAIN: say hello",
        "HIPPO-TOOLS: in the resumed session, look around again",
    ]
    assert [t.key for t in parsed.turns] == [
        "9cbd57c7-6942-41e0-9227-542cd58592d5",
        "6b9d6cef-8e72-4d08-ac30-9de742499a2d",
    ]
    assert (
        parsed.turns[0].answer
        == "Hello from the fake model. This is a plain answer with no tool use."
    )
    assert parsed.sessions[0].started == "2026-11-30T04:56:25.047Z"  # the first header's


def test_sub_agent_chat_is_a_sub_agent_session() -> None:
    parsed = parse(CHILD)
    [session] = parsed.sessions
    parent = "gemini-bad4d89a-7639-485e-9904-434545556b10"
    assert session.id == f"{parent}-agent-b3bada7e-e204-4f72-8b83-6e35e4efa7b9"
    assert session.parent == parent
    assert session.cwd == CWD
    [turn] = parsed.turns  # the runtime's nudge is not a second prompt
    assert turn.prompt.startswith("HIPPO-CHILD")
    assert turn.tools == ["run_shell_command", "complete_task"]
    [main] = parse(DELEGATE).turns
    assert main.tools == ["invoke_agent"]
    assert parse(DELEGATE).sessions[0].id == parent


def test_rejected_replace_edits_nothing_and_summary_is_the_title() -> None:
    [turn] = parse(EDIT).turns
    assert turn.tools == ["read_file", "replace"]
    assert turn.files_read == [f"{CWD}/hello.py"]
    assert turn.files_edited == []
    assert turn.answer.endswith("Edited hello.py: it now prints hello, hippo.")
    parsed = parse(THINK)
    assert parsed.sessions[0].title == "Fake title: hippo test session"
    assert parsed.turns[0].answer == "After thinking: the answer is 42."


def test_successful_edit_with_a_relative_path(tmp_path: Path) -> None:
    path = project(tmp_path) / "session-x.jsonl"
    path.write_bytes(
        header()
        + user("u1", "HIPPO-EDIT: change the greeting in hello.py")
        + gemini("g1", "Now editing the greeting.")
        + gemini(
            "g1", "Now editing the greeting.", call("replace", file_path="hello.py", old_string="a")
        )
        + gemini("g2", "Edited.")
    )
    [turn] = parse(path).turns
    assert turn.files_edited == [f"{CWD}/hello.py"]


def test_rewind_drops_the_rewound_messages(tmp_path: Path) -> None:
    path = project(tmp_path) / "session-x.jsonl"
    path.write_bytes(
        header()
        + user("u1", "first")
        + gemini("g1", "reply one")
        + user("u2", "second")
        + gemini("g2", "reply two")
        + line(**{"$rewindTo": "u2"})
        + user("u3", "third")
        + gemini("g3", "reply three")
    )
    assert [(t.prompt, t.answer) for t in parse(path).turns] == [
        ("first", "reply one"),
        ("third", "reply three"),
    ]
    path.write_bytes(path.read_bytes() + line(**{"$rewindTo": "unknown"}))
    assert parse(path).turns == []


def test_project_root_from_projects_json(tmp_path: Path) -> None:
    chats = project(tmp_path, "named")
    (chats.parent / ".project_root").unlink()
    root = tmp_path / ".gemini"
    (root / "projects.json").write_text(
        json.dumps({"projects": {"/elsewhere": "other", "/w/named-proj": "named"}})
    )
    path = chats / "session-x.jsonl"
    path.write_bytes(header() + user("u1", "hi"))
    assert parse(path).sessions[0].cwd == "/w/named-proj"
    # Older hash-named project folders are matched by the SHA-256 of the path: the header's
    # projectHash, or the folder's name (16 hex digits in older releases).
    digest = hashlib.sha256(b"/w/hashed").hexdigest()
    (root / "projects.json").write_text(json.dumps({"projects": {"/w/hashed": "hashed"}}))
    for folder, project_hash in (("unnamed", digest), (digest[:16], "abc")):
        chats = project(tmp_path, folder)
        (chats.parent / ".project_root").unlink()
        (chats / "session-y.jsonl").write_bytes(header(projectHash=project_hash) + user("u1", "hi"))
        assert parse(chats / "session-y.jsonl").sessions[0].cwd == "/w/hashed"
    chats = project(tmp_path, "lost")
    (chats.parent / ".project_root").unlink()
    (chats / "session-z.jsonl").write_bytes(header(kind="subagent", directories=["/w/d"]))
    assert parse(chats / "session-z.jsonl").sessions[0].cwd == "/w/d"


def test_legacy_whole_file_chat(tmp_path: Path) -> None:
    path = project(tmp_path) / "session-2025-12-03T06-35-477739d0.json"
    edit = {
        "id": "replace-1",
        "name": "replace",
        "args": {
            "file_path": "/home/alice/src/myapp/src/dates.py",
            "old_string": "a",
            "new_string": "b",
        },
        "status": "success",
    }
    chat = {
        "sessionId": "477739d0-1b78-4aa7-9116-02d08c952344",
        "projectHash": "8876362f",
        "startTime": "2025-12-03T06:35:37.302Z",
        "lastUpdated": "2025-12-03T06:38:32.429Z",
        "kind": "main",
        "messages": [
            {
                "id": "553d877e",
                "timestamp": "2025-12-03T06:35:37.302Z",
                "type": "user",
                "content": "Fix the failing date test",
            },
            {
                "id": "d0d8eed9",
                "timestamp": "2025-12-03T06:35:51.334Z",
                "type": "gemini",
                "content": "Fixed.",
                "toolCalls": [edit],
            },
        ],
    }
    path.write_text(json.dumps(chat, indent=2))
    parsed = parse(path)
    [turn] = parsed.turns
    assert turn.session == "gemini-477739d0-1b78-4aa7-9116-02d08c952344"
    assert turn.prompt == "Fix the failing date test" and turn.answer == "Fixed."
    assert turn.files_edited == ["/home/alice/src/myapp/src/dates.py"]
    assert parsed.sessions[0].ended == "2025-12-03T06:38:32.429Z"
    path.write_text('{"sessionId": "half written')
    broken = parse(path)
    assert broken.turns == [] and len(broken.problems) == 1


def test_robustness(tmp_path: Path) -> None:
    path = project(tmp_path) / "session-x.jsonl"
    odd = user("u2", "caf\xe9").replace(b"\\u00e9", b"\xe9")
    raw = user("u3", "a\u2028b").replace(b"\\u2028", "\u2028".encode())
    path.write_bytes(
        header("z" * 500)
        + user("u1", "first")
        + b'{"id":"broken", "type":\n'
        + line(**{"$unknownOp": 1})
        + line(kind="something-new", payload=[1, 2])
        + odd
        + raw
        + b'{"id":"u4","type":"user","content":[{"text":"trunc'
    )
    parsed = parse(path)
    assert parsed.corrupt == 1
    assert [t.prompt for t in parsed.turns] == ["first", "caf\ufffd", "a\u2028b"]
    assert parsed.committed == len(path.read_bytes()) - len(path.read_bytes().rsplit(b"\n", 1)[1])
    [session] = parsed.sessions
    assert session.id.startswith("h-") and len(session.id) == 34
    assert session.native_id == "z" * 500


@pytest.mark.parametrize("cut", [0, 400, 2000, 4100, 6000, 9000])
def test_a_grown_file_is_read_whole_again(tmp_path: Path, cut: int) -> None:
    data = RESUMED.read_bytes()
    chats = project(tmp_path)
    path = chats / RESUMED.name
    path.write_bytes(data[:cut])
    first = parse(path)
    path.write_bytes(data)
    again = parse(path, first.resume)
    assert first.resume.offset == 0
    assert again.turns == parse(path).turns
    assert [t.prompt for t in again.turns][-1].startswith("HIPPO-TOOLS")


def test_context_and_set_messages_are_not_prompts(tmp_path: Path) -> None:
    path = project(tmp_path) / "session-x.jsonl"
    context = {
        "id": "c0",
        "type": "user",
        "content": [{"text": "<session_context>\nsetup\n</session_context>"}],
    }
    summary = {"id": "s9", "type": "user", "content": [{"text": "Summary of the chat so far."}]}
    path.write_bytes(
        header()
        + line(**{"$set": {"messages": [context]}})
        + line(**context)  # older releases wrote the context as a message record
        + user("u1", "real prompt")
        + gemini("g1", "answer")
        + line(**{"$set": {"messages": [summary, context]}})  # the model's context, compressed
    )
    [turn] = parse(path).turns
    assert turn.prompt == "real prompt" and turn.answer == "answer"


def test_an_empty_chat_has_no_session_yet(tmp_path: Path) -> None:
    path = project(tmp_path) / "session-2026-11-30T04-56-0319e6db.jsonl"
    path.write_bytes(b"")
    parsed = parse(path)
    assert parsed.sessions == [] and parsed.turns == [] and parsed.problems == []
