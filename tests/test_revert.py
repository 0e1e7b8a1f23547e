"""``hippo revert``: the note back from its snapshot, a revert receipt, and what a person
confirmed by reverting treated as true from then on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.dream_scene import PROPOSER, TESTING, Scene, make_scene, replace


@pytest.fixture
def applied(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path, claude_home: Path
) -> tuple[Scene, str]:
    scene = make_scene(make_workspace(), hippo, tmp_path, claude_home)
    scene.transcript()
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    [receipt] = scene.files("receipts")
    return scene, receipt.stem


def test_revert_restores_the_note_and_writes_a_revert_receipt(applied: tuple[Scene, str]):
    scene, receipt = applied
    changed = scene.note.read_bytes()
    run = scene.hippo("revert", receipt, cwd=scene.root)
    assert run.code == 0, run.err
    assert run.out.startswith("reverted notes/Testing.md; receipt .hippo/receipts/")
    assert scene.note.read_text() == TESTING
    records = [json.loads(p.read_text()) for p in scene.files("receipts")]
    [revert] = [r for r in records if r["type"] == "revert"]
    assert revert["reverts"] == receipt and revert["note"] == "Testing.md"
    assert revert["forced"] is False
    assert revert["confirmed"] == "Run the tests with `make test` from the repository root."
    assert revert["before"] != revert["after"]
    assert changed != scene.note.read_bytes()


def test_revert_by_path_and_twice(applied: tuple[Scene, str]):
    scene, receipt = applied
    path = f".hippo/receipts/{receipt}.json"
    assert scene.hippo("revert", path, cwd=scene.root).code == 0
    again = scene.hippo("revert", receipt, cwd=scene.root)
    assert again.code == 1 and "was already reverted by receipt" in again.err


def test_revert_refuses_when_the_note_was_edited_since_unless_forced(applied: tuple[Scene, str]):
    scene, receipt = applied
    edited = scene.note.read_text() + "\nA line a person added.\n"
    scene.note.write_text(edited)
    run = scene.hippo("revert", receipt, cwd=scene.root)
    assert run.code == 1
    assert "notes/Testing.md was edited after the change" in run.err and "--force" in run.err
    assert scene.note.read_text() == edited
    forced = scene.hippo("revert", receipt, "--force", cwd=scene.root)
    assert forced.code == 0
    assert scene.note.read_text() == TESTING
    [revert] = [
        json.loads(p.read_text())
        for p in scene.files("receipts")
        if json.loads(p.read_text())["type"] == "revert"
    ]
    assert revert["forced"] is True


def test_revert_bad_input(applied: tuple[Scene, str]):
    scene, receipt = applied
    missing = scene.hippo("revert", "nope", cwd=scene.root)
    assert missing.code == 1 and "no receipt 'nope'" in missing.err
    snapshot = next((scene.root / ".hippo/snapshots").rglob("Testing.md"))
    snapshot.unlink()
    gone = scene.hippo("revert", receipt, cwd=scene.root)
    assert gone.code == 1 and "is not on this machine" in gone.err and "git" in gone.err


def test_reverted_text_is_shown_as_human_confirmed_and_never_changed_again(
    applied: tuple[Scene, str],
):
    scene, receipt = applied
    assert scene.hippo("revert", receipt, cwd=scene.root).code == 0
    scene.transcript(hours_ago=1)
    scene.proposer_replies(replace())
    state = scene.root / ".hippo/dream-state.json"
    saved = json.loads(state.read_text())
    saved.pop("last_success")
    state.write_text(json.dumps(saved))
    assert scene.dream().code == 0
    [call] = [c for c in scene.calls() if PROPOSER in c["prompt"]][:1]
    confirmed = call["prompt"].split("## Text a human has confirmed", 1)[1].split("##", 1)[0]
    assert "Run the tests with `make test` from the repository root." in confirmed
    failures = scene.section("Validation failures")
    assert any("old changes text a person confirmed by revert" in f for f in failures)
    assert scene.note.read_text() == TESTING
