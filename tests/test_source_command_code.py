"""The Command Code source, on transcripts written by Command Code 1.64.0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hippo_core.transcripts.model import Parsed, Resume
from hippo_core.transcripts.sources.command_code import CommandCodeSource

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "command-code"
PROJECT = FIXTURES / "projects" / "home-dev-proj-cc"
TOOLS = PROJECT / "bf44b2d8-d0f3-45e7-866c-5219c8b1afbe.jsonl"
RESUMED = PROJECT / "958c187e-d65c-45d4-8a66-45a7063dec32.jsonl"
DELEGATE = PROJECT / "672d0c53-bfc6-4fc2-b2bb-f2b249564c45.jsonl"
CONTINUED = PROJECT / "0fce2ec3-9deb-4c7f-948c-f1b3c3eb5f6a.jsonl"
CWD = "/home/dev/proj-cc"
DONE = (
    "Done. I listed the files, read README.md (missing.txt does not exist) "
    "and wrote notes.txt with two lines."
)

source = CommandCodeSource()


def parse(path: Path, resume: Resume | None = None) -> Parsed:
    return source.parse(path, resume or Resume())


def line(**record: Any) -> bytes:
    return json.dumps(record).encode() + b"\n"


def header(sid: str = "s1", **extra: Any) -> bytes:
    return line(
        type="session", version=3, id=sid, timestamp="2026-11-30T04:00:00.000Z", cwd=CWD, **extra
    )


def message(mid: str, role: str, content: list[Any], source: str, **extra: Any) -> bytes:
    meta = {"source": source, "messageId": f"uuid-{mid}"}
    body = {"role": role, "content": content, "meta": meta}
    return line(
        type="message",
        id=mid,
        parentId=None,
        timestamp="2026-11-30T04:00:01.000Z",
        message=body,
        **extra,
    )


def prompt(mid: str, text: str) -> bytes:
    return message(mid, "user", [{"type": "text", "text": text}], "user")


def answer(mid: str, text: str) -> bytes:
    return message(mid, "assistant", [{"type": "text", "text": text}], "model")


def test_roots_and_discover_skip_meta_and_checkpoints(tmp_path: Path) -> None:
    assert source.roots({}, tmp_path) == [tmp_path / ".commandcode"]
    root = tmp_path / ".commandcode"
    shutil.copytree(FIXTURES, root)
    found = list(source.discover(root))
    assert [p.name for p in found] == sorted(p.name for p in (CONTINUED, DELEGATE, RESUMED, TOOLS))
    assert list(source.discover(tmp_path / "nowhere")) == []


def test_tools_run_gives_one_turn_with_files_and_answer() -> None:
    parsed = parse(TOOLS)
    assert parsed.corrupt == 0 and parsed.problems == []
    assert parsed.committed == TOOLS.stat().st_size
    [turn] = parsed.turns
    assert turn.prompt.startswith("HIPPO-TOOLS")
    assert turn.session == "command-code-bf44b2d8-d0f3-45e7-866c-5219c8b1afbe"
    assert turn.key == "bea45299-3a11-4b93-ab1a-ca57593e6f33"  # the prompt's meta.messageId
    assert turn.tools == ["shell_command", "read_file", "read_file", "write_file"]
    # No error flag in Command Code's results: the failed read still names its file.
    assert turn.files_read == [f"{CWD}/README.md", f"{CWD}/missing.txt"]
    assert turn.files_edited == [f"{CWD}/notes.txt"]
    assert turn.answer.endswith(DONE)
    assert turn.cwd == CWD
    assert turn.started == "2026-11-30T04:53:26.075Z"
    assert turn.ended == "2026-11-30T04:53:26.159Z"
    [session] = parsed.sessions
    assert session.id == turn.session
    assert session.native_id == "bf44b2d8-d0f3-45e7-866c-5219c8b1afbe"
    assert session.cwd == CWD
    assert session.started == "2026-11-30T04:53:25.936Z"
    assert session.handoff == DONE


def test_resumed_and_continued_sessions_give_two_turns() -> None:
    resumed = parse(RESUMED)
    assert [t.prompt for t in resumed.turns] == [
        "HIPPO-PLAIN: say hello",
        "HIPPO-TOOLS: in the resumed session, look around again",
    ]
    assert [t.ordinal for t in resumed.turns] == [0, 1]
    first, second = resumed.turns
    assert first.end == second.start
    assert first.answer == "Hello from the fake model. This is a plain answer with no tool use."
    assert second.files_edited == [f"{CWD}/notes.txt"]
    assert resumed.resume.offset == second.start
    continued = parse(CONTINUED)
    assert [t.prompt for t in continued.turns] == [
        "HIPPO-THINK: think, then answer",
        "HIPPO-PLAIN: follow-up via --continue",
    ]
    # The thinking block is not part of the answer.
    assert continued.turns[0].answer == "After thinking: the answer is 42."


def test_delegate_run_has_the_agent_tool_and_no_sub_agent_session() -> None:
    parsed = parse(DELEGATE)
    [turn] = parsed.turns
    assert turn.tools == ["agent"]
    assert [s.id for s in parsed.sessions] == ["command-code-672d0c53-bfc6-4fc2-b2bb-f2b249564c45"]
    assert parsed.sessions[0].handoff == "The sub-agent reported the file list; all done."


def test_edit_run_records_the_edited_file(tmp_path: Path) -> None:
    # Run 4 as the research describes it: read hello.py, then edit_file on it.
    path = tmp_path / "9ff41aa8.jsonl"
    read = {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"file_path": "hello.py"}}
    edit = {
        "type": "tool_use",
        "id": "c2",
        "name": "edit_file",
        "input": {
            "file_path": "hello.py",
            "old_string": 'print("hello")',
            "new_string": 'print("hello, hippo")',
        },
    }
    result = [
        {
            "type": "tool_result",
            "tool_use_id": "c2",
            "content": [{"type": "text", "text": "Edited"}],
        }
    ]
    path.write_bytes(
        header("9ff41aa8")
        + prompt("p1", "HIPPO-EDIT: change the greeting in hello.py")
        + message(
            "a1", "assistant", [{"type": "text", "text": "Reading hello.py first."}, read], "model"
        )
        + message("r1", "user", result, "tool")
        + message(
            "a2",
            "assistant",
            [{"type": "text", "text": "Now editing the greeting."}, edit],
            "model",
        )
        + message("r2", "user", result, "tool")
        + answer("a3", "Edited hello.py: it now prints hello, hippo.")
    )
    [turn] = parse(path).turns
    assert turn.files_read == [f"{CWD}/hello.py"]
    assert turn.files_edited == [f"{CWD}/hello.py"]
    assert turn.tools == ["read_file", "edit_file"]


def test_fork_is_its_own_session_and_copied_prompts_keep_their_keys(tmp_path: Path) -> None:
    # --fork-session: the header keeps the parent's id and adds sessionId; copied records
    # keep their ids and gain sessionId; the new turn's records have none.
    new = "ea0fd1aa-0000-4000-8000-000000000000"
    lines = RESUMED.read_bytes().splitlines(keepends=True)
    head = json.loads(lines[0])
    copied = [
        json.dumps({**json.loads(raw), "sessionId": new}).encode() + b"\n" for raw in lines[1:]
    ]
    fork = tmp_path / f"{new}.jsonl"
    fork.write_bytes(
        json.dumps({**head, "sessionId": new}).encode()
        + b"\n"
        + b"".join(copied)
        + prompt("f1", "HIPPO-PLAIN: a forked follow-up")
        + answer("f2", "Forked answer.")
    )
    parent, child = parse(RESUMED), parse(fork)
    assert [s.id for s in child.sessions] == [f"command-code-{new}"]
    assert {t.session for t in child.turns} == {f"command-code-{new}"}
    assert [t.key for t in child.turns[:2]] == [t.key for t in parent.turns]
    assert child.turns[2].prompt == "HIPPO-PLAIN: a forked follow-up"
    assert child.turns[2].key not in {t.key for t in parent.turns}
    assert child.sessions[0].handoff == "Forked answer."
    assert child.sessions[0].cwd == CWD


def test_older_ai_sdk_shape(tmp_path: Path) -> None:
    path = tmp_path / "sess-1.jsonl"
    call = {
        "type": "tool-call",
        "toolCallId": "c1",
        "toolName": "edit",
        "input": {"path": "src/dates.py"},
    }
    path.write_bytes(
        line(
            role="user",
            sessionId="sess-1",
            timestamp="2026-06-16T05:58:15.580Z",
            content=[{"type": "text", "text": "Fix the failing date test"}],
        )
        + line(
            role="assistant",
            sessionId="sess-1",
            timestamp="2026-06-16T05:58:20.332Z",
            content=[{"type": "text", "text": "Looking."}, call],
        )
        + line(
            role="tool",
            sessionId="sess-1",
            content=[
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "output": {"type": "text", "value": "ok"},
                }
            ],
        )
    )
    parsed = parse(path)
    [turn] = parsed.turns
    assert turn.session == "command-code-sess-1"
    assert turn.prompt == "Fix the failing date test"
    assert turn.tools == ["edit"]
    assert turn.files_edited == ["src/dates.py"]
    assert parsed.sessions[0].handoff == "Looking."


def test_truncated_last_line_is_used_later_not_committed(tmp_path: Path) -> None:
    data = TOOLS.read_bytes()
    path = tmp_path / "t.jsonl"
    path.write_bytes(data[:-40])
    parsed = parse(path)
    assert parsed.committed == data.rfind(b"\n", 0, len(data) - 1) + 1
    assert parsed.corrupt == 0
    [turn] = parsed.turns
    assert DONE not in turn.answer


def test_corrupt_middle_line_unknown_record_and_odd_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(
        header()
        + b'{"type":"message","id":"x", this is not json\n'
        + line(type="compaction", id="c", summary="an unknown record type")
        + prompt("p1", "first \u2028 line")
        + answer("a1", "one")
        + prompt("p2", "caf\xe9 BYTES").replace(b"\\u00e9", b"\xe9")
        + answer("a2", "two")
    )
    parsed = parse(path)
    assert parsed.corrupt == 1
    assert [t.prompt for t in parsed.turns] == ["first \u2028 line", "caf\ufffd BYTES"]
    assert [t.answer for t in parsed.turns] == ["one", "two"]


def test_raw_u2028_inside_a_line_does_not_split_it(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    raw = prompt("p1", "before\u2028after").replace(b"\\u2028", "\u2028".encode())
    assert "\u2028".encode() in raw
    path.write_bytes(header() + raw + answer("a1", "ok"))
    [turn] = parse(path).turns
    assert turn.prompt == "before\u2028after"


@pytest.mark.parametrize("raw_id", ["x" * 500, "has spaces/and slashes"])
def test_invalid_session_ids_are_hashed(tmp_path: Path, raw_id: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(header(raw_id) + prompt("p1", "hi") + answer("a1", "ok"))
    parsed = parse(path)
    [session] = parsed.sessions
    assert session.id.startswith("h-") and len(session.id) == 34
    assert session.native_id == raw_id
    assert parsed.turns[0].session == session.id


def combined(path: Path, data: bytes, cut: int) -> tuple[Parsed, Parsed]:
    """A parse of ``data[:cut]`` then one resumed on the whole file, as the ingest joins them."""
    path.write_bytes(data[:cut])
    first = parse(path)
    path.write_bytes(data)
    second = parse(path, first.resume)
    kept = [t for t in first.turns if t.start < first.resume.offset]
    second.turns = kept + second.turns
    second.corrupt += first.corrupt
    return first, second


@pytest.mark.parametrize("name", [RESUMED.name, TOOLS.name])
def test_prefix_then_resumed_parse_equals_one_full_parse(tmp_path: Path, name: str) -> None:
    data = (PROJECT / name).read_bytes() + b"not json\n" + answer("z", "late text")
    path = tmp_path / name
    path.write_bytes(data)
    full = parse(path)
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    cuts = sorted({0, 5, *ends, *(end - 7 for end in ends), *(end + 30 for end in ends[:-1])})
    for cut in cuts:
        _, joined = combined(path, data, cut)
        assert joined.turns == full.turns, cut
        assert joined.sessions == full.sessions, cut
        assert joined.corrupt == full.corrupt == 1, cut
        assert joined.committed == full.committed


def test_only_user_sourced_messages_are_prompts(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(
        header()
        + prompt("p1", "real prompt")
        + message("t1", "user", [{"type": "text", "text": "tool output as text"}], "tool")
        + message("x1", "user", [{"type": "text", "text": "injected"}], "system")
        + answer("a1", "ok")
    )
    [turn] = parse(path).turns
    assert turn.prompt == "real prompt" and turn.answer == "ok"
