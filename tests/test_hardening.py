"""Hostile input: parsers that never raise, numbers out of range, paths that are not notes.

Each test here names a failure a harness found on main (a traceback, a dropped file, a bad
value taken for bad YAML); each fails on the code before its fix.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo_core.dream.proposals import parse_reply, to_proposals
from hippo_core.dream.review import parse_verdict
from hippo_core.files import jsontext
from hippo_core.index.ingest import ingest
from hippo_core.notes.note import parse_note
from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, Run, WorkspaceMaker

DEEP = "[" * 100_000 + "]" * 100_000
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
#: Replies a model may write: JSON, JSON in prose or a fence, JSON torn, bytes of nonsense.
replies = st.one_of(
    json_values.map(json.dumps),
    json_values.map(lambda v: f"Here it is:\n```json\n{json.dumps(v)}\n```\nDone."),
    json_values.map(lambda v: json.dumps(v)[: max(1, len(json.dumps(v)) // 2)]),
    st.text(alphabet=string.printable + "[]{}\"'`", max_size=200),
    st.integers(1, 20_000).map(lambda n: "[" * n + "{" * n),
    st.integers(1, 5_000).map(lambda n: '{"verdict": "confirm", "notes": ' + "[" * n),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=replies)
def test_no_model_reply_makes_a_parser_raise(reply: str):
    elements, problem = parse_reply(reply)
    assert isinstance(elements, list) and isinstance(problem, str)
    rejected = to_proposals(elements, pass_key="verify", kinds={}, ids=lambda: "x")
    assert all(isinstance(group, list) for group in rejected)
    verdict, notes, why = parse_verdict(reply)
    assert verdict in ("confirm", "reject") and isinstance(notes, str)
    assert verdict == "reject" or not why


def test_a_reply_nested_too_deeply_is_a_reply_that_is_not_json():
    assert parse_reply(DEEP)[0] == []
    assert parse_reply(DEEP)[1].startswith("the reply is not JSON")
    assert parse_verdict(DEEP)[0] == "reject"
    try:
        jsontext.loads(DEEP)
    except ValueError as exc:
        assert str(exc) == "JSON nested too deeply"
    else:
        raise AssertionError("no ValueError")


def test_an_evidence_ordinal_no_index_holds_is_a_rejected_proposal():
    element = {
        "note": "Testing.md",
        "kind": "replace",
        "old": "a",
        "new": "b",
        "reason": "r",
        "evidence": [{"session": "s", "ordinal": 10**30}],
    }
    valid, rejected = to_proposals([element], pass_key="verify", kinds={}, ids=str)
    assert valid == [] and len(rejected) == 1
    assert rejected[0].problem.startswith("evidence.0.ordinal: input should be less than")


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=400) | st.text(max_size=400).map(lambda t: t.encode()))
def test_no_note_bytes_make_the_note_parser_raise(raw: bytes):
    note = parse_note("n.md", b"---\n" + raw + b"\n---\n# T\n")
    assert note.path == "n.md"
    parse_note("n.md", raw)


def test_an_impossible_date_is_a_bad_value_not_bad_yaml(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    note = "---\nreview_after: 2026-02-30\nupdated: 2026-01-01T10:00:00\n---\n# A\n\nx\n"
    root = make_workspace("", {"A.md": note})
    lint = hippo("notes", "lint", cwd=root)
    assert lint.code == 0, lint.out
    assert lint.out.splitlines()[:2] == [
        "notes/A.md:1: warning: bad frontmatter: updated: '2026-01-01T10:00:00' is not a "
        "YYYY-MM-DD date",
        "notes/A.md:1: warning: bad frontmatter: review_after: '2026-02-30' is not a "
        "YYYY-MM-DD date",
    ]
    good = parse_note("B.md", b"---\nupdated: 2026-01-05\n---\n# B\n")
    assert good.meta.updated is not None and good.meta.updated.isoformat() == "2026-01-05"


def test_spans_and_limits_out_of_range_are_usage_errors(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace()
    assert hippo("ingest", cwd=root).code == 0
    for args in (
        ("search", "x", "--since", "999999999w"),
        ("dream", "--dry-run", "--since", "999999999w"),
    ):
        run = hippo(*args, cwd=root)
        assert run.code == 2 and run.err == (
            "error: --since '999999999w' reaches back before the year 1; give a shorter span "
            "or a date (2026-11-01)\n"
        ), run.err
    run = hippo("search", "x", "--limit", "1" + "0" * 30, cwd=root)
    assert run.code == 2 and "is not in the range 1<=x<=100000" in run.err
    assert "Traceback" not in run.err


def test_a_line_nested_too_deeply_is_one_corrupt_line_not_a_lost_file(claude_home: Path):
    session = ClaudeSession(claude_home, "/p")
    path = session.prompt("one").answer("1").write()
    with path.open("a") as handle:
        handle.write('{"type": "user", "message": ' + "[" * 100_000 + "\n")
    session.prompt("two").answer("2").write()
    summary = ingest()
    assert summary.corrupt == 1
    assert summary.turns == 2


#: Where a crash, or a read while the agent writes, cuts a record: what the cut record
#: ends with, as (a part of it, how many of that part's bytes are kept). Each cut falls
#: after the record's type, where Claude Code's source parses the line (a line cut before
#: it is passed over unread, as a record of no type it reads).
CUTS = {
    "after a comma": (b'"message"', 0),
    "after a brace": (b'"message":{', 11),
    "after a key": (b'"content"', 9),
    "after a colon": (b'"content":', 10),
    "inside a string": (b'"content":"', 13),
    "just after a backslash": (b'\\"hi', 1),
    "inside a unicode escape": (b"\\u001b", 4),
    "inside a character": ("é".encode(), 1),
}


@pytest.mark.parametrize("cut", CUTS)
def test_a_record_cut_short_costs_that_record_not_the_file(
    cut: str, claude_home: Path, tmp_path: Path
):
    """json's C scanner, driven without json's decoder, raised SystemError on a record cut
    inside a string or after a key, and the whole file "could not be read", even by
    ``--full``: its last line while the agent writes it, or a line a crash cut. It did so
    only in a process that had not imported json, so hippo runs in one of its own here."""
    part, kept = CUTS[cut]
    session = ClaudeSession(claude_home, "/p")
    # Written as Claude Code writes JSON: non-ASCII as it is, control characters escaped.
    prompts = [f'{n}: say "hi" to C:\\tmp \x1b[1mé' for n in ("one", "two", "three")]
    session.prompt(prompts[0]).answer("1").prompt(prompts[1]).answer("2").prompt(prompts[2])
    whole = [
        json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":")).encode()
        for line in session.lines
    ]
    assert all(part in line for line in whole[::2]), (part, whole[0])

    def cut_short(line: bytes) -> bytes:
        return line[: line.index(part) + kept]

    # The second prompt's record cut by a crash and written again whole; the last one cut.
    lines = [*whole[:2], cut_short(whole[2]), *whole[2:4]]
    session.path.parent.mkdir(parents=True)
    session.path.write_bytes(b"".join(line + b"\n" for line in lines) + cut_short(whole[4]))

    for args in (("ingest",), ("ingest", "--full")):
        run = hippo_process(*args, "--json", cwd=tmp_path)
        assert run.code == 0, run.err
        summary = json.loads(run.out)
        assert summary["problems"] == [], summary["problems"]
        assert (summary["turns"], summary["corrupt"]) == (2, 1), summary
        assert indexed_turns() == [(prompts[0], "1"), (prompts[1], "2")]
    # The agent finishes the line: the next ingest reads it from the last whole line's end.
    with session.path.open("ab") as handle:
        handle.write(whole[4][len(cut_short(whole[4])) :] + b"\n")
    run = hippo_process("ingest", cwd=tmp_path)
    assert run.out.startswith("ingested 1 of 1 transcript files, 1 new turn,"), run.err
    assert indexed_turns() == [(prompts[0], "1"), (prompts[1], "2"), (prompts[2], "")]


def hippo_process(*args: str, cwd: Path) -> Run:
    """``hippo ARGS`` in a fresh interpreter, with this test's environment (its homes)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "hippo_core", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def indexed_turns() -> list[tuple[str, str]]:
    import sqlite3

    with sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite") as conn:
        rows = conn.execute("SELECT prompt, answer FROM turns ORDER BY ordinal").fetchall()
    conn.close()
    return rows


def test_a_lone_surrogate_in_a_transcript_is_indexed_as_a_replacement(claude_home: Path):
    """JSON may escape a lone surrogate (JavaScript writes them); SQLite takes only UTF-8."""
    import sqlite3

    session = ClaudeSession(claude_home, "/p")
    session.prompt("fix the \ud800 bug").answer("done \udfff").write()
    session.prompt("two").answer("2").write()
    summary = ingest()
    assert (summary.turns, summary.problems) == (2, [])
    with sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite") as conn:
        rows = conn.execute("SELECT prompt, answer FROM turns ORDER BY ordinal").fetchall()
    conn.close()
    assert rows[0] == ("fix the \ufffd bug", "done \ufffd")


def test_a_byte_order_mark_and_an_unknown_openai_key(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace()
    settings_file = root / ".hippo" / "settings.toml"
    settings_file.write_bytes(b'\xef\xbb\xbfbudget_bytes = 9000\n[openai]\nmodle = "x"\n')
    run = hippo("config", "get", "budget_bytes", cwd=root)
    assert (run.code, run.out) == (0, "9000\n")
    assert run.err == (
        "warning: .hippo/settings.toml: 'openai.modle' is not a setting and was ignored - "
        "did you mean openai.model?\n"
    )
    assert hippo("config", "set", "budget_bytes", "9001", cwd=root).code == 0
    assert settings_file.read_bytes().startswith(b"\xef\xbb\xbfbudget_bytes = 9001\n")


def test_unknown_openai_keys_leave_the_known_ones_checked(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path
):
    root = make_workspace('[openai]\nmax_tokens = "many"\nextra = 1\n')
    run = hippo("config", "get", "openai", cwd=root)
    assert run.code == 1
    assert run.err.splitlines()[-1].startswith("error: .hippo/settings.toml: openai.max_tokens:")


def test_what_killed_runs_left_is_named_by_doctor_and_removed_by_the_next_run(
    scene, tmp_path: Path, monkeypatch
):
    import os
    import subprocess
    import sys
    import tempfile
    import time

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    old = time.time() - 3600
    stale = scene.root / "notes" / ".Testing.md.0123456789ab.tmp"
    fresh = scene.root / "notes" / ".Testing.md.ba9876543210.tmp"  # a write going on now
    receipt = scene.root / ".hippo" / "receipts" / ".x.json.0a1b2c3d.tmp"
    mine = scene.root / "notes" / "Not hippos.tmp"  # not a name hippo writes: never touched
    receipt.parent.mkdir(parents=True, exist_ok=True)
    for path in (stale, fresh, receipt, mine):
        path.write_text("partial")
    for path in (stale, receipt, mine):
        os.utime(path, (old, old))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = temp / "hippo-model-dead"
    live = temp / "hippo-model-live"
    for folder, pid in ((dead, gone.stdout.strip()), (live, str(os.getpid()))):
        folder.mkdir()
        (folder / ".hippo-owner").write_text(pid + "\n")
    staging = scene.root / ".hippo" / ".pack-1234abcd"
    (staging / "half").mkdir(parents=True)

    doctor = scene.hippo("doctor", cwd=scene.root).out
    assert (
        "2 temporary files left by killed runs: .hippo/receipts/.x.json.0a1b2c3d.tmp, "
        "notes/.Testing.md.0123456789ab.tmp; the next `hippo dream` or `hippo revert` removes them"
    ) in doctor
    assert f"1 model folder left by killed runs: {dead}" in doctor
    assert "1 pack staging folder left by killed runs: .hippo/.pack-1234abcd" in doctor

    scene.transcript()
    scene.proposer_replies()
    assert scene.dream().code == 0
    assert any(
        "removed 3 temporary file(s) left by killed runs" in line
        for line in scene.section("Inputs")
    )
    assert not stale.exists() and not receipt.exists() and not dead.exists()
    assert fresh.exists() and mine.exists() and live.exists()
    assert scene.hippo("pack", "add", "sleep", cwd=scene.root).code == 0
    assert not staging.exists()
    doctor = scene.hippo("doctor", cwd=scene.root).out
    assert "model folder" not in doctor and "pack staging folder" not in doctor


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


#: Values a hostile or broken agent program may write where a field belongs.
odd_values = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**30, -1, 2**63, float("inf"), float("-inf"), "", "\x00", "9" * 5000]),
    st.sampled_from(["\ud800", "a\udfffb", "\ud83d"]),  # lone surrogates, as JSON can carry
    st.floats(allow_nan=True),
    st.text(max_size=50),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.integers(1, 500).map(_nested),
)


def _mutate(record: dict, where: int, value: object) -> dict:
    """``record`` with one field (chosen by ``where``, nested ones too) set to ``value``."""
    import copy

    record = copy.deepcopy(record)
    slots: list[tuple[dict, str]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key in node:
                slots.append((node, key))
                walk(node[key])
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(record)
    holder, key = slots[where % len(slots)]
    holder[key] = value
    return record


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    mutations=st.lists(
        st.tuples(st.integers(0, 10_000), odd_values, st.integers(0, 3)), min_size=1, max_size=4
    ),
    garbage=st.lists(st.binary(max_size=60), max_size=3),
)
def test_no_transcript_line_makes_ingest_raise_or_lose_the_good_turns(
    mutations, garbage, monkeypatch, tmp_path_factory
):
    import math

    home = tmp_path_factory.mktemp("fuzz")
    monkeypatch.setenv("HIPPO_HOME", str(home / "hippo"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    good = ClaudeSession(home / "claude", "/p")
    good.prompt("the first good prompt").answer("fine")
    lines = list(good.lines)
    good.lines = []
    odd = ClaudeSession(home / "claude", "/p", session=good.session)
    odd.parent, odd.clock = good.parent, 50
    odd.prompt("a prompt whose record is mangled").answer("mangled")
    for where, value, which in mutations:
        record = json.loads(odd.lines[which % len(odd.lines)])
        mutated = _mutate(record, where, value)
        try:
            lines.append(json.dumps(mutated, allow_nan=True))
        except (ValueError, RecursionError):
            continue
    lines += [g.decode("latin-1").replace("\n", " ") for g in garbage]
    tail = ClaudeSession(home / "claude", "/p", session=good.session)
    tail.parent, tail.clock = odd.parent, 100
    tail.prompt("the last good prompt").answer("fine")
    lines += tail.lines
    good.path.parent.mkdir(parents=True, exist_ok=True)
    good.path.write_text(
        "".join(line + "\n" for line in lines), encoding="utf-8", errors="surrogatepass"
    )
    summary = ingest()
    assert summary.turns >= 2 and not math.isnan(float(summary.turns))
    import sqlite3

    with sqlite3.connect(home / "hippo" / "index.sqlite") as conn:
        prompts = {row[0] for row in conn.execute("SELECT prompt FROM turns")}
    assert {"the first good prompt", "the last good prompt"} <= prompts


def _samples() -> list[tuple[str, Path, list[bytes]]]:
    """``(tool, path below the agent's folder, lines)`` of a real transcript of each agent
    whose log is JSON lines (dsh's decompressed; Muse Code's built from its record shapes)."""
    import zstandard

    from tests.test_source_muse import conversation

    root = Path(__file__).parent / "fixtures" / "transcripts"
    found = [
        (tool, path.relative_to(root / tool), path.read_bytes().splitlines())
        for tool in ("claude-code", "codex", "command-code", "gemini")
        for path in sorted((root / tool).rglob("*.jsonl"))
    ]
    for path in sorted((root / "dsh").rglob("*.jsonl.zstd")):
        with zstandard.ZstdDecompressor().stream_reader(path.open("rb")) as stream:
            plain = path.with_name("session.v4.jsonl").relative_to(root / "dsh")
            found.append(("dsh", plain, stream.read().splitlines()))
    muse = Path("sessions/2026/11/30/019a1b2c-3d4e-7f00-8a9b-0c1d2e3f4a5b/session.jsonl")
    found.append(("muse", muse, conversation().splitlines()))
    return found


SAMPLES = _samples()


@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    which=st.integers(0, len(SAMPLES) - 1),
    line=st.integers(0, 10_000),
    where=st.integers(0, 10_000),
    value=odd_values,
)
def test_no_misshapen_record_makes_a_source_raise(which, line, where, value, tmp_path_factory):
    """A real transcript of each agent with one field of one record set to an odd value:
    the source reads it without raising, and every other turn is kept."""
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.transcripts.model import Resume

    tool, relative, raw = SAMPLES[which]
    source = load_plugins().sources()[tool]
    folder = tmp_path_factory.mktemp(tool)
    whole = folder / "whole" / relative
    whole.parent.mkdir(parents=True)
    whole.write_bytes(b"".join(r + b"\n" for r in raw))
    before = source.parse(whole, Resume())
    raw = list(raw)
    index = line % len(raw)
    try:
        record = json.loads(raw[index])
        raw[index] = json.dumps(
            _mutate(record, where, value) if isinstance(record, dict) and record else value
        ).encode()
    except (ValueError, RecursionError):
        return
    copy = folder / "odd" / relative
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"".join(r + b"\n" for r in raw))
    after = source.parse(copy, Resume())
    assert before.committed == whole.stat().st_size
    # Read to the end, the odd record at most counted corrupt: nothing is left to retry; or
    # the whole file refused in words (a Muse log whose first record is no longer Muse's).
    refused = after.committed == 0 and bool(after.problems)
    assert refused or after.committed == copy.stat().st_size
    assert after.corrupt <= 1


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    table=st.sampled_from(["part", "message"]),
    row=st.integers(0, 10_000),
    where=st.integers(0, 10_000),
    value=odd_values,
)
def test_no_misshapen_opencode_row_makes_the_source_raise(
    table, row, where, value, tmp_path_factory
):
    """OpenCode's real database with one field of one row's JSON set to an odd value: the
    source reads it without raising, the odd row at most counted corrupt."""
    import shutil
    import sqlite3

    from hippo_core.plugins.manager import load_plugins
    from hippo_core.transcripts.model import Resume

    fixture = Path(__file__).parent / "fixtures" / "transcripts" / "opencode" / "opencode.db"
    copy = tmp_path_factory.mktemp("opencode") / "opencode.db"
    shutil.copyfile(fixture, copy)
    with sqlite3.connect(copy) as conn:
        rows = conn.execute(f"SELECT id, data FROM {table} ORDER BY id").fetchall()
        key, data = rows[row % len(rows)]
        try:
            odd = json.dumps(_mutate(json.loads(data), where, value))
        except (ValueError, RecursionError):
            return
        conn.execute(f"UPDATE {table} SET data = ? WHERE id = ?", (odd, key))
    conn.close()
    parsed = load_plugins().sources()["opencode"].parse(copy, Resume())
    assert not parsed.problems and parsed.corrupt <= 1


#: Strings a broken or hostile agent may send as an id or a folder.
odd_strings = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["..", "../../etc", "/", "a/b", "\x00", "\ud800", "x" * 5000, "*", "~"]),
)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    events=st.lists(st.sampled_from(["session-start", "prompt", "session-end"]), min_size=1),
    tool=st.sampled_from(["claude-code", "codex"]),
    session=odd_strings | odd_values,
    prompt=odd_strings | odd_values,
    fields=st.dictionaries(
        st.sampled_from(["source", "prompt_id", "reason", "transcript_path", "cwd"]),
        odd_strings | odd_values,
        max_size=5,
    ),
    here=st.booleans(),
    raw=st.none() | st.binary(max_size=40),
)
def test_no_hook_payload_makes_a_hook_raise_or_write_outside_its_places(
    events, tool, session, prompt, fields, here, raw, tmp_path_factory, monkeypatch
):
    """Hook stdin of odd shapes: every problem is one line of hooks.log in hippo's words
    (never a Python exception's), and nothing is written outside ``.hippo`` and hippo's home."""
    import io

    from hippo_core.actions.hook import run_hook

    base = tmp_path_factory.mktemp("hook")
    monkeypatch.setenv("HIPPO_HOME", str(base / "hippo"))
    root = base / "ws"
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text("", encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "Home.md").write_text("# Home\n\nWelcome.\n", encoding="utf-8")
    payload = {"session_id": session, "prompt": prompt, **fields}
    if here:
        payload["cwd"] = str(root)
    try:
        stdin = raw.decode("latin-1") if raw is not None else json.dumps(payload)
    except (ValueError, RecursionError):
        return
    monkeypatch.chdir(base)
    before = {p for p in base.rglob("*")}
    for event in events:
        run_hook(event, tool, stdin, io.StringIO())
    log = base / "hippo" / "hooks.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    assert not [line for line in lines if re_python_error.search(line)], lines
    made = {p for p in base.rglob("*")} - before
    places = (root / ".hippo", base / "hippo")
    assert all(any(p == q or q in p.parents for q in places) for p in made), made
    for record in (root / ".hippo" / "sessions").glob("*.json"):
        assert isinstance(json.loads(record.read_bytes()), dict)


re_python_error = __import__("re").compile(r"hook [a-z-]+: [A-Z]\w*(Error|Exception)\b")


#: Serves until stopped, by design (tests/test_notes_watch.py drives it).
WATCH = ("notes", "watch")


def _leaf_commands() -> list[tuple[tuple[str, ...], list]]:
    """Every command of the CLI (path and click parameters) a fuzzer may run here: not the
    hook (its stdin has its own test) nor what reaches a pack registry."""
    from typer._click import Context
    from typer.main import get_command

    from hippo_core.cli import app

    root = get_command(app)
    context = Context(root, info_name="hippo", resilient_parsing=True)
    found: list[tuple[tuple[str, ...], list]] = []

    def walk(command: object, path: tuple[str, ...]) -> None:
        if hasattr(command, "list_commands"):
            for name in command.list_commands(context):
                walk(command.get_command(context, name), (*path, name))
        elif path[0] != "hook" and path not in {("pack", "add"), ("pack", "update"), WATCH}:
            found.append((path, list(command.params)))

    walk(root, ())
    return found


LEAVES = _leaf_commands()
#: Argument values as a careless or hostile user types them.
odd_arguments = st.one_of(
    st.sampled_from(
        (
            *("", "-1", "0", "1", "10" * 20, "1e309", "nan", "999999999w", "2026-02-30", "1d"),
            *("Home.md", "notes/Home.md", "../../etc/passwd", "/", ".", "verify", "-", "--"),
            *("budget_bytes", "sleep", "claude-code", "codex", "a b", "x=y", "[[Home]]", "*"),
            *("~", "~0", "~no-such-user/notes"),  # pathlib's expanduser() raises on the last two
            *('"~\\u0000"', '["\\u0000"]'),  # a NUL, as config set's TOML value writes one
            "\udcff",  # a byte that is not UTF-8, as Python hands it over from argv
        )
    ),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\0")),
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_no_command_line_makes_a_traceback_or_a_changed_note_on_failure(
    data, fuzzed: Path, claude_home: Path, monkeypatch
):
    """Any command with odd arguments: exit 0, 1 or 2 with words, never a traceback; when it
    fails, every note and the settings are as they were."""
    path, params = data.draw(st.sampled_from(LEAVES))
    argv = list(path)
    for param in data.draw(st.lists(st.sampled_from(params), max_size=4)) if params else []:
        if param.param_type_name == "argument":
            argv.append(data.draw(odd_arguments))
        elif getattr(param, "is_flag", False):
            argv.append(param.opts[0])
        else:
            argv += [param.opts[0], data.draw(odd_arguments)]
    root = fuzzed

    def tree() -> dict[Path, bytes]:
        files = [*(root / "notes").rglob("*"), root / ".hippo" / "settings.toml"]
        return {p: p.read_bytes() for p in files if p.is_file()}

    before = tree()
    run = _run_as_a_process_would(argv, root, monkeypatch)
    assert run.code in (0, 1, 2), (argv, run)
    assert "Traceback" not in run.err, (argv, run.err)
    if run.code:
        assert run.err.strip() or run.out.strip(), argv  # --json puts the error in its output
        assert tree() == before, argv


#: Every command with each of its valued arguments in turn: what the draw above may miss.
VALUED = [
    (path, param)
    for path, params in LEAVES
    for param in params
    if not getattr(param, "is_flag", False) and param.name != "help"
]


@pytest.mark.parametrize("text", ["~0", "~no-such-user/notes"])
def test_a_home_folder_of_nobody_is_a_path_like_any_other(
    text: str, fuzzed: Path, claude_home: Path, monkeypatch
):
    """``~0`` (``hippo eval pack '~0'`` once printed a traceback: pathlib's ``expanduser()``
    raises for a user that does not exist) given to every argument of every command."""
    for path, param in VALUED:
        argv = (
            [*path, text] if param.param_type_name == "argument" else [*path, param.opts[0], text]
        )
        run = _run_as_a_process_would(argv, fuzzed, monkeypatch)
        assert run.code in (0, 1, 2), (argv, run)
        assert "Traceback" not in run.err, (argv, run.err)


#: Settings whose value is a path, or a list of paths, in hippo's table and in a plugin's.
PATH_SETTINGS = ("notes_dir", "entry_note", "registries", "sleep.model.lifecycle.server")


@pytest.mark.parametrize("key", PATH_SETTINGS)
def test_a_nul_in_a_setting_is_refused_before_it_is_written(key: str, fuzzed: Path, monkeypatch):
    """TOML writes a NUL as ``\\u0000`` (a value the property test above may draw), and a
    path holding one makes every ``open()`` raise: ``hippo config set notes_dir '"\\u0000"'``
    was written, and every later command printed a traceback."""
    settings = fuzzed / ".hippo" / "settings.toml"
    before = settings.read_bytes()
    value, where = (
        ('["~\\u0000"]', "registries.0") if key == "registries" else ('"~\\u0000.md"', key)
    )
    run = _run_as_a_process_would(["config", "set", key, value], fuzzed, monkeypatch)
    assert run.code == 1, run
    assert (
        run.err
        == f"error: .hippo/settings.toml: {where}: holds a NUL character (\\u0000); remove it\n"
    )
    assert settings.read_bytes() == before


def test_a_nul_written_by_hand_into_the_settings_is_one_line(fuzzed: Path, monkeypatch):
    """A settings file edited by hand, in hippo's table and in a plugin's: every command says
    where, and none prints a traceback."""
    settings = fuzzed / ".hippo" / "settings.toml"
    original = settings.read_text(encoding="utf-8")
    for line, where in (
        ('notes_dir = "notes\\u0000"\n', "notes_dir"),
        ('registries = ["a", "~\\u0000"]\n', "registries.1"),
        ('"odd\\u0000key" = 1\n', "odd\\u0000key"),
    ):
        settings.write_text(line + original, encoding="utf-8")
        for argv in (
            ["context"],
            ["doctor"],
            ["pack", "search", "x"],
            ["config", "get", "notes_dir"],
        ):
            run = _run_as_a_process_would(argv, fuzzed, monkeypatch)
            assert run.code == 1, (argv, run)
            shown = f".hippo/settings.toml: {where}: holds a NUL character (\\u0000); remove it"
            assert shown in run.err, (argv, run.err)
    settings.write_text(original + '\n[sleep.model.lifecycle]\nserver = "~\\u0000"\n')
    run = _run_as_a_process_would(["sleep", "status"], fuzzed, monkeypatch)
    assert run.code == 1 and "sleep.model.lifecycle.server: holds a NUL" in run.err, run


def _run_as_a_process_would(argv: list[str], cwd: Path, monkeypatch) -> Run:
    """``hippo *argv`` in this process, with standard streams as a real process under a
    UTF-8 locale has them (stdout strict, stderr backslash-escaping what UTF-8 cannot hold,
    stdin empty): an argument from a file name that is not UTF-8 arrives as surrogates."""
    import io
    import sys

    from hippo_core.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["hippo", *argv])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8"))
    monkeypatch.setattr(
        sys, "stderr", io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace")
    )
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return Run(code, out.getvalue().decode(), err.getvalue().decode())


@pytest.fixture
def fuzzed(make_workspace: WorkspaceMaker) -> Path:
    """One workspace for every example of a run, so that commands meet what earlier ones
    left (a session, a fragment, a changed setting)."""
    notes = {
        "Home.md": "---\ntype: topic\n---\n# Home\n\nSee [[Deploy]].\n",
        "Deploy.md": "---\ntype: topic\nsources: [deploy.sh]\n---\n# Deploy\n\nRun it.\n",
    }
    return make_workspace("", notes)


def test_names_that_are_not_utf8_are_refused_or_left_out_with_a_word(
    make_workspace: WorkspaceMaker, claude_home: Path, tmp_path: Path, monkeypatch
):
    """An argument, a note, a transcript or a workspace folder whose name is not UTF-8
    (Python hands its bytes over as surrogates): one line, never a traceback."""
    import os

    root = make_workspace()
    odd = os.fsdecode(b"\xff")
    run = _run_as_a_process_would(["session", "start", "--id", odd], root, monkeypatch)
    assert run.code == 2 and not (root / ".hippo" / "sessions").exists()
    assert run.err == "error: argument 4 (b'\\xff') is not UTF-8 text; give it in UTF-8\n"

    (root / "notes" / f"{odd}.md").write_text("# Odd\n\nText.\n", encoding="utf-8")
    run = _run_as_a_process_would(["context", "--task", "odd"], root, monkeypatch)
    assert run.code == 0 and "Welcome" in run.out
    run = _run_as_a_process_would(["doctor"], root, monkeypatch)
    line = "warning: notes: notes/\\xff.md: the name is not UTF-8; hippo leaves it out: rename it"
    assert line in run.out.splitlines()

    transcript = claude_home / "projects" / "-p" / f"{odd}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text('{"type": "user"}\n', encoding="utf-8")
    run = _run_as_a_process_would(["ingest"], root, monkeypatch)
    assert run.code == 0 and "Traceback" not in run.err
    assert "\\xff.jsonl: the file name is not UTF-8, so it is left out" in run.err

    folder = tmp_path / odd
    (folder / ".hippo").mkdir(parents=True)
    for argv in (["init"], ["context"], ["doctor"]):
        run = _run_as_a_process_would(argv, folder, monkeypatch)
        assert run.code == 1 and run.err.startswith("error: the workspace folder ")
        assert "\\xff is not a UTF-8 path" in run.err
    assert sorted(p.name for p in folder.iterdir()) == [".hippo"]


def test_a_hook_payload_with_a_lone_surrogate_is_recorded(make_workspace: WorkspaceMaker):
    """JSON may escape a lone surrogate (Node writes them); the session is still declared."""
    import io

    from hippo_core.actions.hook import run_hook
    from hippo_core.transcripts.session_ids import session_id

    root = make_workspace()
    stdin = json.dumps({"session_id": "s\ud800", "cwd": str(root), "prompt": "fix \udfff it"})
    run_hook("session-start", "claude-code", stdin, io.StringIO())
    run_hook("prompt", "claude-code", stdin, io.StringIO())
    name = session_id("s\ufffd") + ".json"
    record = json.loads((root / ".hippo" / "sessions" / name).read_text(encoding="utf-8"))
    assert record["task"] == "fix \ufffd it"
