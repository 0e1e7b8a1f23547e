"""The dsh source, on multi-frame zstd session logs written by dsh 0.2.1-rc.2."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard

from hippo_core.transcripts.model import Parsed, Resume
from hippo_core.transcripts.sources.dsh import DshSource

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "dsh"
PROJECT = FIXTURES / "sessions" / "--home-dev-proj-dsh--"
LOG = "session.v4.jsonl.zstd"
TOOLS = PROJECT / "session-b1b7b862-7123-4696-9160-5a77469d44b8" / LOG
RESUMED = PROJECT / "session-e58dbea7-a1b7-4e23-96e6-aaead9462d82" / LOG
FAILED = PROJECT / "session-1432cbe0-25e3-4417-8a26-1184601444f0" / LOG
THINK = PROJECT / "session-a4b4271f-58ce-4f87-9021-06a8ecea74b5" / LOG
CWD = "/home/dev/proj-dsh"
DONE = (
    "Done. I listed the files, read README.md (missing.txt does not exist) "
    "and wrote notes.txt with two lines."
)

source = DshSource()


def parse(path: Path, resume: Resume | None = None) -> Parsed:
    return source.parse(path, resume or Resume())


def decoded(path: Path) -> bytes:
    reader = zstandard.ZstdDecompressor().stream_reader(
        io.BytesIO(path.read_bytes()), read_across_frames=True
    )
    return reader.read(1 << 24)


def frames(*chunks: bytes) -> bytes:
    """A multi-frame zstd stream, one frame per chunk, as dsh writes them."""
    return b"".join(zstandard.ZstdCompressor().compress(chunk) for chunk in chunks)


def line(**record: Any) -> bytes:
    return json.dumps(record).encode() + b"\n"


def header(sid: str, **extra: Any) -> bytes:
    fields = {"createdAt": 1796014505646, "cwd": CWD, "isSeeded": False, **extra}
    return line(type="session", version=4, id=sid, **fields)


def event(seq: int, kind: str, data: dict[str, Any]) -> bytes:
    return line(type=kind, seq=seq, time=1796014505700 + seq, data=data)


def user(seq: int, text: str, kind: str = "user", mid: str | None = None) -> bytes:
    message = {
        "content": [{"type": "text", "text": text}],
        "source": {"kind": kind},
        "role": "user",
    }
    return event(seq, "user/message", {**message, "id": mid or f"m{seq}"})


def assistant(seq: int, *blocks: dict[str, Any]) -> bytes:
    return event(
        seq,
        "assistant/message",
        {"turn": 1, "step": 1, "message": {"role": "assistant", "content": list(blocks)}},
    )


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_roots_honour_dsh_home(tmp_path: Path) -> None:
    assert source.roots({}, tmp_path) == [tmp_path / ".dsh"]
    assert source.roots({"DSH_HOME": "/x/dsh"}, tmp_path) == [Path("/x/dsh")]


def test_discover_takes_the_highest_generation_per_folder(tmp_path: Path) -> None:
    root = tmp_path / ".dsh"
    shutil.copytree(FIXTURES, root)
    found = list(source.discover(root))
    assert len(found) == 4 and all(p.name == LOG for p in found)
    folder = root / "sessions" / "--home-dev-proj-dsh--" / TOOLS.parent.name
    shutil.copy(folder / LOG, folder / "session.v3.jsonl.zstd")
    shutil.copy(folder / LOG, folder / "session.jsonl.zstd")
    assert [p.name for p in source.discover(root) if p.parent == folder] == [LOG]
    (folder / "session.v10.jsonl").write_bytes(decoded(TOOLS))
    assert [p.name for p in source.discover(root) if p.parent == folder] == ["session.v10.jsonl"]


def test_logs_are_decoded_across_frames() -> None:
    data = TOOLS.read_bytes()
    single = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read(1 << 24)
    assert single.count(b"\n") == 1 and single.startswith(b'{"type":"session"')
    whole = decoded(TOOLS)
    assert len(whole) > 100 * len(single)
    parsed = parse(TOOLS)
    # Offsets are into the decompressed stream.
    assert parsed.committed == len(whole)
    [turn] = parsed.turns
    assert whole[turn.start :].startswith(b'{"type":"user/message"')
    assert turn.end == len(whole)


def test_tools_run() -> None:
    parsed = parse(TOOLS)
    assert parsed.corrupt == 0 and parsed.problems == []
    [turn] = parsed.turns  # the runtime-context user/message is not a prompt
    assert turn.prompt.startswith("HIPPO-TOOLS")
    assert turn.session == "dsh-session-b1b7b862-7123-4696-9160-5a77469d44b8"
    assert turn.key == "94b1ce98-ea5a-4195-84d6-7949b4d92621"
    assert turn.tools == ["bash", "read", "read", "write"]
    assert turn.files_read == [f"{CWD}/README.md"]  # the missing.txt read failed
    assert turn.files_edited == [f"{CWD}/notes.txt"]
    assert turn.answer.endswith(DONE)
    assert turn.started == "2026-11-30T04:55:05.988Z"
    [session] = parsed.sessions
    assert session.cwd == CWD and session.parent is None
    assert session.title == "Fake title: hippo test session"
    assert session.started == "2026-11-30T04:55:05.646Z"
    assert session.handoff == DONE
    # A compressed log is read whole the next time.
    assert parsed.resume.offset == 0 and parsed.resume.state == {}


def test_resumed_session_gives_two_turns() -> None:
    parsed = parse(RESUMED)
    assert [t.prompt for t in parsed.turns] == [
        "HIPPO-PLAIN: say hello",
        "HIPPO-TOOLS: in the resumed session, look around again",
    ]
    first, second = parsed.turns
    assert first.answer == "Hello from the fake model. This is a plain answer with no tool use."
    assert first.ended == "2026-11-30T04:54:31.592Z"  # not the resume 45 s later
    assert second.files_read == [f"{CWD}/README.md"]
    assert second.files_edited == []  # the write was refused (FS_NOT_OBSERVED)
    assert parsed.sessions[0].ended == "2026-11-30T04:55:16.945Z"


def test_failed_calls_and_reasoning() -> None:
    [failed] = parse(FAILED).turns
    assert failed.tools == ["Bash", "Read", "Read", "Write"]
    assert failed.files_read == failed.files_edited == []
    [think] = parse(THINK).turns
    assert think.answer == "After thinking: the answer is 42."


def test_truncated_final_frame_uses_what_decoded(tmp_path: Path) -> None:
    data = TOOLS.read_bytes()
    path = tmp_path / LOG
    path.write_bytes(data[:-200])
    parsed = parse(path)
    assert parsed.problems == []
    assert 0 < parsed.committed < len(decoded(TOOLS))
    [turn] = parsed.turns
    assert turn.prompt.startswith("HIPPO-TOOLS")
    assert DONE not in turn.answer


def test_not_zstd_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    path = tmp_path / LOG
    path.write_bytes(b'{"type":"session"}\n')
    parsed = parse(path)
    assert parsed.turns == [] and len(parsed.problems) == 1
    assert "not a readable zstd stream" in parsed.problems[0]


def test_without_zstandard_the_source_reports_a_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)
    parsed = parse(TOOLS)
    assert parsed.turns == []
    assert parsed.problems == [f"{TOOLS}: cannot read a zstd dsh log: zstandard is not installed"]


def test_sub_agents_are_named_after_the_top_session(tmp_path: Path) -> None:
    project = tmp_path / "sessions" / "--p--"
    top, child, grandchild = "session-top", "c1c1", "g2g2"
    for sid, parent in ((top, None), (child, top), (grandchild, child)):
        extra = (
            {"parentSession": parent, "origin": "subagent", "delegationDepth": 1} if parent else {}
        )
        folder = project / sid
        folder.mkdir(parents=True)
        body = (
            header(sid, **extra)
            + user(0, f"prompt of {sid}")
            + assistant(1, text(f"answer of {sid}"))
        )
        (folder / LOG).write_bytes(frames(body[:50], body[50:]))
    sessions = {p.parent.name: parse(p).sessions[0] for p in source.discover(tmp_path)}
    assert sessions[top].id == "dsh-session-top" and sessions[top].parent is None
    assert sessions[child].id == "dsh-session-top-agent-c1c1"
    assert sessions[child].parent == "dsh-session-top"
    assert sessions[grandchild].id == "dsh-session-top-agent-g2g2"
    assert sessions[grandchild].parent == "dsh-session-top-agent-c1c1"
    assert sessions[child].handoff == "answer of c1c1"


def test_seeded_children_drop_inherited_events(tmp_path: Path) -> None:
    inherited = user(0, "the parent's prompt", mid="parent-prompt") + assistant(
        1, text("parent answer")
    )
    by_length = tmp_path / "a" / "session.v4.jsonl"
    by_length.parent.mkdir()
    by_length.write_bytes(
        header("a", isSeeded=True, seedLength=2, parentSession="p")
        + inherited
        + user(2, "own prompt")
    )
    by_marker = tmp_path / "b" / "session.v4.jsonl"
    by_marker.parent.mkdir()
    by_marker.write_bytes(
        header("b", parentSession="p")
        + inherited
        + event(2, "session/end-seed", {"inherited": True})
        + user(3, "own prompt")
        + assistant(4, text("own answer"))
    )
    for path in (by_length, by_marker):
        [turn] = parse(path).turns
        assert turn.prompt == "own prompt" and turn.ordinal == 0
    assert parse(by_marker).sessions[0].id == "dsh-p-agent-b"


def test_notices_are_not_prompts(tmp_path: Path) -> None:
    path = tmp_path / "s" / "session.v4.jsonl"
    path.parent.mkdir()
    path.write_bytes(
        header("s")
        + user(0, "real prompt")
        + user(1, "cwd is ...", kind="runtime-context")
        + user(2, "child finished", kind="subagent-settled")
        + user(3, "plugin says", kind="plugin")
        + user(4, "child report", kind="subagent-report")
        + assistant(5, text("answer"))
    )
    [turn] = parse(path).turns
    assert turn.prompt == "real prompt" and turn.answer == "answer"


def test_edit_meta_paths_are_edited_files(tmp_path: Path) -> None:
    path = tmp_path / "s" / "session.v4.jsonl"
    path.parent.mkdir()
    call = {
        "type": "tool-call",
        "id": "t1",
        "name": "edit",
        "arguments": '{"file_path": "hello.py"}',
    }
    result = {"message": {"role": "tool", "toolCallId": "t1", "isError": False, "content": []}}
    meta = {
        "path": f"{CWD}/hello.py",
        "diffs": [{"path": f"{CWD}/hello.py", "oldText": "a", "newText": "b"}],
    }
    path.write_bytes(
        header("s")
        + user(0, "HIPPO-EDIT: change the greeting in hello.py")
        + assistant(1, text("Now editing the greeting."), call)
        + event(2, "tool/result", {**result, "meta": meta})
    )
    [turn] = parse(path).turns
    assert turn.tools == ["edit"] and turn.files_edited == [f"{CWD}/hello.py"]


def test_plain_log_robustness(tmp_path: Path) -> None:
    path = tmp_path / ("x" * 10) / "session.v4.jsonl"
    path.parent.mkdir()
    odd = user(3, "caf\xe9").replace(b"\\u00e9", b"\xe9")
    raw = user(5, "a\u2028b").replace(b"\\u2028", "\u2028".encode())
    path.write_bytes(
        header("y" * 500)
        + user(0, "first")
        + b'{"type":"assistant/message", broken\n'
        + event(2, "brand/new-event", {"what": "unknown"})
        + odd
        + raw
        + b'{"type":"user/message","seq":9,"data":{"content":[{"type":"te'
    )
    parsed = parse(path)
    assert parsed.corrupt == 1
    assert [t.prompt for t in parsed.turns] == ["first", "caf\ufffd", "a\u2028b"]
    assert parsed.committed == path.stat().st_size - len(path.read_bytes().rsplit(b"\n", 1)[1])
    [session] = parsed.sessions
    assert session.id.startswith("h-") and len(session.id) == 34


def test_plain_log_prefix_then_resume_equals_full_parse(tmp_path: Path) -> None:
    data = decoded(RESUMED)
    path = tmp_path / RESUMED.parent.name / "session.v4.jsonl"
    path.parent.mkdir()
    path.write_bytes(data)
    full = parse(path)
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    cuts = sorted({0, 40, *ends[::3], *(end - 9 for end in ends[1::4]), len(data) - 1})
    for cut in cuts:
        path.write_bytes(data[:cut])
        first = parse(path)
        path.write_bytes(data)
        second = parse(path, first.resume)
        joined = [t for t in first.turns if t.start < first.resume.offset] + second.turns
        assert joined == full.turns, cut
        assert second.sessions == full.sessions, cut
    assert len(full.turns) == 2
