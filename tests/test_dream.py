"""``hippo dream`` end to end: a real index, real files, a scripted model program."""

from __future__ import annotations

import json

import pytest

from tests.dream_scene import (
    CONFIRM,
    PROPOSER,
    REJECT,
    TESTING,
    VERIFY_REVIEWER,
    Scene,
    replace,
)

NEW_LINE = "Run the tests with `uv run pytest -q` from the repository root."


def test_a_confirmed_change_is_applied_with_proposal_review_receipt_and_snapshot(scene: Scene):
    scene.transcript()
    scene.proposer_replies(replace())
    run = scene.dream()
    assert run.code == 0, run.err
    assert run.out.startswith("dream ok: report .hippo/reports/")
    assert NEW_LINE in scene.note.read_text()
    assert TESTING.replace("`make test`", "`uv run pytest -q`") == scene.note.read_text()

    [proposal] = scene.files("proposals")
    record = json.loads(proposal.read_text())
    assert record["pass"] == "core/verify" and record["note"] == "Testing.md"
    review = json.loads((scene.root / ".hippo/reviews" / proposal.name).read_text())
    assert review["verdict"] == "confirm" and review["reviewer"] == "model"
    receipt = json.loads((scene.root / ".hippo/receipts" / proposal.name).read_text())
    assert receipt["state"] == "applied" and receipt["applied"]
    assert receipt["verdict"] == "confirm" and receipt["reviewer"]["name"] == "model"
    assert receipt["before"].startswith("sha256:") and receipt["after"] != receipt["before"]
    assert receipt["invocation"]["command"] == "hippo dream"
    snapshot = scene.root / receipt["snapshot"]
    assert snapshot == scene.root / ".hippo/snapshots" / proposal.stem / "Testing.md"
    assert snapshot.read_text() == TESTING

    lines = scene.report().splitlines()
    assert lines[0] == "status: ok"
    headings = [line[3:] for line in lines if line.startswith("## ")]
    assert headings == [
        "Window",
        "Inputs",
        "Omissions",
        "Proposals",
        "Validation failures",
        "Verdicts",
        "Applied",
    ]
    assert any("applied; receipt .hippo/receipts/" in line for line in scene.section("Applied"))
    state = json.loads((scene.root / ".hippo/dream-state.json").read_text())
    assert state["last_success"] and state["last_run"]["status"] == "ok"


def test_the_reviewer_sees_persona_note_change_and_evidence_but_never_the_reason(scene: Scene):
    scene.transcript()
    scene.proposer_replies(replace())
    scene.dream()
    proposer, reviewer = scene.calls()
    # the instructions go as the system prompt, the material as the prompt, apart
    assert proposer["system"].startswith(PROPOSER) and "## Output" in proposer["system"]
    assert "## Output" not in proposer["prompt"] and "## Note " in proposer["prompt"]
    assert "prompt (the person's words):" in proposer["prompt"]
    assert "How do we run the Testing suite" in proposer["prompt"]
    assert reviewer["system"].startswith(VERIFY_REVIEWER)
    assert "SECRET-REASON" not in reviewer["prompt"] and "SECRET-REASON" not in reviewer["system"]
    assert TESTING in reviewer["prompt"]
    assert "`uv run pytest -q`" in reviewer["prompt"]
    assert "all 214 tests passed" in reviewer["prompt"]


@pytest.mark.parametrize(
    "verdict",
    [
        REJECT,
        "I confirm this change.",
        '```json\n{"verdict": "confirm", "notes": "ok"}\n```\nThat is my verdict.',
        '{"verdict": "confirm", "notes": "ok"} {"verdict": "confirm", "notes": "ok"}',
        '{"verdict": "yes", "notes": "ok"}',
        '{"verdict": "confirm"}',
        "",
    ],
)
def test_anything_but_one_confirming_object_is_a_rejection(scene: Scene, verdict: str):
    scene.transcript()
    scene.proposer_replies(replace(), verdict=verdict)
    run = scene.dream()
    # The only reviewer reply could not be read: the run fails, so the context block warns.
    assert run.code == (0 if verdict == REJECT else 1)
    if verdict != REJECT:
        assert (
            scene.report()
            .splitlines()[1]
            .startswith(
                "error: no reply of the reviewer of core/verify could be read (1 in this chunk)"
            )
        )
    assert scene.note.read_text() == TESTING
    [receipt] = scene.files("receipts")
    record = json.loads(receipt.read_text())
    assert record["verdict"] == "reject" and record["state"] == "rejected"
    assert record["applied"] == "" and record["snapshot"] == ""
    assert not (scene.root / ".hippo/snapshots").exists()


@pytest.mark.parametrize(
    "verdict",
    [
        '```json\n{"verdict": "confirm", "notes": "ok"}\n```',
        '```\n{"verdict": "confirm", "notes": "ok"}\n```\n',
        '{"verdict": "confirm", "notes": "ok"}',
    ],
)
def test_one_object_alone_or_in_one_fence_is_read(scene: Scene, verdict: str):
    scene.transcript()
    scene.proposer_replies(replace(), verdict=verdict)
    assert scene.dream().code == 0
    [receipt] = scene.files("receipts")
    assert json.loads(receipt.read_text())["state"] == "applied"
    assert "replies of core/verify, reviewer: 1 read, 0 unreadable" in scene.report()


def test_an_unreachable_reviewer_fails_the_run_and_keeps_the_window(scene: Scene):
    scene.transcript()
    scene.model(
        {"when": [PROPOSER], "reply": json.dumps([replace()])},
        {"when": [VERIFY_REVIEWER], "exit": 1, "stderr": "model server is down"},
    )
    run = scene.dream()
    assert run.code == 1
    assert "model server is down" in run.err
    lines = scene.report().splitlines()
    assert lines[0] == "status: failed"
    assert lines[1].startswith("error: model_command exited with 1")
    assert scene.note.read_text() == TESTING
    assert scene.files("receipts") == []
    state = json.loads((scene.root / ".hippo/dream-state.json").read_text())
    assert "last_success" not in state and state["last_run"]["status"] == "failed"
    context = scene.hippo("context", cwd=scene.root)
    assert context.out.splitlines()[0] == "warning: last dreaming run failed"


def test_no_sessions_in_the_window_means_no_model_call(scene: Scene):
    scene.transcript(hours_ago=30)  # before the first run's 24 hours
    scene.proposer_replies(replace())
    run = scene.dream()
    assert run.code == 0
    assert scene.calls() == []
    assert any("0 sessions (no model call)" in line for line in scene.section("Window"))


def test_a_dry_run_shows_the_prompts_it_would_send(scene: Scene):
    scene.transcript()
    scene.proposer_replies(replace())
    run = scene.dream("--dry-run", "--show-prompts")
    assert run.code == 0 and scene.calls() == []
    first = run.out.splitlines()[0]
    assert first.startswith("===== ") and "core/verify, note `Testing.md`: " in first
    size = int(first.rsplit(": ", 1)[1].removesuffix(" bytes =====").replace(",", ""))
    prompt = run.out.split("\n", 1)[1].rsplit("dream ok: report ", 1)[0]
    assert len(prompt.encode("utf-8")) in (size, size + 1)  # plus the line end it may lack
    assert TESTING.strip() in prompt  # the note, whole, as the model would see it
    assert any(
        f"prompt of {size:,} bytes (dry run: not sent)" in line for line in scene.section("Inputs")
    )
    refused = scene.dream("--show-prompts")
    assert refused.code == 2 and "--show-prompts goes with --dry-run" in refused.err


def test_a_dry_run_writes_only_its_report(scene: Scene):
    scene.transcript()
    scene.proposer_replies(replace())
    run = scene.dream("--dry-run")
    assert run.code == 0
    assert scene.calls() == []
    assert scene.note.read_text() == TESTING
    hippo_dir = scene.root / ".hippo"
    assert not (hippo_dir / "dream-state.json").exists()
    for folder in ("proposals", "receipts", "reviews", "snapshots"):
        assert not (hippo_dir / folder).exists()
    assert "- dry run: nothing was written but this report" in scene.section("Window")
    assert any("(dry run: not sent)" in line for line in scene.section("Inputs"))
    context = scene.hippo("context", cwd=scene.root)
    assert context.out.splitlines()[0] == "warning: no dreaming run recorded"
    # A later real run on the same day replaces the dry run's report.
    [report] = list((hippo_dir / "reports").iterdir())
    assert scene.dream().code == 0
    assert [p.name for p in (hippo_dir / "reports").iterdir()] == [report.name]
    assert scene.report().startswith("status: ok")
    assert scene.dream().code == 0  # a real run's report is never replaced
    names = {p.name for p in (hippo_dir / "reports").iterdir()}
    assert names == {report.name, report.name.replace("-dream.md", "-2-dream.md")}
    # Dry runs after a real one reuse one name, the newest dry run's (newcomer defect 26).
    for _ in range(3):
        assert scene.hippo("dream", "--dry-run", cwd=scene.root).code == 0
    names = {p.name for p in (hippo_dir / "reports").iterdir()}
    assert len(names) == 3 and scene.report().startswith("status: ok")
    third = report.name.replace("-dream.md", "-3-dream.md")
    assert "- dry run: " in (hippo_dir / "reports" / third).read_text()
    assert scene.dream().code == 0  # ... and the next real run takes that dry run's place
    assert {p.name for p in (hippo_dir / "reports").iterdir()} == names
    assert "- dry run: " not in (hippo_dir / "reports" / third).read_text()


def test_the_next_run_uses_an_edited_prompt(scene: Scene):
    scene.transcript()
    scene.proposer_replies()
    prompt = scene.root / ".hippo/packs/core/prompts/verify.md"
    prompt.write_text(prompt.read_text() + "\nHOUSE RULE: be brief.\n")
    assert scene.dream().code == 0
    [call] = scene.calls()
    assert "HOUSE RULE: be brief." in call["prompt"]


def test_pass_selects_one_pass_and_an_unknown_pass_is_a_usage_error(scene: Scene):
    scene.transcript()
    scene.proposer_replies()
    run = scene.dream("--pass", "consolidate")
    assert run.code == 0
    assert "- passes: core/consolidate" in scene.section("Window")
    run = scene.dream("--pass", "nope")
    assert run.code == 2
    assert "no pass named 'nope'" in run.err


def test_a_note_edited_while_the_model_thinks_is_left_alone(scene: Scene):
    scene.transcript()
    scene.model(
        {"when": [PROPOSER], "reply": json.dumps([replace()]).replace("SESSION", scene.session)},
        {
            "when": [VERIFY_REVIEWER],
            "reply": CONFIRM,
            "append_to": [str(scene.note), "A line a person added.\n"],
        },
    )
    assert scene.dream().code == 0
    assert scene.note.read_text() == TESTING + "A line a person added.\n"
    [receipt] = scene.files("receipts")
    record = json.loads(receipt.read_text())
    assert record["verdict"] == "confirm" and record["state"] == "note changed"
    assert record["applied"] == "" and record["snapshot"] == ""
    assert not (scene.root / ".hippo/snapshots").exists()


def test_the_session_log_counts_the_changes_a_session_is_evidence_for(scene: Scene):
    session = scene.transcript()
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    assert scene.hippo("log", cwd=scene.root).code == 0
    log = (scene.root / "notes" / "Session log.md").read_text()
    [line] = [line for line in log.splitlines() if session in line]
    assert "1 change)" in line
    # A change a person reverted is a change no more (newcomer defect 24).
    [receipt] = scene.files("receipts")
    assert scene.hippo("revert", json.loads(receipt.read_text())["id"], cwd=scene.root).code == 0
    assert scene.hippo("log", cwd=scene.root).code == 0
    log = (scene.root / "notes" / "Session log.md").read_text()
    [line] = [line for line in log.splitlines() if session in line]
    assert "change" not in line.split("handoff")[0], line


def test_the_input_budget_leaves_whole_blocks_out_and_says_so(scene: Scene):
    for hours in range(1, 13):
        scene.transcript(hours_ago=hours)
    scene.proposer_replies()
    verify = scene.root / ".hippo/packs/core/passes/verify.toml"
    verify.write_text(verify.read_text().replace("200000", "9000"))
    assert scene.dream().code == 0
    [call] = scene.calls()
    assert len(call["prompt"].encode("utf-8")) <= 9000
    assert TESTING in call["prompt"]  # the note goes in first, whole
    [omission] = scene.section("Omissions")
    assert "note `Testing.md`: turns: " in omission and "blocks left out" in omission


def test_a_note_deleted_while_the_reviewer_thinks_is_not_recreated(scene: Scene):
    scene.transcript()
    scene.model(
        {"when": [PROPOSER], "reply": json.dumps([replace()]).replace("SESSION", scene.session)},
        {"when": [VERIFY_REVIEWER], "reply": CONFIRM, "delete": str(scene.note)},
    )
    assert scene.dream().code == 0
    assert not scene.note.exists()
    [receipt] = scene.files("receipts")
    record = json.loads(receipt.read_text())
    assert record["state"] == "note changed" and "deleted" in record["detail"]
