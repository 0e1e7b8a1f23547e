"""Hostile input: parsers that never raise, numbers out of range, paths that are not notes.

Each test here names a failure a harness found on main (a traceback, a dropped file, a bad
value taken for bad YAML); each fails on the code before its fix.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo_core import quickjson
from hippo_core.dream.proposals import parse_reply, to_proposals
from hippo_core.dream.review import parse_verdict
from hippo_core.index.ingest import ingest
from hippo_core.notes.note import parse_note
from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, WorkspaceMaker

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
        quickjson.loads(DEEP)
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
