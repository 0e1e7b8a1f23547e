"""The block says what a model wrote (issue 36): a relevant line, or the entry section,
whose note a dream changed in the last ``dreamed_days`` days carries the date and the
receipt; a reverted change, an old one, or ``dreamed_days = 0`` leaves none."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.dream_scene import Scene, replace
from tests.pty_run import in_terminal

HIPPO = str(Path(sys.executable).parent / "hippo")


def relevant_line(scene: Scene) -> str:
    out = scene.hippo("context", "--task", "run the testing suite", cwd=scene.root).out
    [line] = [line for line in out.splitlines() if line.startswith("- Testing:")]
    return line


@pytest.fixture
def dreamed(scene: Scene) -> tuple[Scene, dict]:
    scene.transcript()
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    [receipt] = [json.loads(p.read_text()) for p in scene.files("receipts")]
    assert receipt["state"] == "applied"
    return scene, receipt


def test_a_dreamed_note_is_marked_with_its_date_and_receipt(
    dreamed: tuple[Scene, dict], monkeypatch: pytest.MonkeyPatch
):
    scene, receipt = dreamed
    mark = f" (dreamed {receipt['applied'][:10]}, receipt {receipt['id']})"
    assert relevant_line(scene).endswith(mark)
    monkeypatch.setenv("HIPPO_NOW", str(__import__("time").time() + 31 * 86400))
    assert not relevant_line(scene).endswith(mark)  # older than dreamed_days
    monkeypatch.delenv("HIPPO_NOW")
    settings = scene.root / ".hippo" / "settings.toml"
    settings.write_text(settings.read_text() + "dreamed_days = 0\n")
    assert not relevant_line(scene).endswith(mark)


def test_a_reverted_change_leaves_no_mark(dreamed: tuple[Scene, dict]):
    scene, receipt = dreamed
    assert scene.hippo("revert", receipt["id"], cwd=scene.root).code == 0
    assert "(dreamed " not in relevant_line(scene)


def test_the_entry_section_says_a_dream_changed_it(scene: Scene):
    home = scene.root / "notes" / "Home.md"
    home.write_text(
        "# Home\n\nThe shop's notes. Run the tests with `make test` from the repository root.\n"
        "Deploys go out from main after CI passes, and the on-call engineer watches them.\n"
        "\n## Links\n\nSee [[Testing]] for the suite and its fixtures, and ask in the team's\n"
        "channel before a change to the schema: migrations run once per release, by hand.\n"
    )
    scene.transcript()
    scene.proposer_replies(replace(note="Home.md"))
    assert scene.dream().code == 0
    # The entry note is a risky target: the reviewer's confirmation leaves it to a person.
    [review] = [json.loads(p.read_text()) for p in scene.files("reviews")]
    assert review["verdict"] == "pending"
    command = [HIPPO, "review", review["proposal"], "--confirm"]
    assert "applied: Home.md" in in_terminal(command, scene.root, dict(os.environ))
    [receipt] = [json.loads(p.read_text()) for p in scene.files("receipts")]
    block = scene.hippo("context", cwd=scene.root).out
    assert f"(Home.md: dreamed {receipt['applied'][:10]}, receipt {receipt['id']})\n" in block
