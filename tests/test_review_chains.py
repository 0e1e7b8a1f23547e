"""The reviewer chain and the applier chain the design card promises (issue 38, item 4;
pack-author findings 3 and 4): a pass with two reviewers, each of which must confirm, and a
plugin's applier after hippo's own note write, run by ``hippo dream``, undone by ``hippo
revert``, every step in the receipt; a failing applier, and one killed mid-way.

The plugin is a real distribution installed in a folder of its own (tests/plugin_site.py)
and hippo runs in processes that find it; the model is the scripted one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dream_scene import (
    PROPOSER,
    TESTING,
    VERIFY_REVIEWER,
    Scene,
    replace,
)
from tests.plugin_site import make_distribution, run_hippo

PLUGIN = '''
"""A team's plugin: a house-style reviewer, an applier that logs what landed, and a reader
of the chunk's turns."""

import os
from pathlib import Path

from hippo_core import Item, Verdict, hookimpl


class HouseStyle:
    name = "house-style"

    def review(self, request):
        if "TODO" in request.proposal.new:
            return Verdict(self.name, "reject", "a note says what is, not what is left to do")
        if "RAISE" in request.proposal.new:
            raise ValueError("the style guide is unreadable")
        return Verdict(self.name, "confirm", "house style kept")


class Changelog:
    """Logs every change that lands, and every revert, in .hippo/changelog.txt."""

    name = "changelog"

    def _log(self, change, what):
        if os.environ.get("CHANGELOG_KILL"):
            os._exit(9)  # killed while it runs
        if os.environ.get("CHANGELOG_FAIL"):
            raise RuntimeError("the changelog is read-only")
        log = change.workspace.hippo_dir / "changelog.txt"
        with log.open("a", encoding="utf-8") as handle:
            who = change.verdict.reviewer if change.verdict else "-"
            handle.write(f"{what} {change.note} {change.before} {change.after} {who} "
                         f"{change.reverts or '-'}\\n")

    def apply(self, change):
        self._log(change, "applied")

    def revert(self, change):
        self._log(change, "reverted")


class Asked:
    """{{asked}}: each turn of the chunk, read through the public ReadContext."""

    essential = True

    def read(self, context):
        items = []
        for turn in context.turns():
            again = context.turn(turn.session, turn.ordinal)
            items.append(Item(turn.label, f"ASKED: {again.prompt}", turns=(again,)))
        return items


@hookimpl
def hippo_register_reviewers(register):
    register(HouseStyle())


@hookimpl
def hippo_register_appliers(register):
    register(Changelog())


@hookimpl
def hippo_register_readers(register):
    register("asked", Asked())
'''


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "hippo-team-style", "hippo_team_style", PLUGIN)
    return site


def chained(scene: Scene) -> None:
    """core's verify reviewed by the plugin's house-style, then by the model."""
    verify = scene.root / ".hippo" / "packs" / "core" / "passes" / "verify.toml"
    text = verify.read_text(encoding="utf-8")
    verify.write_text(
        text.replace('review = "model"', 'review = ["house-style", "model"]')
        if 'review = "model"' in text
        else text + 'review = ["house-style", "model"]\n',
        encoding="utf-8",
    )


def dream(scene: Scene, site: Path, **env: str):  # type: ignore[no-untyped-def]
    return run_hippo(["dream"], scene.root, site, None, **env)


def only(folder: Path) -> dict:  # type: ignore[type-arg]
    [path] = sorted(folder.glob("*.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def receipts(scene: Scene) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(p.read_text()) for p in scene.files("receipts")]


def test_two_reviewers_and_a_plugin_applier_land_a_change_and_revert_it(scene: Scene, site: Path):
    chained(scene)
    scene.transcript()
    scene.proposer_replies(replace())
    run = dream(scene, site)
    assert run.returncode == 0, run.stderr
    assert "uv run pytest -q" in scene.note.read_text(encoding="utf-8")
    verdicts = scene.section("Verdicts")
    assert verdicts[0].endswith(
        "confirm by house-style: house style kept, then confirm by model: The turn shows uv "
        "runs the tests."
    )
    [receipt] = receipts(scene)
    assert receipt["state"] == "applied" and receipt["verdict"] == "confirm"
    assert [(r["reviewer"], r["verdict"]) for r in receipt["reviews"]] == [
        ("house-style", "confirm"),
        ("model", "confirm"),
    ]
    assert "call" in receipt["reviews"][1] and "call" not in receipt["reviews"][0]
    assert receipt["appliers"] == [
        {"name": "note", "state": "done", "detail": ""},
        {"name": "changelog", "state": "done", "detail": ""},
    ]
    review = only(scene.root / ".hippo" / "reviews")
    assert [step["reviewer"] for step in review["steps"]] == ["house-style", "model"]
    assert review["persona_theme"] == "" and len(review["persona_sha256"]) == 64
    proposal = only(scene.root / ".hippo" / "proposals")
    assert proposal["review"] == ["house-style", "model"]
    log = (scene.root / ".hippo" / "changelog.txt").read_text(encoding="utf-8").splitlines()
    assert log == [f"applied Testing.md {receipt['before']} {receipt['after']} model -"]

    reverted = run_hippo(["revert", receipt["id"]], scene.root, site, None)
    assert reverted.returncode == 0, reverted.stderr
    assert scene.note.read_text(encoding="utf-8") == TESTING
    undo = next(r for r in receipts(scene) if r.get("type") == "revert")
    assert undo["state"] == "reverted"
    assert undo["appliers"] == [
        {"name": "note", "state": "done", "detail": ""},
        {"name": "changelog", "state": "done", "detail": ""},
    ]
    log = (scene.root / ".hippo" / "changelog.txt").read_text(encoding="utf-8").splitlines()
    assert log[1] == f"reverted Testing.md {receipt['after']} {receipt['before']} - {receipt['id']}"


def test_the_first_rejection_ends_the_chain(scene: Scene, site: Path):
    chained(scene)
    scene.transcript()
    scene.proposer_replies(replace(new="Run the tests with `uv run pytest -q`; TODO: CI."))
    run = dream(scene, site)
    assert run.returncode == 0, run.stderr
    assert scene.note.read_text(encoding="utf-8") == TESTING
    assert [c for c in scene.calls() if VERIFY_REVIEWER in c.get("system", "")] == []
    [receipt] = receipts(scene)
    assert (receipt["state"], receipt["reviewer"]["name"]) == ("rejected", "house-style")
    assert receipt["reviews"] == [
        {
            "reviewer": "house-style",
            "verdict": "reject",
            "notes": "a note says what is, not what is left to do",
        }
    ]
    assert "appliers" not in receipt  # nothing to land
    assert not (scene.root / ".hippo" / "changelog.txt").exists()


def test_a_reviewer_that_raises_rejects_naming_it(scene: Scene, site: Path):
    chained(scene)
    scene.transcript()
    scene.proposer_replies(replace(new="Run the tests with `uv run pytest -q` RAISE."))
    assert dream(scene, site).returncode == 0
    [receipt] = receipts(scene)
    assert receipt["state"] == "rejected"
    assert receipt["reviews"][0]["problem"] == (
        "the reviewer house-style raised ValueError: the style guide is unreadable"
    )


def test_a_failing_applier_is_recorded_and_the_note_keeps_the_change(scene: Scene, site: Path):
    chained(scene)
    scene.transcript()
    scene.proposer_replies(replace())
    run = dream(scene, site, CHANGELOG_FAIL="1")
    assert run.returncode == 0, run.stderr
    assert "uv run pytest -q" in scene.note.read_text(encoding="utf-8")
    [receipt] = receipts(scene)
    assert receipt["state"] == "applied"
    assert receipt["detail"] == (
        "the applier changelog failed: RuntimeError: the changelog is read-only"
    )
    assert receipt["appliers"][1] == {
        "name": "changelog",
        "state": "failed",
        "detail": "RuntimeError: the changelog is read-only",
    }
    assert (
        scene.section("Applied")[0]
        .split("; receipt ")[0]
        .endswith(
            "applied (the applier changelog failed: RuntimeError: the changelog is read-only)"
        )
    )
    # It can still be reverted; the applier failing again is a warning.
    reverted = run_hippo(["revert", receipt["id"]], scene.root, site, None, CHANGELOG_FAIL="1")
    assert reverted.returncode == 0
    assert reverted.stderr == (
        "warning: the applier changelog failed: RuntimeError: the changelog is read-only\n"
    )
    assert scene.note.read_text(encoding="utf-8") == TESTING


def test_an_applier_killed_mid_way_is_recorded_by_the_next_run(scene: Scene, site: Path):
    chained(scene)
    scene.transcript()
    scene.proposer_replies(replace())
    killed = dream(scene, site, CHANGELOG_KILL="1")
    assert killed.returncode == 9
    [receipt] = receipts(scene)
    # The note was written and its receipt says so; the applier that was running, too.
    assert receipt["state"] == "applied"
    assert receipt["appliers"][1]["state"] == "running"
    assert "uv run pytest -q" in scene.note.read_text(encoding="utf-8")
    doctor = run_hippo(["doctor"], scene.root, site, None)
    assert f".hippo/receipts/{receipt['id']}.json" in doctor.stdout
    again = dream(scene, site)
    assert again.returncode == 0, again.stderr
    [receipt] = receipts(scene)
    assert receipt["appliers"][1] == {
        "name": "changelog",
        "state": "interrupted",
        "detail": "the run stopped while it ran",
    }
    assert receipt["detail"] == "the run stopped while the applier changelog ran"
    assert (
        f"`{receipt['id']}`: left by an interrupted run, now applied (the applier changelog "
        "was interrupted)"
    ) in "\n".join(scene.section("Applied"))


def test_a_reader_reads_the_chunks_turns_through_the_public_context(scene: Scene, site: Path):
    """Finding 4: a plugin's reader gets a chunk's turns without hippo's private index."""
    verify = scene.root / ".hippo" / "packs" / "core" / "passes" / "verify.toml"
    reads = '["sessions", "notes", "turns", "human_confirmed"]'
    text = verify.read_text(encoding="utf-8")
    verify.write_text(text.replace(reads, reads[:-1] + ', "asked"]'), encoding="utf-8")
    prompt = scene.root / ".hippo" / "packs" / "core" / "prompts" / "verify.md"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\n{{asked}}\n", encoding="utf-8")
    scene.transcript()
    run = run_hippo(["dream", "--dry-run", "--show-prompts"], scene.root, site, None)
    assert run.returncode == 0, run.stderr
    assert "ASKED: How do we run the Testing suite now that the Makefile is gone?" in run.stdout


def test_a_chain_is_checked_when_the_pack_loads(scene: Scene, site: Path):
    verify = scene.root / ".hippo" / "packs" / "core" / "passes" / "verify.toml"
    base = verify.read_text(encoding="utf-8").replace('review = "model"\n', "")
    for value, problem in [
        (
            '["queue", "model"]',
            "review: 'queue' leaves the verdict to a person, so it can only "
            "end a chain; put it last",
        ),
        ('["model", "model"]', "review: 'model' is listed twice"),
        ("[]", "review: an empty list; name a reviewer, or several in order"),
        ('["house-stile", "model"]', "review: 'house-stile' is not a reviewer here"),
    ]:
        verify.write_text(base + f"review = {value}\n", encoding="utf-8")
        run = run_hippo(["dream", "--dry-run"], scene.root, site, None)
        assert run.returncode == 1
        assert problem in run.stderr, run.stderr
    # A chain ending with the queue: the house style confirms, a person decides later.
    verify.write_text(base + 'review = ["house-style", "queue"]\n', encoding="utf-8")
    scene.transcript()
    scene.model({"when": [PROPOSER], "reply": json.dumps([replace()])})
    assert dream(scene, site).returncode == 0
    [review] = [json.loads(p.read_text()) for p in scene.files("reviews")]
    assert review["verdict"] == "pending"
    assert [(s["reviewer"], s["verdict"]) for s in review["steps"]] == [
        ("house-style", "confirm"),
        ("queue", "pending"),
    ]
    proposal = review["proposal"]
    decided = run_hippo(["review", proposal, "--confirm"], scene.root, site, None)
    assert decided.returncode == 0, decided.stderr
    [receipt] = receipts(scene)
    assert [(r["reviewer"], r["verdict"]) for r in receipt["reviews"]] == [
        ("house-style", "confirm"),
        ("queue", "confirm"),
    ]
    assert [s["state"] for s in receipt["appliers"]] == ["done", "done"]
