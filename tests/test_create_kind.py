"""The ``create`` kind: a new note, checked like a note, written only where nothing is, and
deleted again by ``hippo revert``."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from hippo_core import Finding, hookimpl
from hippo_core.plugins.manager import load_plugins
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.dream_scene import PROPOSER, REJECT, VERIFY_REVIEWER, Scene, make_scene

NOTE = "decisions/Run the tests with uv.md"
NEW = """\
---
type: decision
status: current
---
# Run the tests with uv

## Decision

The suite runs with `uv run pytest -q` from the repository root; the Makefile is gone.
"""
CONFIRM = '{"verdict": "confirm", "notes": "The turn ran the suite with uv."}'


def create(note: str = NOTE, new: str = NEW, **extra: object) -> dict[str, object]:
    proposal = {
        "note": note,
        "kind": "create",
        "old": "",
        "new": new,
        "reason": "The session settled how the tests run.",
        "evidence": [{"session": "SESSION", "ordinal": 0}],
    }
    return {**proposal, **extra}


@pytest.fixture
def scene(scene: Scene) -> Scene:
    scene.transcript()
    return scene


def receipts(scene: Scene) -> list[dict[str, object]]:
    return [json.loads(path.read_text()) for path in scene.files("receipts")]


def failures_after(scene: Scene, *proposals: dict[str, object]) -> list[str]:
    scene.proposer_replies(*proposals, verdict=CONFIRM)
    run = scene.dream()
    assert run.code == 0, run.err
    assert not any(VERIFY_REVIEWER in (c["system"] or "") for c in scene.calls())
    assert scene.files("proposals") == [] and scene.files("receipts") == []
    return scene.section("Validation failures")


def test_a_confirmed_create_writes_the_new_note_with_a_receipt(scene: Scene):
    scene.proposer_replies(create(), verdict=CONFIRM)
    assert scene.dream().code == 0
    path = scene.root / "notes" / NOTE
    assert path.read_text() == NEW
    [receipt] = receipts(scene)
    assert receipt["kind"] == "create" and receipt["note"] == NOTE
    assert receipt["state"] == "applied" and receipt["applied"]
    assert receipt["before"] is None
    assert receipt["after"] == "sha256:" + hashlib.sha256(NEW.encode()).hexdigest()
    assert receipt["snapshot"] == ""
    assert not (scene.root / ".hippo" / "snapshots").exists()
    [applied] = scene.section("Applied")
    assert f"`{NOTE}`: applied; receipt .hippo/receipts/" in applied
    [review] = [c for c in scene.calls() if VERIFY_REVIEWER in (c["system"] or "")]
    assert "kind: create" in review["prompt"] and "# Run the tests with uv" in review["prompt"]


def test_a_rejected_create_writes_nothing(scene: Scene):
    scene.proposer_replies(create(), verdict=REJECT)
    assert scene.dream().code == 0
    assert not (scene.root / "notes" / "decisions").exists()
    [receipt] = receipts(scene)
    assert receipt["state"] == "rejected" and receipt["before"] is None


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        ("Testing.md", "note 'Testing.md' exists already; a create makes a new note"),
        ("Home.md", "note 'Home.md' exists already"),
        ("decisions", "is not a .md file"),
        ("Folder.md", "note 'Folder.md' exists already"),
        ("Testing.md/Sub.md", "is below 'Testing.md', which is a file, not a folder"),
        ("linked/New.md", "goes through a symbolic link"),
        ("../New.md", "is outside the notes folder"),
        (".drafts/New.md", "is hidden"),
    ],
)
def test_a_create_needs_a_path_where_nothing_is(scene: Scene, note: str, expected: str):
    (scene.root / "notes" / "Folder.md").mkdir()
    (scene.root / "notes" / "elsewhere").mkdir()
    os.symlink(scene.root / "notes" / "elsewhere", scene.root / "notes" / "linked")
    [failure] = failures_after(scene, create(note=note))
    assert expected in failure
    assert f"`{note}` (create)" in failure


def test_a_create_may_not_make_the_session_log(scene: Scene):
    [failure] = failures_after(scene, create(note="Session log.md"))
    assert "is the session log, which `hippo log` writes" in failure


UNQUOTED = "---\ntype: decision\nstatus: current\n---\n# Tests use a newer runner\n"
TITLE_ONLY = "# Run the tests with uv\n\nThe suite runs with `uv run pytest -q`.\n"


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (TITLE_ONLY, "new has no frontmatter: begin it with a --- block giving type and status"),
        (
            NEW.replace("# Run the tests with uv\n", "Run the tests with uv\n"),
            "new has no title: a line `# Title` after the frontmatter",
        ),
        (
            NEW.replace("type: decision", "type: [decision, policy]"),
            "new's frontmatter has no type: give one, such as `type: decision`",
        ),
        (
            NEW.replace("status: current\n", ""),
            "new's frontmatter has no status: give one, such as `status: current`",
        ),
        (
            NEW.replace("status: current", "status: [current"),
            "new's frontmatter is invalid: not valid YAML",
        ),
        ("---\ntype: decision\nstatus: current\n# No end\n", "new's frontmatter is invalid"),
        (
            NEW + "\nThe suite is fast now.\n" + "x" * 8192,
            "a new note may have at most 8192",
        ),
        (UNQUOTED, "new quotes no evidence turn word for word"),
    ],
)
def test_a_create_must_be_a_whole_note(scene: Scene, new: str, expected: str):
    [failure] = failures_after(scene, create(new=new))
    assert expected in failure
    assert not (scene.root / "notes" / "decisions").exists()


def test_a_create_has_an_empty_old(scene: Scene):
    [failure] = failures_after(scene, create(old="Run the tests"))
    assert "a create has an empty old" in failure


def test_every_problem_of_a_create_is_reported_at_once(scene: Scene):
    [failure] = failures_after(scene, create(new="Just some words.\n"))
    assert "new has no frontmatter" in failure and "new has no title" in failure
    assert "new quotes no evidence turn" in failure


class Strict:
    """A linter plugin with an error-level finding for any note without a `## Why`."""

    @hookimpl
    def hippo_lint_note(self, workspace, note):
        if "Why" in note.headings:
            return []
        return [Finding("error", "no reason", "a decision says why", note.path, 1)]


def test_a_create_runs_the_registered_linters(scene: Scene):
    plugins = load_plugins()
    plugins.pm.register(Strict(), name="strict")
    try:
        [failure] = failures_after(scene, create())
    finally:
        plugins.pm.unregister(name="strict")
    assert failure.endswith("new fails the linter: no reason: a decision says why")


def test_a_note_created_while_the_reviewer_thinks_is_left_alone(scene: Scene):
    path = scene.root / "notes" / NOTE
    path.parent.mkdir()
    mine = "# Mine\n\nA person wrote this note first.\n"
    scene.model(
        {"when": [PROPOSER], "reply": json.dumps([create()])},
        {"when": [VERIFY_REVIEWER], "reply": CONFIRM, "append_to": [str(path), mine]},
    )
    assert scene.dream().code == 0
    assert path.read_text() == mine
    [receipt] = receipts(scene)
    assert receipt["state"] == "note changed" and receipt["after"] is None
    assert receipt["before"] == "sha256:" + hashlib.sha256(mine.encode()).hexdigest()
    assert "a note was created at this path after the prompt was built" in receipt["detail"]


def test_two_creates_of_one_note_write_it_once(scene: Scene):
    second = create(new=NEW + "\nA second opinion, with `uv run pytest -q` too.\n")
    scene.proposer_replies(create(), second, verdict=CONFIRM)
    assert scene.dream().code == 0
    assert (scene.root / "notes" / NOTE).read_text() == NEW
    states = sorted(str(r["state"]) for r in receipts(scene))
    assert states == ["applied", "note changed"]


@pytest.fixture
def created(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path, claude_home: Path
) -> tuple[Scene, str]:
    scene = make_scene(make_workspace(), hippo, tmp_path, claude_home)
    scene.transcript()
    scene.proposer_replies(create(), verdict=CONFIRM)
    assert scene.dream().code == 0
    [receipt] = scene.files("receipts")
    return scene, receipt.stem


def revert_receipt(scene: Scene) -> dict[str, object]:
    [record] = [r for r in receipts(scene) if r["type"] == "revert"]
    return record


def test_revert_deletes_a_created_note(created: tuple[Scene, str]):
    scene, receipt = created
    path = scene.root / "notes" / NOTE
    run = scene.hippo("revert", receipt, cwd=scene.root)
    assert run.code == 0, run.err
    assert run.out.startswith(f"reverted notes/{NOTE}; receipt .hippo/receipts/")
    assert not path.exists()
    record = revert_receipt(scene)
    assert record["reverts"] == receipt and record["note"] == NOTE
    assert record["before"] == "sha256:" + hashlib.sha256(NEW.encode()).hexdigest()
    assert record["after"] is None and record["forced"] is False
    assert record["confirmed"] == "" and record["undone"] == NEW
    again = scene.hippo("revert", receipt, cwd=scene.root)
    assert again.code == 1 and "was already reverted by receipt" in again.err


def test_revert_of_an_edited_new_note_needs_force(created: tuple[Scene, str]):
    scene, receipt = created
    path = scene.root / "notes" / NOTE
    edited = path.read_text() + "\nA line a person added.\n"
    path.write_text(edited)
    run = scene.hippo("revert", receipt, cwd=scene.root)
    assert run.code == 1
    assert run.err.count("\n") == 1
    assert f"notes/{NOTE} was edited after the change" in run.err and "--force" in run.err
    assert path.read_text() == edited
    forced = scene.hippo("revert", receipt, "--force", cwd=scene.root)
    assert forced.code == 0, forced.err
    assert not path.exists()
    assert revert_receipt(scene)["forced"] is True


def test_revert_of_a_new_note_deleted_since(created: tuple[Scene, str]):
    scene, receipt = created
    (scene.root / "notes" / NOTE).unlink()
    run = scene.hippo("revert", receipt, cwd=scene.root)
    assert run.code == 1 and f"notes/{NOTE} was deleted after the change" in run.err
    forced = scene.hippo("revert", receipt, "--force", cwd=scene.root)
    assert forced.code == 0, forced.err
    record = revert_receipt(scene)
    assert record["before"] is None and record["after"] is None and record["forced"] is True


def test_a_reverted_create_is_not_made_again(created: tuple[Scene, str]):
    scene, receipt = created
    assert scene.hippo("revert", receipt, cwd=scene.root).code == 0
    scene.transcript(hours_ago=1)
    scene.proposer_replies(create(), verdict=CONFIRM)
    state = scene.root / ".hippo/dream-state.json"
    saved = json.loads(state.read_text())
    saved.pop("last_success")
    state.write_text(json.dumps(saved))
    assert scene.dream().code == 0
    failures = scene.section("Validation failures")
    assert any("the same change was reverted by" in f for f in failures)
    assert not (scene.root / "notes" / NOTE).exists()


def test_a_create_interrupted_before_the_write_is_recorded_so(created: tuple[Scene, str]):
    scene, receipt = created
    path = scene.root / ".hippo" / "receipts" / f"{receipt}.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "state": "applying", "applied": ""}))
    (scene.root / "notes" / NOTE).unlink()
    run = scene.hippo("revert", receipt, cwd=scene.root)
    assert run.code == 1 and "its change was not applied (interrupted)" in run.err
    settled = json.loads(path.read_text())
    assert settled["detail"] == "the run stopped before the note was written"
