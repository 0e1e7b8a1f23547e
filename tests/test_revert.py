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


def _dream_again(scene: Scene) -> str:
    """A new turn and a dream over it; the text verify's prompt shows as confirmed."""
    scene.transcript(hours_ago=1)
    scene.proposer_replies(replace())
    state = scene.root / ".hippo/dream-state.json"
    if state.exists():
        saved = json.loads(state.read_text())
        saved.pop("last_success")
        state.write_text(json.dumps(saved))
    assert scene.dream().code == 0
    [call] = [c for c in scene.calls() if PROPOSER in c["prompt"]][-1:]
    head = "## Text a human has confirmed"
    return call["prompt"].split(head, 1)[1].split("##", 1)[0]


def test_a_forged_revert_receipt_confirms_nothing(scene: Scene):
    """The poisoning review's F11: a committed revert receipt with no change and snapshot
    behind it neither makes its text true for verify nor bans the honest fix."""
    forged = {
        "id": "20261201T090000000000Z-beef",
        "type": "revert",
        "state": "reverted",
        "note": "Testing.md",
        "confirmed": "Run the tests with `make test` from the repository root.",
        "undone": "Run the tests with `uv run pytest -q` from the repository root.",
    }
    folder = scene.root / ".hippo" / "receipts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{forged['id']}.json").write_text(json.dumps(forged))
    assert "`make test`" not in _dream_again(scene)
    assert "uv run pytest -q" in scene.note.read_text()  # the honest fix landed
    listed = scene.hippo("revert", "--confirmed", cwd=scene.root).out
    assert f"{forged['id']}  Testing.md  not held true: it names no change it reverts" in listed


def test_a_confirmation_is_listed_and_can_be_withdrawn(applied: tuple[Scene, str]):
    scene, receipt = applied
    assert scene.hippo("revert", receipt, cwd=scene.root).code == 0
    [revert] = [p.stem for p in scene.files("receipts") if p.stem != receipt]
    listed = scene.hippo("revert", "--confirmed", cwd=scene.root).out
    assert listed == (
        f"{revert}  Testing.md  confirmed\n"
        "  Run the tests with `make test` from the repository root.\n"
    )
    done = scene.hippo("revert", "--withdraw", revert, cwd=scene.root)
    assert done.out == f"withdrawn: the confirmation of {revert} in Testing.md\n"
    again = scene.hippo("revert", "--withdraw", revert, cwd=scene.root)
    assert again.code == 1 and "its confirmation was withdrawn already" in again.err
    assert "`make test`" not in _dream_again(scene)  # verify may correct the text again
    assert "uv run pytest -q" in scene.note.read_text()


def test_a_revert_whose_snapshot_is_gone_confirms_nothing_here(applied: tuple[Scene, str]):
    """On a teammate's clone (the snapshot stays where the change was dreamed) a revert
    cannot be proven, and says so."""
    import shutil

    scene, receipt = applied
    assert scene.hippo("revert", receipt, cwd=scene.root).code == 0
    shutil.rmtree(scene.root / ".hippo" / "snapshots")
    listed = scene.hippo("revert", "--confirmed", cwd=scene.root).out
    assert f"not held true: the snapshot of {receipt} is not on this machine" in listed
    assert "`make test`" not in _dream_again(scene)


def test_revert_takes_one_of_its_ways(applied: tuple[Scene, str]):
    scene, receipt = applied
    for argv in ([], [receipt, "--confirmed"], ["--confirmed", "--withdraw", receipt]):
        run = scene.hippo("revert", *argv, cwd=scene.root)
        assert run.code == 2 and "give a RECEIPT to revert, or --confirmed" in run.err


#: A plugin that kills its own process just before the n-th step of a revert that writes a
#: receipt or a note under its final name ($HIPPO_TEST_KILL_AT): 1 the receipt, saying
#: reverting; 2 the note; 3 the receipt, settled.
KILLER = """
import os, signal

_at = int(os.environ.get("HIPPO_TEST_KILL_AT", "0"))
_seen = [0]


def _step(destination):
    path = os.fspath(destination)
    name = os.path.basename(path)
    if name.startswith(".") or not ("/receipts/" in path or "/notes/" in path):
        return
    _seen[0] += 1
    if _seen[0] == _at:
        os.kill(os.getpid(), signal.SIGKILL)


def _wrap(real, destination_at):
    def wrapped(*args, **kwargs):
        _step(args[destination_at])
        return real(*args, **kwargs)
    return wrapped


os.replace = _wrap(os.replace, 1)
os.link = _wrap(os.link, 1)
os.unlink = _wrap(os.unlink, 0)
"""


@pytest.mark.parametrize("step", [1, 2, 3])
def test_a_revert_killed_at_each_step_leaves_records_that_tell_the_truth(
    applied: tuple[Scene, str], tmp_path: Path, step: int
):
    import os
    import subprocess
    import sys

    from tests.test_hot_plugins import make_distribution

    scene, receipt = applied
    changed = scene.note.read_text()
    site = tmp_path / "killer-site"
    site.mkdir()
    make_distribution(site, "hippo_revert_killer", KILLER)
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "HIPPO_LOAD_PLUGINS": "hippo_revert_killer",
        "HIPPO_TEST_KILL_AT": str(step),
    }
    killed = subprocess.run(
        [sys.executable, "-m", "hippo_core", "revert", receipt],
        cwd=scene.root,
        env=env,
        capture_output=True,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    reverts = [
        json.loads(p.read_text())
        for p in scene.files("receipts")
        if json.loads(p.read_text())["type"] == "revert"
    ]
    # What the kill left: no receipt (step 1); a receipt saying reverting, the note as the
    # change left it (2) or as before it (3).
    assert [r["state"] for r in reverts] == ([] if step == 1 else ["reverting"])
    assert scene.note.read_text() == (TESTING if step == 3 else changed)
    doctor = scene.hippo("doctor", cwd=scene.root)
    assert ("was left reverting by a `hippo revert` that stopped" in doctor.out) == (step > 1)
    # The next revert settles it, then does what is still to do.
    again = scene.hippo("revert", receipt, cwd=scene.root)
    if step == 3:  # the note was back already: the revert is recorded as done
        assert again.code == 1 and "was already reverted by receipt" in again.err
    else:
        assert again.code == 0, again.err
    records = [json.loads(p.read_text()) for p in scene.files("receipts")]
    states = sorted(r["state"] for r in records if r["type"] == "revert")
    assert states == {1: ["reverted"], 2: ["interrupted", "reverted"], 3: ["reverted"]}[step]
    if step == 2:
        [stopped] = [r for r in records if r.get("state") == "interrupted"]
        assert stopped["detail"] == "the revert stopped before the note was written"
    if step == 3:
        [done] = [r for r in records if r.get("state") == "reverted"]
        assert done["detail"] == "recovered after a crash" and done["applied"]
    assert scene.note.read_text() == TESTING
    [change] = [r for r in records if r["type"] == "change"]
    assert change["state"] == "applied"  # what the change did; its revert says it was undone


def _edit_receipt(scene: Scene, receipt: str, **changes: object) -> None:
    path = scene.root / ".hippo/receipts" / f"{receipt}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize("note", ["../victim.md", "/ABSOLUTE", "Runbooks/../../victim.md"])
def test_a_receipt_edited_to_name_a_file_outside_the_notes_is_refused_even_forced(
    applied: tuple[Scene, str], tmp_path: Path, note: str
):
    """A hand-edited receipt with ``--force`` deleted or wrote ``notes_dir / note``."""
    scene, receipt = applied
    victim = scene.root / "victim.md"
    victim.write_text("not a note\n")
    note = note.replace("/ABSOLUTE", str(victim))
    # Reverting a created note deletes it; reverting a change writes the snapshot over it.
    for created in (True, False):
        _edit_receipt(scene, receipt, note=note, **({"before": None} if created else {}))
        run = scene.hippo("revert", receipt, "--force", cwd=scene.root)
        assert run.code == 1 and run.out == ""
        assert run.err.startswith(f"error: .hippo/receipts/{receipt}.json: note {note!r} ")
        assert "hippo revert changes only notes" in run.err
        assert victim.read_text() == "not a note\n"
        assert len(scene.files("receipts")) == 1  # no revert receipt either


def test_a_note_reached_through_a_link_out_of_the_notes_is_refused(
    applied: tuple[Scene, str], tmp_path: Path
):
    scene, receipt = applied
    away = tmp_path / "away"
    away.mkdir()
    (away / "Testing.md").write_text("elsewhere\n")
    (scene.root / "notes" / "Runbooks").symlink_to(away)
    _edit_receipt(scene, receipt, note="Runbooks/Testing.md")
    run = scene.hippo("revert", receipt, "--force", cwd=scene.root)
    assert run.code == 1 and "through a symbolic link" in run.err
    assert (away / "Testing.md").read_text() == "elsewhere\n"


def test_a_receipt_edited_to_restore_another_file_as_its_snapshot_is_refused(
    applied: tuple[Scene, str],
):
    """A snapshot path leading out of .hippo/snapshots/ would copy any file into the note."""
    scene, receipt = applied
    (scene.root / "secret.txt").write_text("a private key\n")
    changed = scene.note.read_text()
    _edit_receipt(scene, receipt, snapshot="secret.txt")
    run = scene.hippo("revert", receipt, "--force", cwd=scene.root)
    assert run.code == 1
    assert "the snapshot secret.txt is not in .hippo/snapshots/" in run.err
    assert scene.note.read_text() == changed
