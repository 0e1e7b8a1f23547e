"""The first-party ``decisions`` pack, copied into a workspace: it loads, its prompt gets the
handoff of its eval case, and a confirmed decision becomes a new note."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hippo_core.agents.sessions import session_id
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models import calls, model_settings, scripted_model

PACK = Path(__file__).resolve().parent.parent / "hippo_packs" / "decisions"
CASE = PACK / "eval" / "handoff-decision"
PROPOSER = "# Task: record the decisions that finished sessions made"
REVIEWER = "You are the reviewer for hippo's decisions pass"
HANDOFF = "Decided to use SQLite over Postgres for the local statement cache"
NATIVE = "019a9f3c-5e21-7b40-9d2e-6c81f4a07b35"


def copy_transcripts(case: Path, root: Path, codex_home: Path) -> None:
    """The case's Codex rollouts, ``{{workspace}}`` filled in and moved to the last hours."""
    workspace = json.dumps(str(root))[1:-1]
    for source in sorted((case / "transcripts" / "codex").rglob("*.jsonl")):
        records = [
            json.loads(line.replace("{{workspace}}", workspace))
            for line in source.read_text(encoding="utf-8").splitlines()
        ]
        last = max(_time(r["timestamp"]) for r in records)
        shift = datetime.now(UTC) - timedelta(hours=1) - last
        for record in records:
            record["timestamp"] = _moved(record["timestamp"], shift)
            if record["type"] == "session_meta":
                record["payload"]["timestamp"] = _moved(record["payload"]["timestamp"], shift)
        target = codex_home / source.relative_to(case / "transcripts" / "codex")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _moved(text: str, shift: timedelta) -> str:
    return (_time(text) + shift).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@pytest.fixture
def root(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """A workspace holding the case's notes and sessions, with the pack in .hippo/packs/."""
    notes = {
        path.relative_to(CASE / "notes").as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((CASE / "notes").rglob("*.md"))
    }
    root = make_workspace("", notes)
    assert hippo("init", cwd=root).code == 0
    shutil.copytree(PACK, root / ".hippo" / "packs" / "decisions")
    codex_home = tmp_path / "codex"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    copy_transcripts(CASE, root, codex_home)
    return root


def use_model(root: Path, tmp_path: Path, *rules: dict[str, object]) -> Path:
    argv, script = scripted_model(tmp_path, [*rules, {"reply": "[]"}])
    (root / ".hippo" / "settings.toml").write_text(model_settings(argv), encoding="utf-8")
    return script


def expected() -> dict[str, object]:
    case = tomllib.loads((CASE / "case.toml").read_text(encoding="utf-8"))
    [expect] = case["expect"]
    assert case["passes"] == ["decisions"] and expect["kind"] == "create"
    return dict(expect)


def newest_report(root: Path) -> str:
    return sorted((root / ".hippo" / "reports").glob("*.md"))[-1].read_text(encoding="utf-8")


def test_the_pack_loads_beside_core_and_builds_a_prompt(root: Path, hippo: HippoRunner):
    run = hippo("dream", "--dry-run", cwd=root)
    assert run.code == 0, run.err
    report = newest_report(root)
    assert "passes: core/consolidate, core/verify, decisions/decisions" in report
    assert "decisions/decisions: prompt of" in report and "(dry run: not sent)" in report


def test_the_prompt_holds_the_handoff_the_linked_note_and_the_turns(
    root: Path, hippo: HippoRunner, tmp_path: Path
):
    script = use_model(root, tmp_path)
    assert hippo("dream", "--pass", "decisions", cwd=root).code == 0
    [call] = calls(script)
    marker, prompt = call["prompt"].split("\n", 1)
    assert marker.startswith('<hippo-model-call key="') and prompt.startswith(PROPOSER)
    assert HANDOFF in prompt and "(the session's last message)" in prompt
    assert "### Note `Home.md`" in prompt and "nothing is cached" in prompt
    sid = session_id(f"codex-{NATIVE}")
    assert f"### Session {sid}, turn 1" in prompt
    assert "Agreed, go with SQLite over Postgres" in prompt
    assert "{{" not in prompt.split("## Sessions in this window", 1)[0]


def test_a_confirmed_decision_becomes_a_note(root: Path, hippo: HippoRunner, tmp_path: Path):
    expect = expected()
    note = str(expect["note"])
    title = note.removeprefix("decisions/").removesuffix(".md")
    sid = session_id(f"codex-{NATIVE}")
    day = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%d")  # the session's day
    new = (
        f"---\ntype: decision\nstatus: current\n---\n# {title}\n\n## Decision\n\n"
        f"Decided on {day}: the local statement cache uses SQLite, not Postgres.\n\n"
        "## Why\n\nThe CLI must work offline, and `sqlite3` ships with Python.\n\n"
        f'## Evidence\n\n- Session {sid}, turn 1: "Agreed, go with SQLite over Postgres: '
        'the CLI has to work offline."\n'
    )
    proposal = {
        "note": note,
        "kind": "create",
        "old": "",
        "new": new,
        "reason": "The handoff records the choice; Home.md still says nothing is cached.",
        "evidence": [{"session": sid, "ordinal": 1}],
    }
    confirm = {"verdict": "confirm", "notes": "Turn 1 has the user choose SQLite, for offline."}
    script = use_model(
        root,
        tmp_path,
        {"when": [PROPOSER], "reply": json.dumps([proposal])},
        {"when": [REVIEWER], "reply": json.dumps(confirm)},
    )
    run = hippo("dream", "--pass", "decisions", cwd=root)
    assert run.code == 0, run.err
    written = (root / "notes" / note).read_text(encoding="utf-8")
    assert written == new
    assert all(part in written for part in expect["contains"])  # type: ignore[union-attr]
    [review] = [c for c in calls(script) if REVIEWER in (c["system"] or "")]
    assert "kind: create" in review["prompt"]
    [receipt] = [
        json.loads(p.read_text()) for p in sorted((root / ".hippo" / "receipts").glob("*.json"))
    ]
    assert receipt["pass"] == "decisions/decisions" and receipt["state"] == "applied"
    assert receipt["before"] is None
    home = (CASE / "notes" / "Home.md").read_text(encoding="utf-8")
    assert (root / "notes" / "Home.md").read_text(encoding="utf-8") == home


def test_the_shipped_recording_replays_out_of_the_box(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    """A newcomer's ``hippo eval pack decisions --replay`` needs no model (newcomer defect
    12), and prints what the pack's README shows."""
    root = make_workspace("")
    assert hippo("init", cwd=root).code == 0
    assert hippo("pack", "add", "decisions", cwd=root).code == 0
    run = hippo("eval", "pack", "decisions", "--replay", cwd=root)
    assert (run.code, run.err) == (0, "")
    readme = (PACK / "README.md").read_text(encoding="utf-8")
    shown = readme.split("$ hippo eval pack decisions --replay\n", 1)[1].split("```", 1)[0]
    chapter = (PACK.parent.parent / "docs" / "eval.md").read_text(encoding="utf-8")
    assert f"$ hippo eval pack decisions --replay\n{shown}```" in chapter
    # Bytes in are counted from the prompts, which name the case's temporary folder.
    assert [line for line in run.out.splitlines() if not line.startswith("bytes ")] == [
        line for line in shown.splitlines() if not line.startswith("bytes ")
    ]
    assert "bytes      15,675 in, 1,598 out\n" in shown
    assert re.search(r"^bytes      \d+,\d{3} in, 1,598 out$", run.out, re.M)
