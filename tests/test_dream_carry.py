"""No confirmed change is dropped: a change confirmed after an earlier change of the same run
to its note lands on the note as the run left it, and one that no longer applies there is
carried to the next run, which proposes it again (the month's finding F1)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.dream_scene import (
    CONFIRM,
    CONSOLIDATE_REVIEWER,
    CONSOLIDATOR,
    PROPOSER,
    TESTING,
    VERIFY_REVIEWER,
    Scene,
    replace,
)


def state(scene: Scene) -> dict:
    return json.loads((scene.root / ".hippo/dream-state.json").read_text())


def receipts(scene: Scene) -> list[dict]:
    found = [json.loads(p.read_text()) for p in scene.files("receipts")]
    return sorted(found, key=lambda r: r["id"])


def test_two_appends_of_one_reply_to_one_note_both_land(scene: Scene):
    """The month's reproduction A: two sessions hand off to one note; the consolidate reply
    holds an append for each, both confirmed; both are in the note."""
    hippo, root = scene.hippo, scene.root
    sessions = []
    for handoff in ("The suite moved to uv. [[Testing]]", "Fixtures live in conftest. [[Testing]]"):
        session = scene.transcript(hours_ago=1)
        hippo("session", "start", "--id", session, "--tool", "claude-code", cwd=root)
        hippo("session", "end", "--id", session, "--handoff", handoff, cwd=root)
        sessions.append(session)
    first, second = "- The suite runs with `uv run pytest -q`.\n", "- The fixtures: conftest.\n"
    replies = [
        {
            "note": "Testing.md",
            "kind": "append",
            "old": "",
            "new": text,
            "reason": "handed off",
            "evidence": [{"session": session, "ordinal": 0}],
        }
        for text, session in zip((first, second), sessions, strict=True)
    ]
    scene.model(
        {"when": [CONSOLIDATOR], "reply": json.dumps(replies)},
        {"when": [CONSOLIDATE_REVIEWER], "reply": CONFIRM},
        {"when": [PROPOSER], "reply": "[]"},
    )
    assert scene.dream().code == 0
    assert scene.note.read_text() == TESTING + first + second
    done = receipts(scene)
    assert [r["state"] for r in done] == ["applied", "applied"]
    assert done[0]["detail"] == ""
    assert done[1]["detail"] == "applied onto the note as this run's earlier changes left it"
    # Each receipt's hashes are the note as that change found it and left it: revert works
    # from the newest back.
    assert done[1]["before"] == done[0]["after"]
    assert "note changed" not in scene.report()
    assert scene.hippo("revert", done[1]["id"], cwd=root).code == 0
    assert scene.note.read_text() == TESTING + first


OLD_LINE = "Run the tests with `make test` from the repository root."
UV_LINE = "Run the tests with `uv run pytest -q` from the repository root."


def test_a_change_that_no_longer_applies_is_carried_and_proposed_again(scene: Scene):
    """Two replaces in one verify reply, the second's old text gone once the first landed:
    the second is carried; the next run proposes it again from the same turn, though the
    turn is long before its window, and what it proposes then lands."""
    scene.transcript(hours_ago=2)
    whole = replace(old=OLD_LINE, new=UV_LINE)
    part = replace(old="`make test`", new="`uv run pytest -q`")
    again = replace(old=UV_LINE, new=UV_LINE.replace(".", "; all 214 tests passed."))
    scene.model(
        {"when": [PROPOSER], "reply": json.dumps([whole, part]), "repeat": 1},
        {"when": [PROPOSER], "reply": json.dumps([again])},
        {"when": [VERIFY_REVIEWER], "reply": CONFIRM},
    )
    assert scene.dream().code == 0
    first, second = receipts(scene)
    assert first["state"] == "applied"
    assert second["state"] == "carried"
    assert second["detail"].startswith(
        "an earlier change of this run to the note left it where this one no longer applies ("
    )
    assert second["detail"].endswith("); proposed again by the next run")
    applied = [line for line in scene.section("Applied") if second["id"] in line]
    assert applied and ": carried (an earlier change of this run" in applied[0]
    [carried] = state(scene)["carried"]
    assert carried["pass"] == "core/verify" and carried["note"] == "Testing.md"
    assert carried["evidence"] == [{"session": scene.session, "ordinal": 0}]
    assert carried["tries"] == 1
    calls = len(scene.calls())

    assert scene.dream().code == 0
    window = scene.section("Window")
    assert "- carried from the last run: 1 change(s) (core/verify `Testing.md`)" in window
    assert any(line.startswith("- chunk carried turns of ") for line in window), window
    prompts = [c["prompt"] for c in scene.calls()[calls:] if PROPOSER in (c["prompt"] or "")]
    assert len(prompts) == 1 and f"Session {scene.session}, turn 0" in prompts[0]
    assert "all 214 tests passed" in scene.note.read_text()
    assert "carried" not in state(scene)


def test_a_note_edited_while_the_run_went_on_is_left_alone_and_proposed_again(
    scene: Scene, tmp_path: Path
):
    """'note changed' stays what a person's edit earns, and the change is not lost: each
    run proposes it again, three times, and then lets it go, saying so."""
    scene.transcript(hours_ago=2)
    scene.model(
        {"when": [PROPOSER], "reply": json.dumps([replace()])},
        # A person edits the note while the reviewer thinks, every time.
        {"when": [VERIFY_REVIEWER], "reply": CONFIRM, "append_to": [str(scene.note), "x\n"]},
    )
    assert scene.dream().code == 0
    [receipt] = receipts(scene)
    assert receipt["state"] == "note changed"
    assert receipt["detail"] == (
        "the note was edited after the prompt was built; left alone, and proposed again by "
        "the next run against the note as it is then"
    )
    assert [c["tries"] for c in state(scene)["carried"]] == [1]
    for tries in (2, 3):
        assert scene.dream().code == 0
        assert [c["tries"] for c in state(scene)["carried"]] == [tries]
    assert scene.dream().code == 0
    assert "carried" not in state(scene)
    assert any(
        line.endswith("`Testing.md`: carried 3 times without landing; let go")
        for line in scene.section("Applied")
    )
    assert scene.note.read_text() == TESTING + "x\n" * 4


def test_hippo_review_of_a_queued_change_still_refuses_a_changed_note(scene: Scene):
    """Outside a dream run there is no run's lineage: the unchanged check stands."""
    verify = scene.root / ".hippo/packs/core/passes/verify.toml"
    verify.write_text(verify.read_text() + 'review = "queue"\n')
    scene.transcript()
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    [proposal] = scene.files("proposals")
    scene.note.write_text(TESTING + "An edit.\n")
    done = scene.hippo("review", proposal.stem, "--confirm", cwd=scene.root)
    assert done.code == 0 and "note changed" in done.out
    assert "carried" not in state(scene)


def test_a_session_that_reaches_the_index_after_its_time_was_dreamed_is_dreamed_next(
    scene: Scene,
):
    """A transcript copied in after the dream covered its hours (the month's F2, on one
    machine): the next run dreams its turns in a late chunk, and only once."""
    scene.transcript(hours_ago=2)
    scene.proposer_replies()
    assert scene.dream().code == 0
    assert not any("late" in line for line in scene.section("Window"))
    first = scene.session
    late = scene.transcript(hours_ago=5, answer="The Testing suite now runs with `uv run pytest`.")
    assert late != first
    calls = len(scene.calls())
    assert scene.dream().code == 0
    window = scene.section("Window")
    assert (
        "- late: 1 turn(s) of 1 session(s) that reached the index after their time was dreamed"
        in window
    )
    prompts = [c["prompt"] for c in scene.calls()[calls:] if PROPOSER in (c["prompt"] or "")]
    assert len(prompts) == 1 and f"Session {late}, turn 0" in prompts[0]
    assert f"Session {first}, turn 0" not in prompts[0]
    calls = len(scene.calls())
    assert scene.dream().code == 0
    assert not any("late" in line for line in scene.section("Window"))
    assert len(scene.calls()) == calls


def test_a_rebuilt_index_counts_arrivals_anew(scene: Scene):
    scene.transcript(hours_ago=2)
    scene.proposer_replies()
    assert scene.dream().code == 0
    assert scene.hippo("ingest", "--full", cwd=scene.root).code == 0
    assert scene.dream().code == 0
    assert (
        "- late: the local index was made anew since the last run; its arrivals count from now"
        in scene.section("Window")
    )


def test_a_window_a_few_seconds_over_a_day_is_one_chunk(scene: Scene):
    """A dream at the same time each night starts a few seconds later on some nights: its
    window is one chunk, not a day and a chunk of those seconds (the month's F10)."""
    from datetime import UTC, datetime, timedelta

    scene.transcript(hours_ago=2)
    scene.proposer_replies()
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1, seconds=30)
    (scene.root / ".hippo/dream-state.json").write_text(
        json.dumps({"last_success": start.strftime("%Y-%m-%dT%H:%M:%SZ")})
    )
    assert scene.dream().code == 0
    window = scene.section("Window")
    assert window[0].endswith(": 1 chunk of the last with the 30 seconds after it"), window


def test_a_chunks_model_calls_count_the_reviews(scene: Scene):
    """'N model calls' counts the reviewer's calls as well as the proposer's (F10)."""
    scene.transcript(hours_ago=2)
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    done = [line for line in scene.section("Window") if ": done, " in line]
    # One verify prompt, one review of its proposal; consolidate had no handoff to read.
    assert done == [done[0]] and done[0].endswith(": done, 1 session, 2 model calls"), done
