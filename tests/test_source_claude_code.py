"""The Claude Code transcript source: layout, turns, duplicates, damaged files, resuming."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hippo_core.agents.sessions import session_id
from hippo_core.plugins.manager import load_plugins
from hippo_core.transcripts import lines
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, Turn
from hippo_core.transcripts.sources.claude_code import ClaudeCodeSource

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code"
PROJECT = FIXTURES / "projects" / "-home-dev-proj-claude"
TOOLS = PROJECT / "8b2dd348-ba82-4a52-96de-9bd7fded7974.jsonl"
DELEGATE = PROJECT / "b4a005e4-62ec-40b3-be8f-49196d488382.jsonl"
CHILD = DELEGATE.with_suffix("") / "subagents" / "agent-a7f685a904d2d2cfe.jsonl"
RESUMED = PROJECT / "97b0e1f4-4a4e-4033-96c7-17142ea81cfd.jsonl"
CONTINUED = PROJECT / "60e0d30a-9b04-4cad-80c5-86308c506338.jsonl"
REAL = [TOOLS, DELEGATE, CHILD, RESUMED, CONTINUED]

SID = "11111111-2222-4333-8444-555555555555"
CWD = "/home/dev/proj"
VALID_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def parse(path: Path, resume: Resume | None = None) -> Parsed:
    return ClaudeCodeSource().parse(path, resume or Resume())


def stored(resume: Resume) -> Resume:
    """``resume`` after the JSON round trip the ingest gives it between runs."""
    return Resume(**json.loads(json.dumps(resume.as_dict())))


def at(second: int) -> str:
    return f"2026-01-01T10:{second // 60:02d}:{second % 60:02d}.000Z"


def user(uuid: str, content: Any, second: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uuid,
        "timestamp": at(second),
        "cwd": CWD,
        "sessionId": SID,
        "gitBranch": "main",
        **extra,
    }


def assistant(
    uuid: str, message_id: str, *blocks: Any, second: int = 0, **extra: Any
) -> dict[str, Any]:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-5-5",
        "content": list(blocks),
    }
    return {
        "parentUuid": None,
        "isSidechain": False,
        "message": message,
        "type": "assistant",
        "uuid": uuid,
        "timestamp": at(second),
        "cwd": CWD,
        "sessionId": SID,
        "gitBranch": "main",
        **extra,
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def result(call_id: str, content: Any = "ok", error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": error}


def line(record: Any) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def write(path: Path, *records: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(r if isinstance(r, bytes) else line(r) for r in records))
    return path


@pytest.fixture
def main_file(tmp_path: Path) -> Path:
    return tmp_path / "projects" / "-home-dev-proj" / f"{SID}.jsonl"


def conversation() -> list[dict[str, Any]]:
    """Two turns: a read and an edit, then a plain answer."""
    return [
        {"type": "queue-operation", "operation": "enqueue", "sessionId": SID},
        user("p1", "Fix the date test", 1),
        assistant("a1", "m1", text("Reading it."), second=2),
        assistant("a2", "m1", call("t1", "Read", file_path=f"{CWD}/test_dates.py"), second=2),
        user("r1", [result("t1", "1\timport datetime")], 3, toolUseResult={"type": "text"}),
        assistant("a3", "m2", call("t2", "Edit", file_path=f"{CWD}/dates.py"), second=4),
        user("r2", [result("t2")], 5),
        assistant("a4", "m3", text("Fixed: dates are UTC now."), second=6),
        user("p2", "Thanks, now explain", 10),
        assistant("a5", "m4", text("Happy to."), second=11),
    ]


def record_at(data: bytes, offset: int) -> Any:
    return json.loads(data[offset : data.index(b"\n", offset)])


def summary(turns: list[Turn]) -> list[tuple[Any, ...]]:
    return [
        (t.ordinal, t.key, t.prompt, t.answer, t.tools, t.files_read, t.files_edited) for t in turns
    ]


# --- where the transcripts are ------------------------------------------------------------


def test_roots_honour_claude_config_dir(tmp_path: Path):
    source = ClaudeCodeSource()
    assert source.name == "claude-code"
    assert source.roots({}, tmp_path) == [tmp_path / ".claude"]
    assert source.roots({"CLAUDE_CONFIG_DIR": "/etc/cc"}, tmp_path) == [Path("/etc/cc")]
    assert source.roots({"CLAUDE_CONFIG_DIR": ""}, tmp_path) == [tmp_path / ".claude"]


def test_the_hook_registers_the_source():
    found: list[Any] = list(load_plugins().sources().values())
    assert [type(s) for s in found if s.name == "claude-code"] == [ClaudeCodeSource]


def test_discover_finds_real_sessions_and_the_nested_sub_agent():
    found = list(ClaudeCodeSource().discover(FIXTURES))
    assert found == [str(p) for p in (CONTINUED, TOOLS, RESUMED, DELEGATE, CHILD)]


def test_discover_takes_both_sub_agent_layouts_and_skips_the_rest(tmp_path: Path):
    project = tmp_path / "projects" / "-home-dev-a"
    files = [
        "S1.jsonl",
        "S1/subagents/agent-x1.jsonl",
        "S1/subagents/agent-x1.meta.json",
        "S1/subagents/agent-acompact-1f2e.jsonl",
        "S1/subagents/journal.jsonl",
        "S1/tool-results/big.jsonl",
        "S1/tool-results/toolu_1.txt",
        "agent-old1.jsonl",
        "agent-acompact-2.jsonl",
        "journal.jsonl",
        "memory/MEMORY.jsonl",
        "tool-results/x.jsonl",
        "notes.txt",
    ]
    for name in files:
        write(project / name, b"{}\n")
    write(tmp_path / "projects" / "-home-dev-b" / "S2.jsonl", b"{}\n")
    write(tmp_path / "history.jsonl", b"{}\n")
    found = list(ClaudeCodeSource().discover(tmp_path))
    assert found == [
        str(project / "S1.jsonl"),
        str(project / "S1" / "subagents" / "agent-x1.jsonl"),
        str(project / "agent-old1.jsonl"),
        str(tmp_path / "projects" / "-home-dev-b" / "S2.jsonl"),
    ]
    assert list(ClaudeCodeSource().discover(tmp_path / "missing")) == []


# --- real files ---------------------------------------------------------------------------


def test_the_tools_run_is_one_turn_with_its_tools_files_and_answer():
    parsed = parse(TOOLS)
    assert (parsed.corrupt, parsed.problems) == (0, [])
    assert parsed.committed == TOOLS.stat().st_size
    [turn] = parsed.turns
    assert turn.prompt.startswith("HIPPO-TOOLS: look around the project")
    assert turn.key == "26157be4-c25e-44f9-bf59-c6318dabf85b"
    assert (turn.session, turn.ordinal) == ("8b2dd348-ba82-4a52-96de-9bd7fded7974", 0)
    assert turn.tools == ["Bash", "Read", "Read", "Write"]
    # missing.txt was asked for but the read failed (toolUseResult is a plain string there)
    assert turn.files_read == ["/home/dev/proj-claude/README.md"]
    assert turn.files_edited == ["/home/dev/proj-claude/notes.txt"]
    assert turn.answer == (
        "I'll start by listing the project files.\n\nNow reading two files at once.\n\n"
        "Done. I listed the files, read README.md (missing.txt does not exist) and wrote "
        "notes.txt with two lines."
    )
    assert (turn.cwd, turn.branch) == ("/home/dev/proj-claude", "master")
    assert (turn.started, turn.ended) == ("2026-11-30T04:37:37.950Z", "2026-11-30T04:37:38.353Z")
    data = TOOLS.read_bytes()
    assert record_at(data, turn.start)["uuid"] == turn.key
    assert b"Done. I listed the files" in data[turn.start : turn.end]
    assert parsed.sessions == [
        SessionInfo(
            id="8b2dd348-ba82-4a52-96de-9bd7fded7974",
            tool="claude-code",
            native_id="8b2dd348-ba82-4a52-96de-9bd7fded7974",
            cwd="/home/dev/proj-claude",
            branch="master",
            started="2026-11-30T04:37:37.950Z",
            ended="2026-11-30T04:37:38.353Z",
        )
    ]
    assert parsed.resume.offset == turn.start


@pytest.fixture
def parsed_lines(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The raw lines the source had parsed as JSON, in order."""
    seen: list[bytes] = []
    real_loads = lines.loads

    def counting(raw: bytes) -> Any:
        seen.append(raw)
        return real_loads(raw)

    monkeypatch.setattr(lines, "loads", counting)
    return seen


def test_the_large_records_are_passed_over_without_parsing(parsed_lines: list[bytes]):
    assert len(parse(TOOLS).turns) == 1
    types = [json.loads(raw)["type"] for raw in parsed_lines]
    assert set(types) == {"user", "assistant"}
    every = TOOLS.read_bytes().splitlines()
    records = [json.loads(raw) for raw in every]
    wanted = [r for r in records if r["type"] in types]
    # Tool results that did not fail are recognised by their bytes and never parsed; the
    # one that failed (missing.txt) is.
    plain = [r for r in wanted if "toolUseResult" in r and not _failed(r)]
    assert plain and len(types) == len(wanted) - len(plain)
    assert max(len(raw) for raw in parsed_lines) < 3000 < max(len(raw) for raw in every)


def _failed(record: dict[str, Any]) -> bool:
    content = record["message"]["content"]
    return any(isinstance(b, dict) and b.get("is_error") for b in content)


def test_a_thinking_block_is_not_answer_text_and_resume_appends_a_second_turn():
    parsed = parse(RESUMED)
    assert [(t.ordinal, t.prompt) for t in parsed.turns] == [
        (0, "HIPPO-THINK: think, then answer"),
        (1, "HIPPO-TOOLS: in the resumed session, look around again"),
    ]
    assert parsed.turns[0].answer == "After thinking: the answer is 42."
    assert parsed.turns[1].tools == ["Bash", "Read", "Read", "Write"]
    assert {t.session for t in parsed.turns} == {"97b0e1f4-4a4e-4033-96c7-17142ea81cfd"}


def test_continue_and_resume_keep_counting_turns_and_hooks_start_none():
    parsed = parse(CONTINUED)
    assert [t.ordinal for t in parsed.turns] == [0, 1, 2]
    assert [t.prompt.split(":")[0] for t in parsed.turns] == [
        "HIPPO-PLAIN",
        "HIPPO-THINK",
        "HIPPO-PLAIN",
    ]
    # The hook_success attachments (SessionStart before each prompt, UserPromptSubmit after)
    # are records of the turn before, or of none.
    data = CONTINUED.read_bytes()
    assert data.count(b'"type":"hook_success"') == 5
    assert [record_at(data, t.start)["uuid"] for t in parsed.turns] == [t.key for t in parsed.turns]
    assert parsed.sessions[0].started == "2026-11-30T04:38:54.875Z"
    assert parsed.sessions[0].ended == "2026-11-30T04:39:03.188Z"


def test_a_delegating_turn_and_its_nested_sub_agent_session():
    [turn] = parse(DELEGATE).turns
    assert turn.tools == ["Agent"]
    assert turn.answer.endswith("The sub-agent reported the file list; all done.")
    child = parse(CHILD)
    parent = "b4a005e4-62ec-40b3-be8f-49196d488382"
    [info] = child.sessions
    assert (info.id, info.parent, info.native_id) == (
        f"{parent}-agent-a7f685a904d2d2cfe",
        parent,
        "a7f685a904d2d2cfe",
    )
    [sub] = child.turns
    assert sub.session == info.id and sub.ordinal == 0
    assert sub.prompt == "HIPPO-CHILD: list the files in the project root and report them."
    assert sub.tools == ["Bash"]
    assert sub.answer.startswith("Sub-agent result: the project root contains README.md")


# --- reading in steps ---------------------------------------------------------------------


def in_two_steps(path: Path, data: bytes, cut: int) -> tuple[list[Turn], Parsed]:
    """Turns the ingest holds after reading ``data[:cut]`` and then all of ``data``."""
    path.write_bytes(data[:cut])
    first = parse(path)
    path.write_bytes(data)
    second = parse(path, stored(first.resume))
    kept = [t for t in first.turns if t.start < first.resume.offset]
    return kept + second.turns, second


def in_steps(path: Path, data: bytes, *cuts: int) -> list[Turn]:
    """Turns the ingest holds after reading ``data`` up to each cut, then all of it."""
    held: list[Turn] = []
    resume = Resume()
    for cut in (*cuts, len(data)):
        path.write_bytes(data[:cut])
        parsed = parse(path, stored(resume))
        held = [t for t in held if t.start < resume.offset] + parsed.turns
        resume = parsed.resume
    return held


def line_ends(data: bytes) -> list[int]:
    return [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]


@pytest.mark.parametrize("real", REAL, ids=lambda p: p.name[:14])
def test_reading_a_real_file_in_two_steps_gives_the_same_turns(real: Path, tmp_path: Path):
    path = tmp_path / real.relative_to(FIXTURES)
    path.parent.mkdir(parents=True)
    shutil.copyfile(real, path)
    full = parse(path)
    data = real.read_bytes()
    cuts = sorted({0, *line_ends(data), *range(1, len(data), 997)})
    for cut in cuts:
        turns, last = in_two_steps(path, data, cut)
        assert turns == full.turns, cut
        assert last.sessions == full.sessions, cut
        assert (last.committed, last.corrupt) == (full.committed, 0), cut


def test_three_steps_through_the_middle_of_turns(tmp_path: Path):
    path = tmp_path / CONTINUED.relative_to(FIXTURES)
    path.parent.mkdir(parents=True)
    data = CONTINUED.read_bytes()
    path.write_bytes(data)
    full = parse(path)
    ends = line_ends(data)
    for cuts in [(ends[3], ends[20]), (ends[5], ends[-3]), (ends[1], ends[2]), (100, 30000)]:
        assert in_steps(path, data, *cuts) == full.turns, cuts


def test_the_last_turn_survives_a_read_before_the_answer_was_flushed(tmp_path: Path):
    path = tmp_path / TOOLS.name
    data = TOOLS.read_bytes()
    prompt_end = data.index(b"\n", data.index(b'"role":"user","content":"HIPPO-TOOLS')) + 1
    path.write_bytes(data[:prompt_end])
    early = parse(path)
    [turn] = early.turns
    assert (turn.answer, turn.tools, early.resume.offset) == ("", [], turn.start)
    path.write_bytes(data)
    [turn] = parse(path, stored(early.resume)).turns
    assert turn.tools == ["Bash", "Read", "Read", "Write"]
    assert "Done. I listed the files" in turn.answer
    assert turn.key == "26157be4-c25e-44f9-bf59-c6318dabf85b" and turn.ordinal == 0


def test_a_synthetic_conversation_read_in_two_steps(main_file: Path):
    write(main_file, *conversation())
    data = main_file.read_bytes()
    full = parse(main_file)
    assert summary(full.turns) == [
        (
            0,
            "p1",
            "Fix the date test",
            "Reading it.\n\nFixed: dates are UTC now.",
            ["Read", "Edit"],
            [f"{CWD}/test_dates.py"],
            [f"{CWD}/dates.py"],
        ),
        (1, "p2", "Thanks, now explain", "Happy to.", [], [], []),
    ]
    for cut in sorted({*line_ends(data), *range(0, len(data), 13)}):
        assert in_two_steps(main_file, data, cut)[0] == full.turns, cut


# --- which user records are prompts -------------------------------------------------------

NOT_PROMPTS = {
    "meta": user("n", "Expanded skill text", isMeta=True),
    "compact summary": user(
        "n", "This session is being continued from a previous conversation", isCompactSummary=True
    ),
    "slash command": user(
        "n", "<command-name>/model</command-name>\n<command-message>model</command-message>"
    ),
    "command message first": user("n", "<command-message>init is analyzing</command-message>"),
    "local command output": user("n", "<local-command-stdout>Set model</local-command-stdout>"),
    "caveat": user(
        "n", "Caveat: The messages below were generated by the user while running local commands."
    ),
    "interrupt": user("n", [text("[Request interrupted by user]")]),
    "interrupt for tool use": user("n", "[Request interrupted by user for tool use]"),
    "task notification": user(
        "n", "<task-notification>\n<status>completed</status>\n</task-notification>"
    ),
    "system prompt source": user("n", "Background agent finished", promptSource="system"),
    "system reminder": user("n", "<system-reminder>Remember this</system-reminder>"),
    "bash input": user("n", "<bash-input>ls</bash-input>"),
    "bash output": user("n", "<bash-stdout>README.md</bash-stdout><bash-stderr></bash-stderr>"),
    "empty": user("n", ""),
    "blank": user("n", "  \n\t"),
    "empty list": user("n", []),
    "no content": user("n", None),
    "tool result": user("n", [result("t1")], toolUseResult="Error: plain string"),
    "tool result beside text": user("n", [result("t1"), text("and a note")]),
    "only a reminder block": user("n", [text("<system-reminder>context</system-reminder>")]),
    "only an image": user("n", [{"type": "image", "source": {"type": "base64", "data": "AA=="}}]),
    "hook attachment": {
        "type": "attachment",
        "attachment": {"type": "hook_success", "content": "HIPPO-CTX", "hookEvent": "Stop"},
        "uuid": "n",
        "sessionId": SID,
    },
}


@pytest.mark.parametrize("record", NOT_PROMPTS.values(), ids=list(NOT_PROMPTS))
def test_records_that_are_not_human_prompts_start_no_turn(record: dict[str, Any], main_file):
    write(
        main_file,
        user("p1", "The only prompt", 1),
        assistant("a1", "m1", text("First."), second=2),
        record,
        assistant("a2", "m2", text("Still the same turn."), second=3),
    )
    [turn] = parse(main_file).turns
    assert (turn.prompt, turn.answer) == ("The only prompt", "First.\n\nStill the same turn.")


def test_prompts_lose_the_context_put_before_them(main_file: Path):
    ide = text("<ide_opened_file>The user opened hello.py</ide_opened_file>")
    reminder = "<system-reminder>\nA hook said hi.\n</system-reminder>\n"
    write(
        main_file,
        user("p1", [ide, text("Explain this file"), {"type": "image", "source": {}}]),
        user("p2", reminder + "<ide_selection>x = 1</ide_selection> Why <b>this</b>?", 2),
        user("p3", [text(reminder + "<command-name>/model</command-name>")], 3),
    )
    prompts = [t.prompt for t in parse(main_file).turns]
    assert prompts == ["Explain this file", "Why <b>this</b>?"]


def test_content_may_be_a_string_or_a_list_on_both_sides(main_file: Path):
    answer = assistant("a1", "m1", second=2)
    answer["message"]["content"] = "A plain string answer."
    write(main_file, user("p1", [text("List prompt")], 1), answer, user("p2", "String prompt", 3))
    turns = parse(main_file).turns
    assert [(t.prompt, t.answer) for t in turns] == [
        ("List prompt", "A plain string answer."),
        ("String prompt", ""),
    ]


@pytest.mark.parametrize(
    ("flag", "model", "said"),
    [
        (True, "<synthetic>", "API Error: 400 invalid_request_error"),
        (True, "claude-opus-5-5", "API Error: 529 overloaded"),
        (False, "<synthetic>", "No response requested."),
    ],
)
def test_messages_claude_code_makes_up_are_not_answers(flag, model, said, main_file: Path):
    error = assistant("a1", "m1", text(said), second=2)
    if flag:
        error.update(isApiErrorMessage=True, apiErrorStatus=400)
    error["message"]["model"] = model
    write(main_file, user("p1", "HIPPO-APIERROR: this request will fail", 1), error)
    [turn] = parse(main_file).turns
    assert turn.answer == ""
    assert turn.ended == at(2)


def test_the_session_keeps_its_first_cwd_and_latest_branch(main_file: Path):
    write(
        main_file,
        user("p1", "Here", 2, gitBranch=""),
        user("p2", "There", 5, cwd="/elsewhere", gitBranch="feature"),
        user("p3", "Later", 1, cwd="/third", gitBranch=""),  # times need not be in order
    )
    parsed = parse(main_file)
    assert [(t.cwd, t.branch) for t in parsed.turns] == [
        (CWD, None),
        ("/elsewhere", "feature"),
        ("/third", None),
    ]
    [info] = parsed.sessions
    assert (info.cwd, info.branch, info.started, info.ended) == (CWD, "feature", at(1), at(5))


def test_a_sub_agent_copied_into_the_main_file_is_not_part_of_it(main_file: Path):
    write(
        main_file,
        user("p1", "Find callers", 1),
        user("s1", "Find every caller of parse_date", 2, isSidechain=True),
        assistant("s2", "m9", text("Sub-agent chatter."), second=3, isSidechain=True),
        assistant("a1", "m1", text("Three callers."), second=4),
    )
    [turn] = parse(main_file).turns
    assert (turn.prompt, turn.answer) == ("Find callers", "Three callers.")


# --- tools and files ----------------------------------------------------------------------


def test_files_read_and_edited_by_tool_and_outcome(main_file: Path):
    write(
        main_file,
        user("p1", "Work on the project", 1),
        assistant(
            "a1",
            "m1",
            call("t1", "Read", file_path="/abs/r.py"),
            call("t2", "Read", file_path="rel/x.py"),
            call("t3", "NotebookRead", notebook_path=f"{CWD}/nb.ipynb"),
            call("t4", "Grep", pattern="def", path=f"{CWD}/src"),
            call("t5", "Glob", pattern="**/*.py", path=CWD),
            call("t6", "Bash", command="sed -i s/a/b/ sneaky.py"),
            second=2,
        ),
        assistant(
            "a2",
            "m2",
            call("t7", "Edit", file_path=f"{CWD}/e.py", old_string="a", new_string="b"),
            call("t8", "MultiEdit", file_path=f"{CWD}/m.py", edits=[]),
            call("t9", "Write", file_path=f"{CWD}/w.py", content="x"),
            call("t10", "NotebookEdit", notebook_path=f"{CWD}/n.ipynb", new_source="x"),
            call("t11", "Edit", file_path=f"{CWD}/failed.py", old_string="zz"),
            call("t12", "Write", file_path=f"{CWD}/rejected.py", content="x"),
            call("t13", "mcp__fs__read", path=f"{CWD}/mcp.py"),
            call("t14", "Read", file_path=42),
            second=3,
        ),
        user(
            "r11",
            [result("t11", "String to replace not found", error=True)],
            4,
            toolUseResult="Error: String to replace not found in file.",
        ),
        user(
            "r12",
            [result("t12", "User rejected the write", error=True)],
            4,
            toolUseResult="User rejected tool use",
        ),
        user("r7", [result("t7")], 5, toolUseResult={"filePath": f"{CWD}/e.py"}),
    )
    [turn] = parse(main_file).turns
    assert turn.tools == [
        "Read", "Read", "NotebookRead", "Grep", "Glob", "Bash",
        "Edit", "MultiEdit", "Write", "NotebookEdit", "Edit", "Write", "mcp__fs__read", "Read",
    ]  # fmt: skip
    assert turn.files_read == ["/abs/r.py", f"{CWD}/rel/x.py", f"{CWD}/nb.ipynb"]
    assert turn.files_edited == [f"{CWD}/e.py", f"{CWD}/m.py", f"{CWD}/w.py", f"{CWD}/n.ipynb"]


# --- duplicates ---------------------------------------------------------------------------


def test_one_message_split_repeated_and_streamed_is_counted_once(main_file: Path):
    read = call("t1", "Read", file_path="/x/a.py")
    no_id = {"type": "assistant", "uuid": "a7", "message": {"content": [text("No id.")]}}
    write(
        main_file,
        user("p1", "Look", 1),
        assistant("a1", "m1", text("Looking."), second=2),
        assistant("a2", "m1", read, second=2),
        assistant("a2", "m1", read, second=2),  # the same record again
        assistant("a3", "m1", text("Looking."), second=2),  # a streamed copy
        assistant("a4", "m1", text("Looking."), read, second=2),  # the whole message at once
        user("r1", [result("t1")], 3),
        user("r1", [result("t1")], 3),
        assistant("a5", "m2", text("Looking."), second=4),  # a new message may repeat itself
        assistant("a6", "m2", text("Done."), second=4),
        no_id,
        no_id,
    )
    [turn] = parse(main_file).turns
    assert turn.tools == ["Read"]
    assert turn.files_read == ["/x/a.py"]
    assert turn.answer == "Looking.\n\nLooking.\n\nDone.\n\nNo id."


def test_a_prompt_repeated_in_the_same_file_is_one_turn(main_file: Path):
    records = [
        user("p1", "First", 1),
        assistant("a1", "m1", text("One."), second=2),
        user("p2", "Second", 3),
        assistant("a2", "m2", text("Two."), second=4),
        user("p1", "First", 1),  # copied history, as older resumes wrote it
        assistant("a1", "m1", text("One."), second=2),
        user("p3", "Third", 5),
        assistant("a3", "m3", text("Three."), second=6),
    ]
    write(main_file, *records)
    full = parse(main_file)
    assert [(t.ordinal, t.key, t.answer) for t in full.turns] == [
        (0, "p1", "One."),
        (1, "p2", "Two."),
        (2, "p3", "Three."),
    ]
    data = main_file.read_bytes()
    ends = line_ends(data)
    for cut in ends:
        assert in_two_steps(main_file, data, cut)[0] == full.turns, cut
    for first_cut, second_cut in itertools.combinations(ends, 2):
        assert in_steps(main_file, data, first_cut, second_cut) == full.turns


def test_a_forked_session_repeats_turns_under_the_same_keys(tmp_path: Path):
    fork_id = "4d9968bc-0000-4000-8000-000000000001"
    original = RESUMED.read_bytes()
    copied = original.replace(b"97b0e1f4-4a4e-4033-96c7-17142ea81cfd", fork_id.encode())
    follow_up = user("f1", "HIPPO-PLAIN: a forked follow-up", 100, sessionId=fork_id)
    answer = assistant("f2", "mf", text("Hello from the fork."), second=101, sessionId=fork_id)
    fork = write(tmp_path / f"{fork_id}.jsonl", copied, follow_up, answer)
    earlier = parse(RESUMED).turns
    turns = parse(fork).turns
    assert [t.key for t in turns] == [t.key for t in earlier] + ["f1"]
    assert [(t.session, t.ordinal) for t in turns] == [(fork_id, n) for n in range(3)]
    assert [t.prompt for t in turns[:2]] == [t.prompt for t in earlier]
    assert parse(fork).sessions[0].id == fork_id


# --- sessions -----------------------------------------------------------------------------


def test_an_older_flat_sub_agent_file_takes_its_parent_from_the_records(tmp_path: Path):
    path = write(
        tmp_path / "projects" / "-home-dev-proj" / "agent-a1b2c3.jsonl",
        user("s1", "Find every caller", 1, isSidechain=True, agentId="a1b2c3"),
        assistant("s2", "m1", text("Three."), second=2, isSidechain=True, agentId="a1b2c3"),
    )
    parsed = parse(path)
    [info] = parsed.sessions
    assert (info.id, info.parent, info.native_id) == (f"{SID}-agent-a1b2c3", SID, "a1b2c3")
    assert [(t.session, t.prompt, t.answer) for t in parsed.turns] == [
        (f"{SID}-agent-a1b2c3", "Find every caller", "Three.")
    ]


@pytest.mark.parametrize("raw", ["x" * 500, "team/lead", "a b"])
def test_parent_ids_that_cannot_be_file_names_are_hashed(raw: str, tmp_path: Path):
    path = write(
        tmp_path / "agent-a1.jsonl",
        user("s1", "Task", 1, isSidechain=True, sessionId=raw),
    )
    [info] = parse(path).sessions
    assert info.parent == session_id(raw) != raw
    assert info.id == session_id(f"{raw}-agent-a1")
    assert VALID_ID.fullmatch(info.id) and VALID_ID.fullmatch(info.parent)
    assert parse(path).turns[0].session == info.id


def test_a_long_session_file_name_is_hashed(tmp_path: Path):
    stem = "s" * 200
    path = write(tmp_path / f"{stem}.jsonl", user("p1", "Hello", 1, sessionId=stem))
    [info] = parse(path).sessions
    assert info.id == session_id(stem) and info.id.startswith("h-")
    assert info.native_id == stem
    assert parse(path).turns[0].session == info.id


@pytest.mark.parametrize(
    ("titles", "expected"),
    [
        (["summary", "ai-title", "custom-title"], "Custom"),
        (["custom-title", "summary", "ai-title"], "Custom"),
        (["summary", "ai-title"], "AI"),
        (["summary"], "Summary"),
        ([], None),
    ],
)
def test_the_title_prefers_the_users_name(titles: list[str], expected: str | None, main_file):
    records = {
        "summary": {"type": "summary", "summary": "Summary", "leafUuid": "a1"},
        "ai-title": {"type": "ai-title", "aiTitle": "AI", "sessionId": SID},
        "custom-title": {"type": "custom-title", "customTitle": "Custom", "sessionId": SID},
    }
    write(main_file, user("p1", "Hi", 1), *(records[name] for name in titles))
    assert parse(main_file).sessions[0].title == expected


def test_a_file_with_only_metadata_has_no_turns_and_no_session(main_file: Path):
    write(
        main_file,
        {"type": "queue-operation", "operation": "enqueue", "sessionId": SID, "content": "hi"},
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}},
        {"type": "last-prompt", "lastPrompt": "hi", "sessionId": SID},
        {"type": "mode", "mode": "normal", "sessionId": SID},
        {"type": "ai-title", "aiTitle": "Phantom", "sessionId": SID},
    )
    parsed = parse(main_file)
    size = main_file.stat().st_size
    assert (parsed.turns, parsed.sessions, parsed.corrupt) == ([], [], 0)
    assert parsed.committed == parsed.resume.offset == size


# --- damaged and unusual files ------------------------------------------------------------


def test_an_unterminated_last_line_is_used_when_whole_but_not_committed(main_file: Path):
    write(main_file, *conversation())
    done = main_file.stat().st_size
    tail = line(assistant("a6", "m5", text("Still writing."), second=12))[:-1]
    main_file.write_bytes(main_file.read_bytes() + tail)
    parsed = parse(main_file)
    assert parsed.turns[-1].answer == "Happy to.\n\nStill writing."
    assert (parsed.committed, parsed.corrupt) == (done, 0)
    main_file.write_bytes(main_file.read_bytes()[: done + len(tail) // 2])
    parsed = parse(main_file)
    assert parsed.turns[-1].answer == "Happy to."
    assert (parsed.committed, parsed.corrupt) == (done, 0)


def test_corrupt_lines_are_skipped_and_counted_once(main_file: Path):
    broken = b'{"parentUuid":null,"type":"user","message":{"content":"cut sho\n'
    write(
        main_file,
        user("p1", "First", 1),
        broken,
        b"\x00\x00\x00\x00\n",
        b"not json at all\n",
        assistant("a1", "m1", text("One."), second=2),
    )
    first = parse(main_file)
    assert first.corrupt == 3
    assert [(t.prompt, t.answer) for t in first.turns] == [("First", "One.")]
    with main_file.open("ab") as file:
        file.write(line(user("p2", "Second", 3)))
    second = parse(main_file, stored(first.resume))
    assert second.corrupt == 0  # read again from the turn's start, but counted before
    assert [t.prompt for t in second.turns] == ["First", "Second"]


def test_bytes_that_are_not_utf8_are_replaced(main_file: Path):
    raw = line(user("p1", "caf__ and more", 1)).replace(b"caf__", b"caf\xff\xfe")
    write(main_file, raw, assistant("a1", "m1", text("Ok."), second=2))
    parsed = parse(main_file)
    assert parsed.corrupt == 0
    assert [(t.prompt, t.answer) for t in parsed.turns] == [("caf\ufffd\ufffd and more", "Ok.")]


def test_line_separators_inside_strings_do_not_split_records(main_file: Path):
    write(
        main_file,
        user("p1", "one\u2028two\u2029three\x85four", 1),
        assistant("a1", "m1", text("a\u2028b"), second=2),
    )
    assert "\u2028".encode() in main_file.read_bytes()
    parsed = parse(main_file)
    assert [(t.prompt, t.answer) for t in parsed.turns] == [
        ("one\u2028two\u2029three\x85four", "a\u2028b")
    ]
    assert parsed.corrupt == 0


def test_crlf_line_endings_read_like_lf(main_file: Path):
    write(main_file, *conversation())
    lf = parse(main_file)
    main_file.write_bytes(main_file.read_bytes().replace(b"\n", b"\r\n"))
    crlf = parse(main_file)
    assert summary(crlf.turns) == summary(lf.turns)
    assert crlf.committed == main_file.stat().st_size and crlf.corrupt == 0


def test_a_ten_megabyte_line(main_file: Path):
    huge = "x" * 10_000_000
    write(
        main_file,
        user("p1", "Read the log", 1),
        assistant("a1", "m1", call("t1", "Read", file_path="/var/log/big.log"), second=2),
        user("r1", [result("t1", huge)], 3, toolUseResult={"file": {"content": huge}}),
        {"type": "attachment", "attachment": {"type": "prompt_snapshot", "text": huge}},
        assistant("a2", "m2", text("The log is all x."), second=4),
    )
    parsed = parse(main_file)
    [turn] = parsed.turns
    assert (turn.answer, turn.files_read) == ("The log is all x.", ["/var/log/big.log"])
    assert parsed.committed == main_file.stat().st_size > 20_000_000


def test_unknown_record_types_and_blocks_are_ignored(main_file: Path):
    odd = assistant("a2", "m2", {"type": "future_block", "x": 1}, text("Fine."), second=3)
    no_message = {"type": "assistant", "uuid": "a3", "message": "not an object"}
    write(
        main_file,
        {"type": "brand-new-record", "uuid": "z1", "payload": {"type": "user"}},
        user("p1", "Hello", 1),
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
        assistant("a1", "m1", {"type": "thinking", "thinking": "hmm", "signature": "s"}, second=2),
        odd,
        no_message,
        {"type": "assistant", "uuid": "a4", "message": {"content": [None, 3, "text"]}},
        [1, 2, 3],
        "a string",
    )
    parsed = parse(main_file)
    assert [(t.prompt, t.answer) for t in parsed.turns] == [("Hello", "Fine.")]
    assert parsed.corrupt == 0


def test_json_written_with_spaces_is_read_too(main_file: Path):
    main_file.parent.mkdir(parents=True)
    main_file.write_text("".join(json.dumps(r) + "\n" for r in conversation()), encoding="utf-8")
    assert b'"type": "user"' in main_file.read_bytes()
    assert [t.key for t in parse(main_file).turns] == ["p1", "p2"]


def test_progress_records_of_older_versions_are_not_read(
    main_file: Path, parsed_lines: list[bytes]
):
    nested = assistant("n1", "mn", text("Sub-agent progress text."), second=3)
    progress = {
        "parentUuid": "a1",
        "isSidechain": False,
        "type": "progress",
        "data": {"message": nested, "type": "agent_progress"},
        "uuid": "g1",
    }
    type_first = {"type": "progress", "data": {"message": nested}, "uuid": "g2"}
    write(
        main_file,
        user("p1", "Delegate", 1),
        progress,
        type_first,
        assistant("a1", "m1", text("Done."), second=4),
    )
    [turn] = parse(main_file).turns
    assert turn.answer == "Done."
    assert [json.loads(raw)["uuid"] for raw in parsed_lines] == ["p1", "a1"]


def test_a_missing_file_is_a_problem_not_an_exception(tmp_path: Path):
    parsed = parse(tmp_path / f"{SID}.jsonl", Resume(offset=10, seen=10))
    assert parsed.turns == [] and parsed.committed == 10
    assert parsed.problems and SID in parsed.problems[0]


def test_the_module_imports_nothing_heavy():
    probe = (
        "import sys, hippo_core.transcripts.sources.claude_code\n"
        "heavy = ('sqlalchemy', 'jinja2', 'rich', 'pydantic')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
