"""Two people's dreams meet in git (docs/teams.md): each clone dreams its own sessions, and
merging one into the other never conflicts on proposals, reviews or receipts; a note both
changed is git's usual merge. Real git, real clones, the real CLI and a scripted model."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import HippoRunner
from tests.dream_scene import TESTING, Scene, replace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SHARED = ["notes", ".hippo/packs", ".hippo/packs.lock", ".gitignore"]
DREAMED = [".hippo/proposals", ".hippo/reviews", ".hippo/receipts"]


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def test_two_dreams_merge_without_conflicts(
    scene: Scene, hippo: HippoRunner, tmp_path: Path, claude_home: Path
) -> None:
    alice = scene.root
    git(alice, "init", "-q", "-b", "main")
    git(alice, "add", *SHARED)
    git(alice, "commit", "-qm", "the team's notes")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(alice), str(bob))
    assert "info: setup: this machine has no sessions of this workspace yet" in (
        hippo("doctor", cwd=bob).out
    )
    (bob / ".hippo" / "settings.toml").write_text("")  # settings.toml: each their own model
    bobs = Scene(bob, hippo, tmp_path / "bob-model", claude_home)
    (tmp_path / "bob-model").mkdir()

    scene.transcript()
    scene.proposer_replies(replace())  # alice: the test command
    assert scene.dream().code == 0
    bobs.transcript(
        answer="I moved the flaky tests: quarantined tests are listed in QUARANTINE.md."
    )
    last = TESTING.splitlines()[-1]
    bobs.proposer_replies(
        replace(old=last, new=last + " Quarantined tests are listed in QUARANTINE.md.")
    )
    assert bobs.dream().code == 0, bobs.report()
    assert bobs.files("receipts"), bobs.report()
    for root in (alice, bob):
        git(root, "add", "notes", *DREAMED)
        git(root, "commit", "-qm", "dreamed")
    git(alice, "pull", "-q", "--no-rebase", "--no-edit", str(bob), "main")  # no conflict

    note = (alice / "notes" / "Testing.md").read_text()
    assert "`uv run pytest -q`" in note and "QUARANTINE.md" in note  # both changes
    receipts = sorted(p.name for p in (alice / ".hippo" / "receipts").glob("*.json"))
    assert len(receipts) == 2 and len(set(receipts)) == 2
    assert sorted(p.name for p in (alice / ".hippo" / "proposals").glob("*.json")) == receipts
    assert "0 errors" in hippo("doctor", cwd=alice).out
    assert git(alice, "status", "--porcelain", "--", *DREAMED, "notes") == ""
