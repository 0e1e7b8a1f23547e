"""The Muse Code source, on synthetic logs built from what public parsers of the log agree on.

No Muse Code host could be run (see shared/research/realclients2/README.md, section 4), so
these records use only the envelope and payload fields that section establishes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hippo_core.transcripts.model import Parsed, Resume
from hippo_core.transcripts.sources.muse import MuseSource

SID = "019a1b2c-3d4e-7f00-8a9b-0c1d2e3f4a5b"
WORKSPACE = "/home/dev/proj-muse"
T0 = 1796014505646000  # microseconds

source = MuseSource()


def parse(path: Path, resume: Resume | None = None) -> Parsed:
    return source.parse(path, resume or Resume())


def record(seq: int, payload_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"rec-{seq}",
        "sequence": seq,
        "stream": {"id": SID, "kind": "session"},
        "record_type": "event",
        "payload_type": payload_type,
        "payload_schema_version": 1,
        "schema_version": 1,
        "recorded_at": T0 + seq * 1000,
        "durability": "durable",
        "causation_id": None,
        "payload": payload,
    }


def line(value: Any) -> bytes:
    return json.dumps(value).encode() + b"\n"


def metadata(seq: int) -> bytes:
    return line(record(seq, "runtime.session.metadata", {"record": {"workspace_root": WORKSPACE}}))


def prompt(seq: int, text: str, kind: str = "chat") -> bytes:
    messages = [{"role": "user", "content": [{"kind": "text", "text": text}]}]
    payload = {"semantic_kind": {"kind": kind}, "model_messages": messages}
    return line(record(seq, "runtime.user_intent.accepted", payload))


def session_event(seq: int, kind: str, **fields: Any) -> bytes:
    return line(record(seq, "runtime.session", {"event": {"kind": kind, **fields}}))


def say(seq: int, text: str) -> bytes:
    return session_event(seq, "assistant_message_committed", text=text)


def log_path(root: Path, sid: str = SID) -> Path:
    path = root / "sessions" / "2026" / "11" / "30" / sid / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def conversation() -> bytes:
    return (
        metadata(0)
        + prompt(1, "HIPPO-TOOLS: look around the project")
        + session_event(2, "reasoning_committed", text="Thinking about it.")
        + session_event(
            3,
            "assistant_tool_calls_committed",
            tool_calls=[{"name": "shell", "args": {"command": "ls"}}],
        )
        + session_event(
            4, "tool_result_batch_committed", results=[{"text": "README.md\nhello.py\n"}]
        )
        + say(5, "The project holds README.md and hello.py.")
        + prompt(6, "HIPPO-PLAIN: say hello")
        + say(7, "Hello.")
    )


def test_roots(tmp_path: Path) -> None:
    assert source.roots({}, tmp_path) == [tmp_path / ".local/share/muse", tmp_path / ".muse"]
    assert source.roots({"XDG_DATA_HOME": "/d"}, tmp_path) == [Path("/d/muse"), tmp_path / ".muse"]


def test_discover_only_dated_session_logs(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    path.write_bytes(conversation())
    # A pi-based agent's file and a sub-agent log are not top-level Muse session logs.
    (tmp_path / "sessions" / f"{SID}.jsonl").write_text("{}\n")
    child = path.parent / "subagent" / "child" / "session.jsonl"
    child.parent.mkdir(parents=True)
    child.write_bytes(conversation())
    assert list(source.discover(tmp_path)) == [path]


def test_a_conversation(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    path.write_bytes(conversation())
    parsed = parse(path)
    assert parsed.problems == [] and parsed.corrupt == 0
    first, second = parsed.turns
    assert first.session == second.session == f"muse-{SID}"
    assert first.prompt == "HIPPO-TOOLS: look around the project"
    assert first.key == "rec-1"
    assert first.tools == ["shell"]
    assert first.answer == "The project holds README.md and hello.py."  # no reasoning
    assert first.cwd == WORKSPACE
    assert first.files_cited == [f"{WORKSPACE}/README.md", f"{WORKSPACE}/hello.py"]
    assert first.started == "2026-11-30T04:55:05.647000Z"
    assert first.ended == "2026-11-30T04:55:05.651000Z"
    assert second.prompt == "HIPPO-PLAIN: say hello" and second.ordinal == 1
    [session] = parsed.sessions
    assert session.id == f"muse-{SID}" and session.native_id == SID
    assert session.cwd == WORKSPACE
    assert session.handoff == "Hello."
    assert session.started == "2026-11-30T04:55:05.646000Z"


def test_only_chat_intents_are_prompts(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    path.write_bytes(prompt(0, "real") + prompt(1, "steering text", kind="steer") + say(2, "ok"))
    [turn] = parse(path).turns
    assert turn.prompt == "real" and turn.answer == "ok"


def test_batched_records_are_unpacked(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    batch = {
        "children": [
            {
                "record_json": json.dumps(
                    record(
                        1,
                        "runtime.session",
                        {"event": {"kind": "assistant_message_committed", "text": "batched"}},
                    )
                )
            }
        ]
    }
    path.write_bytes(prompt(0, "hi") + line(batch))
    [turn] = parse(path).turns
    assert turn.answer == "batched"


@pytest.mark.parametrize(
    "content",
    [
        # pi JSONL, as a pi-based agent writes it below ~/.muse/sessions
        b'{"type":"session","id":"abc","cwd":"/w","timestamp":"2026-01-01T00:00:00Z"}\n'
        b'{"type":"message","id":"m1","parentId":null,"message":{"role":"user","content":"hi"}}\n',
        # nur's whole-file JSON session
        json.dumps(
            {"id": "abc", "messages": [{"role": "user", "content": "hi"}]}, indent=2
        ).encode(),
    ],
)
def test_a_foreign_file_is_a_problem_not_a_guess(tmp_path: Path, content: bytes) -> None:
    path = log_path(tmp_path)
    path.write_bytes(content)
    parsed = parse(path)
    assert parsed.turns == [] and parsed.sessions == []
    assert parsed.problems == [f"not a Muse Code session log: {path}"]


def test_robustness(tmp_path: Path) -> None:
    path = log_path(tmp_path, "bad id!")
    odd = prompt(3, "caf\xe9").replace(b"\\u00e9", b"\xe9")
    raw = prompt(5, "a\u2028b").replace(b"\\u2028", "\u2028".encode())
    path.write_bytes(
        prompt(0, "first")
        + b'{"payload_type": "runtime.session", broken\n'
        + line(record(2, "runtime.something.new", {"x": 1}))
        + odd
        + raw
        + b'{"payload_type":"runtime.user_intent.accepted","payload":{"semantic_kind":{"kind":"ch'
    )
    parsed = parse(path)
    assert parsed.corrupt == 1
    assert [t.prompt for t in parsed.turns] == ["first", "caf\ufffd", "a\u2028b"]
    data = path.read_bytes()
    assert parsed.committed == len(data) - len(data.rsplit(b"\n", 1)[1])
    [session] = parsed.sessions
    assert session.id.startswith("h-") and len(session.id) == 34 and session.native_id == "bad id!"


def test_prefix_then_resumed_parse_equals_one_full_parse(tmp_path: Path) -> None:
    data = conversation() + b"corrupt\n" + say(9, "Late.")
    path = log_path(tmp_path)
    path.write_bytes(data)
    full = parse(path)
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    for cut in sorted({0, 10, *ends, *(end - 5 for end in ends)}):
        path.write_bytes(data[:cut])
        first = parse(path)
        path.write_bytes(data)
        second = parse(path, first.resume)
        joined = [t for t in first.turns if t.start < first.resume.offset] + second.turns
        assert joined == full.turns, cut
        assert second.sessions == full.sessions, cut
        assert first.corrupt + second.corrupt == full.corrupt == 1, cut
    assert full.sessions[0].handoff == "Late."


def test_a_first_line_still_being_written_is_not_judged(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    path.write_bytes(metadata(0)[:30])
    parsed = parse(path)
    assert parsed.problems == [] and parsed.turns == [] and parsed.resume.offset == 0
