"""The Codex source on real 0.171 rollouts, and on rollouts built from their records."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hippo_core.plugins.manager import load_plugins
from hippo_core.transcripts.model import Parsed, Resume, Turn
from hippo_core.transcripts.shell import files_read
from hippo_core.transcripts.sources import codex
from hippo_core.transcripts.sources.codex import CodexSource

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "codex"
DAY = FIXTURES / "sessions" / "2026" / "11" / "30"
RUN1 = DAY / "rollout-2026-11-30T04-40-30-01a22ac1-2350-72d3-b376-1fb30d3b60e2.jsonl"
RUN2 = DAY / "rollout-2026-11-30T04-43-52-01a22ac4-389a-7420-84d3-df0c452daa3d.jsonl"
PARENT = "01a22ac4-389a-7420-84d3-df0c452daa3d"
CHILD = "01a22ac4-b008-77d0-9b13-f5c8782b73e0"
TASK = "HIPPO-CHILD: list the files in the project root and report them."


def parse(path: Path, resume: Resume | None = None) -> Parsed:
    return CodexSource().parse(path, resume or Resume())


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines(path)]


def write(path: Path, items: Sequence[dict[str, Any] | bytes]) -> Path:
    """A rollout of records (dicts) and raw lines (bytes, written as given)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out = b"".join(
        item if isinstance(item, bytes) else json.dumps(item).encode() + b"\n" for item in items
    )
    path.write_bytes(out)
    return path


def line(kind: str, payload: Any, at: str = "2026-11-30T05:00:00.000Z") -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def turns_as_dicts(turns: list[Turn]) -> list[dict[str, Any]]:
    return [t.as_dict() for t in turns]


# --- the real rollouts ------------------------------------------------------------------


def test_run2_one_turn_with_tools_reads_and_edits():
    parsed = parse(RUN2)
    assert parsed.corrupt == 0 and parsed.problems == []
    assert parsed.committed == RUN2.stat().st_size
    [turn] = parsed.turns
    assert turn.prompt.startswith("HIPPO-TOOLS")
    assert turn.session == f"codex-{PARENT}"
    assert turn.key == f"{PARENT}:01a22ac4-38ba-72b0-bb59-38b0f822fea7"
    assert turn.tools == ["exec_command", "exec_command", "exec_command", "apply_patch"]
    assert turn.files_edited == ["/home/dev/proj-codex/notes.txt"]
    # cat missing.txt exited 1: tried, but nothing was read
    assert turn.files_read == ["/home/dev/proj-codex/README.md"]
    assert turn.answer.startswith("I'll start by listing the project files.")
    assert turn.answer.endswith(
        "Done. I listed the files, read README.md (missing.txt does not exist) and wrote "
        "notes.txt with two lines."
    )
    # injected context is no prompt and no answer
    assert "environment_context" not in turn.prompt + turn.answer
    assert "HIPPO-CTX" not in turn.prompt + turn.answer
    assert turn.cwd == "/home/dev/proj-codex" and turn.branch == "master"
    assert turn.started == "2026-11-30T04:43:52.647Z"
    assert turn.ended == "2026-11-30T04:43:52.984Z"
    assert turn.end == RUN2.stat().st_size


def test_run2_session():
    [session] = parse(RUN2).sessions
    assert session.id == f"codex-{PARENT}" and session.native_id == PARENT
    assert session.tool == "codex" and session.parent is None
    assert (session.cwd, session.branch) == ("/home/dev/proj-codex", "master")
    assert session.started == "2026-11-30T04:43:52.355Z"
    assert session.ended == "2026-11-30T04:43:52.984Z"
    assert (session.handoff or "").startswith("Done. I listed the files")


def test_run1_resumed_rollout_has_two_turns_in_one_session():
    parsed = parse(RUN1)
    assert [t.prompt for t in parsed.turns] == [
        "HIPPO-PLAIN: say hello",
        "HIPPO-PLAIN: follow-up in the resumed session",
    ]
    assert [t.ordinal for t in parsed.turns] == [0, 1]
    assert {t.session for t in parsed.turns} == {"codex-01a22ac1-2350-72d3-b376-1fb30d3b60e2"}
    assert len({t.key for t in parsed.turns}) == 2
    assert all(t.answer.startswith("Hello from the fake model.") for t in parsed.turns)
    assert all(t.tools == [] for t in parsed.turns)
    assert len(parsed.sessions) == 1
    assert parsed.sessions[0].ended == "2026-11-30T04:44:28.101Z"
    # the resume point is the start of the last turn, which may still grow
    assert parsed.resume.offset == parsed.turns[1].start
    assert parsed.turns[0].end <= parsed.turns[1].start


def test_discover_and_roots(tmp_path: Path):
    source = CodexSource()
    assert source.roots({"CODEX_HOME": "/x/codex"}, tmp_path) == [Path("/x/codex")]
    assert source.roots({}, tmp_path) == [tmp_path / ".codex"]
    found = list(source.discover(FIXTURES))
    assert found == [RUN1, RUN2]
    (tmp_path / "archived_sessions").mkdir()
    (tmp_path / "archived_sessions" / "rollout-2025-01-01T00-00-00-a.jsonl").write_text("")
    (tmp_path / "sessions" / "2026").mkdir(parents=True)
    (tmp_path / "sessions" / "2026" / "rollout-2026-b.jsonl").write_text("")
    (tmp_path / "sessions" / "history.jsonl").write_text("")
    assert [p.name for p in source.discover(tmp_path)] == [
        "rollout-2026-b.jsonl",
        "rollout-2025-01-01T00-00-00-a.jsonl",
    ]
    assert list(source.discover(tmp_path / "nowhere")) == []


def test_registers_through_the_hook():
    found: list[Any] = list(load_plugins().sources().values())
    assert [type(s) for s in found if s.name == "codex"] == [codex.CodexSource]


# --- incremental reading --------------------------------------------------------------------


def grow(path: Path, data: bytes, cuts: list[int]) -> tuple[list[Turn], Parsed, int]:
    """Write ``data`` in pieces, parsing after each as the ingest does; the index at the end."""
    index: list[Turn] = []
    resume, corrupt = Resume(), 0
    parsed = Parsed()
    for cut in [*cuts, len(data)]:
        path.write_bytes(data[:cut])
        parsed = parse(path, resume)
        index = [t for t in index if t.start < resume.offset] + parsed.turns
        corrupt += parsed.corrupt
        resume = parsed.resume
    return index, parsed, corrupt


@pytest.mark.parametrize("fixture", [RUN1, RUN2])
def test_prefix_then_rest_equals_one_full_parse(tmp_path: Path, fixture: Path):
    data = fixture.read_bytes()
    full = parse(fixture)
    ends = [len(b"".join(lines(fixture)[: i + 1])) for i in range(len(lines(fixture)))]
    cuts = sorted({*ends, *(end - 7 for end in ends), *(end + 3 for end in ends[:-1])})
    target = tmp_path / fixture.name
    for cut in cuts:
        index, last, _ = grow(target, data, [cut])
        for turn in index:
            turn.source = str(fixture)
        assert turns_as_dicts(index) == turns_as_dicts(full.turns), cut
        assert [s.as_dict() for s in last.sessions] == [s.as_dict() for s in full.sessions], cut


def test_growing_line_by_line_equals_one_full_parse(tmp_path: Path):
    data = RUN1.read_bytes()
    ends = [len(b"".join(lines(RUN1)[: i + 1])) for i in range(len(lines(RUN1)))]
    cuts = sorted({*ends, *(end - 5 for end in ends)})
    index, _, _ = grow(tmp_path / RUN1.name, data, cuts)
    full = parse(tmp_path / RUN1.name)
    assert turns_as_dicts(index) == turns_as_dicts(full.turns)
    assert len(index) == 2


def test_truncated_last_line_is_read_again(tmp_path: Path):
    data = RUN1.read_bytes()
    cut = len(data) - 100  # inside the last line (task_complete)
    path = tmp_path / RUN1.name
    path.write_bytes(data[:cut])
    parsed = parse(path)
    assert parsed.corrupt == 0
    assert parsed.committed == data.rindex(b"\n", 0, cut) + 1
    assert len(parsed.turns) == 2
    assert parsed.resume.offset == parsed.turns[1].start
    path.write_bytes(data)
    rest = parse(path, parsed.resume)
    assert [t.prompt for t in rest.turns] == ["HIPPO-PLAIN: follow-up in the resumed session"]
    assert rest.committed == len(data)


def test_corrupt_middle_line_is_counted_once(tmp_path: Path):
    raw = lines(RUN1)
    broken = b'{"timestamp":"2026-11-30T04:40:30.700Z","type":"event_msg","payl\n'
    data = b"".join([*raw[:13], broken, *raw[13:]])
    path = tmp_path / RUN1.name
    path.write_bytes(data)
    parsed = parse(path)
    assert parsed.corrupt == 1
    assert [t.prompt for t in parsed.turns] == [t.prompt for t in parse(RUN1).turns]
    assert parsed.turns[0].answer.startswith("Hello from the fake model.")
    cut = len(b"".join(raw[:20]))  # past the corrupt line, before the resumed turn
    _, _, corrupt = grow(path, data, [cut, cut + 400])
    assert corrupt == 1


def test_bytes_that_are_not_utf8(tmp_path: Path):
    raw = lines(RUN1)
    raw[11] = raw[11].replace(b"say hello", b"say \xff hello")
    path = tmp_path / RUN1.name
    path.write_bytes(b"".join(raw))
    parsed = parse(path)
    assert parsed.corrupt == 0
    assert parsed.turns[0].prompt == "HIPPO-PLAIN: say \ufffd hello"


def test_unknown_records_are_ignored(tmp_path: Path):
    raw = lines(RUN2)
    odd = [
        json.dumps(line("hologram", {"type": "x", "text": "HIPPO-NOPE"})).encode() + b"\n",
        json.dumps(line("event_msg", {"type": "brand_new_event", "message": "nope"})).encode()
        + b"\n",
        json.dumps(line("response_item", {"type": "telepathy", "call_id": "c"})).encode() + b"\n",
        json.dumps(line("event_msg", "not an object")).encode() + b"\n",
        b"[1, 2, 3]\n",
        b'"just a string"\n',
        b"\n",
    ]
    path = tmp_path / RUN2.name
    path.write_bytes(b"".join([*raw[:20], *odd, *raw[20:]]))
    parsed = parse(path)
    expected = parse(RUN2).turns[0]
    assert parsed.corrupt == 0
    [turn] = parsed.turns
    assert (turn.prompt, turn.answer, turn.tools) == (
        expected.prompt,
        expected.answer,
        expected.tools,
    )
    assert turn.files_read == expected.files_read and turn.files_edited == expected.files_edited


def test_line_separator_inside_a_string_is_no_line_break(tmp_path: Path):
    items = records(RUN1)
    prompt = "HIPPO-PLAIN: say\u2028hello\u2029there\x85now"
    items[11]["payload"]["item"]["content"][0]["text"] = prompt
    data = b"".join(json.dumps(item, ensure_ascii=False).encode() + b"\n" for item in items)
    assert "\u2028".encode() in data
    path = tmp_path / RUN1.name
    path.write_bytes(data)
    parsed = parse(path)
    assert parsed.corrupt == 0
    assert parsed.turns[0].prompt == prompt
    assert len(parsed.turns) == 2


@pytest.mark.parametrize("native", ["x" * 500, "ab/../cd", "sp ace"])
def test_an_invalid_session_id_is_hashed(tmp_path: Path, native: str):
    items = records(RUN2)
    items[0]["payload"]["id"] = native
    parsed = parse(write(tmp_path / "rollout-x.jsonl", items))
    [session] = parsed.sessions
    assert session.id.startswith("h-") and len(session.id) == 34
    assert session.native_id == native
    assert parsed.turns[0].session == session.id
    again = parse(write(tmp_path / "rollout-y.jsonl", items))
    assert again.sessions[0].id == session.id


def test_a_rollout_without_session_meta_takes_the_id_from_its_name(tmp_path: Path):
    items: list[dict[str, Any] | bytes] = [b"garbage\n", *records(RUN2)[1:]]
    parsed = parse(write(tmp_path / RUN2.name, items))
    assert parsed.corrupt == 1
    assert parsed.turns[0].session == f"codex-{PARENT}"


# --- sub-agents -----------------------------------------------------------------------------


def child_rollout(task_text: str = TASK) -> list[dict[str, Any] | bytes]:
    """A sub-agent rollout as 0.171 writes one (README section 2), from run 2's records."""
    parent_history = records(RUN2)[:17]  # meta, context, prompt, first answer, exec ls
    spawn_args = {"task_name": "list_files", "message": TASK}
    spawn = line(
        "response_item",
        {
            "type": "function_call",
            "namespace": "collaboration",
            "name": "spawn_agent",
            "arguments": json.dumps(spawn_args),
            "call_id": "call_spawn",
        },
    )
    meta = json.loads(json.dumps(parent_history[0]))
    meta["payload"].update(
        id=CHILD,
        session_id=PARENT,
        forked_from_id=PARENT,
        parent_thread_id=PARENT,
        thread_source="subagent",
        source={
            "subagent": {
                "thread_spawn": {
                    "parent_thread_id": PARENT,
                    "depth": 1,
                    "agent_path": "/root/list_files",
                    "agent_nickname": "Lister",
                }
            }
        },
    )
    turn_id = "01a22ac4-b022-74f2-89c3-7be551fc0de3"
    task = {
        "type": "agent_message",
        "author": "/root",
        "recipient": "/root/list_files",
        "content": [{"type": "encrypted_content", "encrypted_content": task_text}],
    }
    shell = {"cmd": "cat hello.py"}
    return [
        meta,
        *parent_history,
        spawn,
        line("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        line("response_item", task, "2026-11-30T04:44:22.900Z"),
        line("event_msg", {"type": "task_started", "turn_id": turn_id}),
        line("turn_context", {"turn_id": turn_id, "cwd": "/home/dev/proj-codex"}),
        line(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps(shell),
                "call_id": "c1",
            },
        ),
        line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": "Chunk ID: 1\nProcess exited with code 0\nOutput:\nprint('hi')\n",
            },
        ),
        line(
            "event_msg",
            {
                "type": "item_completed",
                "turn_id": turn_id,
                "item": {
                    "type": "AgentMessage",
                    "content": [{"type": "Text", "text": "Sub-agent result: README.md"}],
                },
            },
            "2026-11-30T04:44:23.200Z",
        ),
        line(
            "event_msg", {"type": "task_complete", "turn_id": turn_id}, "2026-11-30T04:44:23.222Z"
        ),
    ]


def test_sub_agent_rollout(tmp_path: Path):
    path = write(tmp_path / f"rollout-2026-11-30T04-44-22-{CHILD}.jsonl", child_rollout())
    parsed = parse(path)
    [session] = parsed.sessions
    assert session.id == f"codex-{CHILD}" and session.native_id == CHILD
    assert session.parent == f"codex-{PARENT}"
    assert session.handoff == "Sub-agent result: README.md"
    [turn] = parsed.turns  # the parent's copied history is no turn of the child's
    assert turn.session == f"codex-{CHILD}"
    assert turn.prompt == TASK
    assert turn.tools == ["exec_command"]
    assert turn.files_read == ["/home/dev/proj-codex/hello.py"]
    assert "listing the project files" not in turn.answer
    assert turn.answer == "Sub-agent result: README.md"
    assert turn.started == "2026-11-30T04:44:22.900Z"


def test_sub_agent_task_text_encrypted_comes_from_the_spawn_call(tmp_path: Path):
    path = write(tmp_path / f"rollout-{CHILD}.jsonl", child_rollout("gAAAAABencrypted=="))
    [turn] = parse(path).turns
    assert turn.prompt == TASK


def test_sub_agent_incremental(tmp_path: Path):
    path = write(tmp_path / f"rollout-{CHILD}.jsonl", child_rollout())
    data = path.read_bytes()
    full = parse(path)
    step = len(data) // 9
    index, last, _ = grow(path, data, list(range(step, len(data), step)))
    assert turns_as_dicts(index) == turns_as_dicts(full.turns)
    assert last.sessions[0].parent == f"codex-{PARENT}"


def test_a_final_answer_message_to_the_parent_is_no_prompt(tmp_path: Path):
    reply = {
        "type": "agent_message",
        "author": "/root/list_files",
        "recipient": "/root",
        "content": [{"type": "input_text", "text": "Message Type: FINAL_ANSWER\n..."}],
    }
    path = write(tmp_path / RUN2.name, [*records(RUN2), line("response_item", reply)])
    assert len(parse(path).turns) == 1


# --- older formats --------------------------------------------------------------------------

OLD = "0199a2b4-5f1e-7c3d-9e2a-1b2c3d4e5f60"


def old_rollout() -> list[dict[str, Any] | bytes]:
    """A rollout as Codex 0.77 wrote one (research notes section 3), with every tool shape."""

    def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
        payload = {"type": "function_call", "name": name, "arguments": json.dumps(args)}
        return line("response_item", {**payload, "call_id": call_id})

    def output(call_id: str, code: int) -> dict[str, Any]:
        text = json.dumps({"output": "…", "metadata": {"exit_code": code}})
        return line(
            "response_item", {"type": "function_call_output", "call_id": call_id, "output": text}
        )

    def user(text: str) -> dict[str, Any]:
        content = [{"type": "input_text", "text": text}]
        return line("response_item", {"type": "message", "role": "user", "content": content})

    patch = (
        "*** Begin Patch\n*** Update File: src/dates.py\n*** Move to: src/when.py\n"
        "@@\n-a\n+b\n*** End Patch\n"
    )
    custom = "*** Begin Patch\n*** Add File: NEW.md\n+hi\n*** Delete File: old.txt\n*** End Patch"
    shell = ["bash", "-lc", "sed -n '1,20p' src/app.py && cat docs/a.md | head -n 3 > /tmp/x"]
    meta = {
        "id": OLD,
        "timestamp": "2025-12-24T00:56:59.223Z",
        "cwd": "/w/proj",
        "originator": "codex_cli_rs",
        "cli_version": "0.77.0",
        "git": {"branch": "main"},
    }
    env = "<environment_context>\n  <cwd>/w/proj</cwd>\n</environment_context>"
    return [
        line("session_meta", meta, "2025-12-24T00:56:59.223Z"),
        user(env),
        line("event_msg", {"type": "user_message", "message": env, "kind": "environment_context"}),
        line("event_msg", {"type": "user_message", "message": "<user_instructions>be nice"}),
        line("turn_context", {"cwd": "/w/proj", "model": "gpt-5.1-codex-max"}),
        user("Fix the failing date test"),
        line("event_msg", {"type": "user_message", "message": "Fix the failing date test"}),
        call("shell", {"command": shell, "workdir": "/w/proj"}, "a1"),
        line("event_msg", {"type": "exec_command_end", "call_id": "a1", "exit_code": 0}),
        output("a1", 0),
        call("shell_command", {"command": "cat gone.txt", "workdir": "sub"}, "a2"),
        output("a2", 1),
        call("apply_patch", {"input": patch}, "a3"),
        line(
            "event_msg",
            {"type": "patch_apply_end", "success": True, "changes": {"/w/proj/src/dates.py": {}}},
        ),
        line(
            "response_item",
            {"type": "custom_tool_call", "name": "apply_patch", "input": custom, "call_id": "a4"},
        ),
        line(
            "response_item",
            {
                "type": "local_shell_call",
                "call_id": "a5",
                "action": {"type": "exec", "command": ["cat", "/etc/hosts"]},
            },
        ),
        line(
            "response_item",
            {"type": "function_call_output", "call_id": "a5", "output": "Exit code: 0\n127.0.0.1"},
        ),
        line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Fixed."}],
            },
        ),
        line(
            "event_msg", {"type": "agent_message", "message": "Fixed."}, "2025-12-24T00:57:10.001Z"
        ),
        line("event_msg", {"type": "task_complete"}, "2025-12-24T00:57:10.100Z"),
        line("turn_context", {"cwd": "/w/other"}),
        user("And the docs"),
        line("event_msg", {"type": "user_message", "message": "And the docs"}),
        call("exec_command", {"cmd": "tail -n 5 README.md; cat *.md"}, "b1"),
        line("event_msg", {"type": "exec_command_end", "call_id": "b1", "exit_code": 0}),
        line("event_msg", {"type": "agent_message", "message": "Docs are fine."}),
        line("event_msg", {"type": "thread_name_updated", "thread_name": "Date fix"}),
    ]


def test_older_event_stream_and_tool_shapes(tmp_path: Path):
    parsed = parse(write(tmp_path / f"rollout-{OLD}.jsonl", old_rollout()))
    assert parsed.corrupt == 0
    first, second = parsed.turns
    assert [first.prompt, second.prompt] == ["Fix the failing date test", "And the docs"]
    assert first.answer == "Fixed." and second.answer == "Docs are fine."
    assert first.key == f"{OLD}:#0" and second.key == f"{OLD}:#1"
    assert first.tools == ["shell", "shell_command", "apply_patch", "apply_patch", "local_shell"]
    assert first.files_read == ["/w/proj/src/app.py", "/w/proj/docs/a.md", "/etc/hosts"]
    assert first.files_edited == [
        "/w/proj/src/dates.py",
        "/w/proj/src/when.py",
        "/w/proj/NEW.md",
        "/w/proj/old.txt",
    ]
    assert first.cwd == "/w/proj" and first.branch == "main"
    assert second.cwd == "/w/other"
    assert second.files_read == ["/w/other/README.md"]
    [session] = parsed.sessions
    assert session.id == f"codex-{OLD}" and session.title == "Date fix"
    assert session.handoff == "Docs are fine."
    assert session.started == "2025-12-24T00:56:59.223Z"


def test_a_version_writing_both_event_families_counts_each_prompt_once(tmp_path: Path):
    items = old_rollout()[:9]
    both = {
        "type": "item_completed",
        "turn_id": "t1",
        "item": {
            "type": "UserMessage",
            "content": [{"type": "text", "text": "Fix the failing date test"}],
        },
    }
    answer = {
        "type": "item_completed",
        "item": {"type": "AgentMessage", "content": [{"type": "Text", "text": "Fixed."}]},
    }
    items[7:7] = [line("event_msg", both)]
    items += [
        line("event_msg", answer),
        line("event_msg", {"type": "agent_message", "message": "Fixed."}),
    ]
    [turn] = parse(write(tmp_path / "rollout-both.jsonl", items)).turns
    assert turn.prompt == "Fix the failing date test"
    assert turn.answer == "Fixed."


def test_a_rollout_without_envelopes(tmp_path: Path):
    def message(role: str, text: str) -> dict[str, Any]:
        return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}

    items: list[dict[str, Any] | bytes] = [
        {"id": OLD, "timestamp": "2025-04-20T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        message("user", "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"),
        message("user", "Fix it"),
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["cat","a.py"]}',
            "call_id": "x",
        },
        {
            "type": "function_call_output",
            "call_id": "x",
            "output": '{"output":"","metadata":{"exit_code":0}}',
        },
        message("assistant", "Fixed."),
    ]
    parsed = parse(write(tmp_path / f"rollout-{OLD}.jsonl", items))
    [turn] = parsed.turns
    assert (turn.session, turn.prompt, turn.answer) == (f"codex-{OLD}", "Fix it", "Fixed.")
    assert turn.tools == ["shell"]
    assert turn.files_read == ["a.py"]  # no cwd is known
    assert parsed.sessions[0].started == "2025-04-20T10:00:00Z"


@pytest.mark.parametrize(
    ("command", "read"),
    [
        ("cat README.md", ["README.md"]),
        ("sed -n '1,20p' src/a.py", ["src/a.py"]),
        ("sed -e s/a/b/ -n x.txt", ["x.txt"]),
        ("head -n 5 a.txt b.txt | tail -3", ["a.txt", "b.txt"]),
        ("cd src && nl -ba main.rs 2>/dev/null", ["main.rs"]),
        ("cat > out.txt <<'EOF'\nhello\nEOF", []),
        ("sed -i s/a/b/ c.txt", []),
        ("less -i log.txt", ["log.txt"]),
        ("cat $HOME/x *.py", []),
        ("grep -r foo . && ls", []),
        ("cat 'unbalanced", []),
    ],
)
def test_reads_heuristic(command: str, read: list[str]):
    assert files_read(command) == read


def test_prompts_within_one_turn_id_get_distinct_keys(tmp_path: Path):
    items: list[dict[str, Any] | bytes] = [
        line("session_meta", {"id": OLD, "cwd": "/w"}),
        line("event_msg", {"type": "task_started", "turn_id": "t9"}),
        line("event_msg", {"type": "user_message", "message": "First"}),
        line("event_msg", {"type": "agent_message", "message": "Working."}),
        line("event_msg", {"type": "user_message", "message": "Also this"}),
        line("event_msg", {"type": "task_started", "turn_id": "t10"}),
        line("event_msg", {"type": "user_message", "message": "Next"}),
    ]
    turns = parse(write(tmp_path / "rollout-k.jsonl", items)).turns
    assert [t.key for t in turns] == [f"{OLD}:t9", f"{OLD}:#1", f"{OLD}:t10"]


def test_large_records_never_read_are_not_parsed():
    assert not codex._wanted(b'{"timestamp":"t","ordinal":6,"type":"world_state","payload":{')
    assert not codex._wanted(b'{"timestamp":"t","type":"event_msg","payload":{"type":"token_count"')
    assert not codex._wanted(b'{"timestamp":"t","type":"compacted","payload":{"message":"')
    assert codex._wanted(
        b'{"timestamp":"t","type":"event_msg","payload":{"type":"context_compacted"'
    )
    assert codex._wanted(b'{"timestamp":"t","type":"session_meta","payload":{"id":"x"')
