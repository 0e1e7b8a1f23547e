"""Reviewing a draft: one `hippo review` for proposals and drafts, every rule of the store's
review with its message word for word, and nothing applied halfway."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.chat_server import ChatServer
from tests.sleep_scene import Sleepy, make_sleepy, model_settings

CORE = "deploys-run-from-main"


def drafted(night: Sleepy, chat: ChatServer, *operations: dict[str, Any]) -> str:
    night.remember("Deploys run from main after CI passes", "deploy")
    night.remember("we deploy from main now, never from release branches", "deploy")
    night.remember("deploy only when CI is green on main", "deploy")
    chat.operations(*operations)
    night.ok("brief", "--summary", "deploys")
    night.ok("nudge")
    return str(night.draft()["id"])


@pytest.fixture
def night(make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer) -> Sleepy:
    scene = make_sleepy(make_workspace(), hippo, model_settings(chat.url))
    scene.core_note(CORE, "Deploys run from main and only from main")
    return scene


THREE = (
    {"kind": "new_core", "content": "Deploys run from main after CI passes"},
    {"kind": "attach", "target_core_id": CORE, "content": "deploy only when CI is green on main"},
    {"kind": "new_core", "content": "never from release branches"},
)


def refused(night: Sleepy, draft: str, decisions: Any) -> str:
    before = json.dumps(night.draft()), night.cores()
    (night.root / "d.json").write_text(json.dumps(decisions))
    run = night.run("review", draft, "--decisions", str(night.root / "d.json"))
    assert run.code == 1, run.out
    assert (json.dumps(night.draft()), night.cores()) == before  # nothing landed
    assert run.err.startswith("error: ") and run.err.count("\n") == 1
    return run.err.removeprefix("error: ").strip()


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ([], "'decisions' must be a non-empty list of {op, verdict, critique?}"),
        ([{"op": 7, "verdict": "approve"}], "no operation 7 on draft '{draft}'"),
        (
            [{"op": 0, "verdict": "approve"}, {"op": 0, "verdict": "deny", "critique": "x"}],
            "operation 0 is decided twice in one review",
        ),
        ([{"op": 1, "verdict": "maybe"}], "operation 1: verdict must be approve or deny"),
        (
            [{"op": 0, "verdict": "approve"}, {"op": 1, "verdict": "deny", "critique": "  "}],
            "operation 1: a critique is required to deny",
        ),
        (
            [{"op": 0, "verdict": "approve", "edited_content": "mine"}],
            "edited_content is only allowed on a terminal draft; deny with a critique and let "
            "the hippocampus redraft",
        ),
        (
            [{"op": 2, "verdict": "approve", "edited_kind": "verbatim"}],
            "operation 2: edited_kind, edited_target_core_id and edited_restated_content are "
            "only allowed on a terminal draft; deny with a critique and let the hippocampus "
            "redraft",
        ),
    ],
)
def test_a_bad_decision_is_one_line_and_nothing_lands(
    night: Sleepy,
    chat: ChatServer,
    decisions: Any,
    message: str,
):
    draft = drafted(night, chat, *THREE)
    assert refused(night, draft, decisions) == message.replace("{draft}", draft)


def test_options_give_the_same_decisions(night: Sleepy, chat: ChatServer):
    draft = drafted(night, chat, *THREE)
    run = night.run("review", draft, "--deny", "1")
    assert run.code == 2 and "--deny 1='why'" in run.err
    assert night.run("review", draft, "--confirm").code == 2
    done = night.json("review", draft, "--approve", "0", "--deny", "1=not evidence for it")
    assert (done["approved"], done["denied"], done["pending"], done["status"]) == (
        1,
        1,
        1,
        "pending",
    )
    again = night.run("review", draft, "--approve", "0")
    assert again.code == 1 and again.err == "error: operation 0 is already approved\n"
    night.ok("review", draft, "--approve", "2")
    assert night.draft()["status"] == "reviewed"
    last = night.run("review", draft, "--approve", "1")
    assert last.err == f"error: draft '{draft}' is already reviewed\n"
    unknown = night.run("review", "d-nope", "--approve", "0")
    assert unknown.code == 1 and unknown.err.startswith("error: no proposal 'd-nope'")


def test_a_target_core_purged_meanwhile_is_refused(night: Sleepy, chat: ChatServer):
    draft = drafted(night, chat, *THREE)
    stone = night.json("forget", CORE, "--reason", "wrong", "--now")["tombstone"]["id"]
    message = refused(night, draft, [{"op": 1, "verdict": "approve"}])
    # the purge denied the attach, naming the tombstone, and took the core's id (made of
    # its words) out of the draft too
    assert message == "operation 1 is already denied"
    op = night.draft()["operations"][1]
    assert op["critique"] == f"its core was forgotten ({stone})"
    assert CORE not in json.dumps(night.draft())


def test_a_core_edited_by_hand_between_draft_and_review_is_refused(
    night: Sleepy,
    chat: ChatServer,
):
    draft = drafted(night, chat, *THREE)
    note = night.root / f"notes/cores/{CORE}.md"
    note.write_text(note.read_text() + "A person added this.\n")
    message = refused(
        night, draft, [{"op": 0, "verdict": "approve"}, {"op": 1, "verdict": "approve"}]
    )
    assert message.startswith(f"operation 1: core '{CORE}' (cores/{CORE}.md) was edited after")


def test_a_rewording_that_loses_the_core_needs_restate(night: Sleepy, chat: ChatServer):
    draft = drafted(
        night,
        chat,
        {
            "kind": "attach",
            "target_core_id": CORE,
            "content": "deploy only when CI is green on main",
            "restated_content": "deploy only when CI is green on main",
        },
        {
            "kind": "attach",
            "target_core_id": CORE,
            "content": "we deploy from main now",
            "restated_content": "never from release branches",
        },
    )
    # the first restatement equals the episode: dropped at the draft
    assert "restated_content" not in night.draft()["operations"][0]
    message = refused(night, draft, [{"op": 1, "verdict": "approve"}])
    assert message.startswith(
        f"operation 1: approving this would REPLACE the wording of core {CORE}"
    )
    assert '"restate": false' in message and "keeps only 25% of the core's words" in message
    view = night.json("review", draft)
    assert view["operations"][1]["restate_check"].startswith("REFUSED as it stands")
    (night.root / "d.json").write_text(
        json.dumps([{"op": 1, "verdict": "approve", "restate": False}])
    )
    night.ok("review", draft, "--decisions", str(night.root / "d.json"))
    core = night.cores()[CORE]
    assert (
        "\nDeploys run from main and only from main\n" in core
        and ": we deploy from main now\n" in core
    )
    op = night.draft()["operations"][1]
    assert op["review_edits"] == {"restated_content": "never from release branches"}


def test_an_attach_to_a_new_core_of_the_same_draft_needs_that_core(
    night: Sleepy,
    chat: ChatServer,
):
    draft = drafted(
        night,
        chat,
        {"kind": "new_core", "content": "Deploys run from main after CI passes"},
        {"kind": "attach", "target_op": 0, "content": "deploy only when CI is green on main"},
    )
    message = refused(night, draft, [{"op": 1, "verdict": "approve"}])
    assert message == (
        "operation 1 attaches to operation 0's new core; approve operation 0 too, or deny "
        "operation 1"
    )
    # in either order, the core lands first and the attach names it
    night.ok("review", draft, "--approve", "1", "--approve", "0")
    ops = night.draft()["operations"]
    assert ops[1]["target_core_id"] == ops[0]["long_term_id"] and ops[1]["target_op"] == 0
    assert ": deploy only when CI is green on main" in night.cores()[ops[0]["long_term_id"]]


def test_a_denied_core_takes_its_attach_with_it(night: Sleepy, chat: ChatServer):
    draft = drafted(
        night,
        chat,
        {"kind": "new_core", "content": "Deploys run from main after CI passes"},
        {"kind": "supersede", "target_op": 0, "content": "deploy only when CI is green on main"},
    )
    night.ok("review", draft, "--deny", "0=no")
    message = refused(night, draft, [{"op": 1, "verdict": "approve"}])
    assert message == (
        "operation 1 supersedes operation 0's new core, and operation 0 was denied, so that "
        "core does not exist; deny operation 1"
    )


def test_a_core_denied_in_the_same_review_takes_its_attach_with_it(night: Sleepy, chat: ChatServer):
    """Deny a new core and approve the attach to it in one review: refused as a whole, so
    nothing lands halfway (not the denial either)."""
    draft = drafted(
        night,
        chat,
        {"kind": "new_core", "content": "Deploys run from main after CI passes"},
        {"kind": "attach", "target_op": 0, "content": "deploy only when CI is green on main"},
    )
    decisions = [{"op": 0, "verdict": "deny", "critique": "no"}, {"op": 1, "verdict": "approve"}]
    assert refused(night, draft, decisions) == (
        "operation 1 attaches to operation 0's new core, and operation 0 was denied, so that "
        "core does not exist; deny operation 1"
    )


def test_a_supersede_lands_two_changes_each_revertible(night: Sleepy, chat: ChatServer):
    draft = drafted(
        night,
        chat,
        {
            "kind": "supersede",
            "target_core_id": CORE,
            "content": "deploy only when CI is green on main",
        },
    )
    night.ok("review", draft, "--approve", "0")
    cores = night.cores()
    new = night.draft()["operations"][0]["long_term_id"]
    assert f'superseded_by: "{new}"' in cores[CORE] and f'supersedes: "{CORE}"' in cores[new]
    assert (night.root / f".hippo/receipts/{draft}-op0-mark.json").exists()
    listed = night.ok("sleep", "cores").out
    assert f"{CORE}  evidence 2 (superseded by {new})" in listed
    night.ok("revert", f"{draft}-op0-mark")
    assert "superseded_by" not in night.cores()[CORE]


def test_a_landing_killed_midway_is_finished_by_the_next_run(
    night: Sleepy,
    chat: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
):
    import hippo_packs.sleep.cycle.landing as landing

    class Killed(BaseException):
        """Stands in for a kill: nothing after it runs, and nobody catches it."""

    draft = drafted(night, chat, *THREE)
    real = landing.settle
    calls = []

    def dies_on_the_second(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise Killed
        return real(*args, **kwargs)

    monkeypatch.setattr(landing, "settle", dies_on_the_second)
    with pytest.raises(Killed):
        night.run("review", draft, "--approve", "0", "--approve", "1", "--approve", "2")
    statuses = [op["status"] for op in night.draft()["operations"]]
    assert statuses == ["approved", "approving", "approving"]  # the records say what happened
    monkeypatch.setattr(landing, "settle", real)
    assert "interrupted while it landed" in night.json("sleep", "status")["say"]
    night.ok("sleep", "tick")
    assert [op["status"] for op in night.draft()["operations"]] == ["approved"] * 3
    assert night.draft()["status"] == "closed"  # landed, then the tick's tend closed it
    assert len(night.cores()) == 3
    assert ": deploy only when CI is green on main" in night.cores()[CORE]
    receipts = sorted(p.name for p in (night.root / ".hippo/receipts").glob(f"{draft}*"))
    assert receipts == [f"{draft}-op0.json", f"{draft}-op1.json", f"{draft}-op2.json"]


def test_a_landing_killed_after_its_receipt_is_not_landed_twice(
    night: Sleepy,
    chat: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
):
    """Killed after the applier wrote the note and its receipt, before the draft said
    approved: the next run goes by the receipt, and neither lands the core again nor
    writes over the receipt."""
    import hippo_packs.sleep.cycle.landing as landing

    class Killed(BaseException):
        """Stands in for a kill: nothing after it runs, and nobody catches it."""

    draft = drafted(night, chat, THREE[0])
    real = landing.settle

    def dies_after_settling(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise Killed

    monkeypatch.setattr(landing, "settle", dies_after_settling)
    with pytest.raises(Killed):
        night.run("review", draft, "--approve", "0")
    monkeypatch.setattr(landing, "settle", real)
    receipt = night.root / f".hippo/receipts/{draft}-op0.json"
    written = receipt.read_bytes()
    assert json.loads(written)["state"] == "applied"
    assert night.draft()["operations"][0]["status"] == "approving"
    night.ok("sleep", "tick")
    assert night.draft()["operations"][0]["status"] == "approved"
    assert receipt.read_bytes() == written  # the receipt of the landing, as it was
    assert sorted(night.cores()) == sorted([CORE, night.draft()["operations"][0]["long_term_id"]])


def test_forgetting_a_core_takes_its_earlier_words_out_of_the_snapshots(
    night: Sleepy, chat: ChatServer
):
    """An attach snapshots the core's earlier text; a purge leaves no file of hippo's
    records holding it (the notes index's cache is refreshed apart)."""
    draft = drafted(night, chat, THREE[1])
    night.ok("review", draft, "--approve", "0")
    snapshots = list((night.root / ".hippo/snapshots").rglob("*.md"))
    earlier = "Deploys run from main and only from main"
    assert [s.name for s in snapshots] == [f"{CORE}.md"] and earlier in snapshots[0].read_text()
    night.ok("forget", CORE, "--reason", "wrong", "--now")
    kept = [
        path
        for path in (night.root / ".hippo").rglob("*")
        if path.is_file()
        and "cache" not in path.relative_to(night.root).parts
        and earlier.encode() in path.read_bytes()
    ]
    assert kept == [] and not list((night.root / ".hippo/snapshots").rglob("*.md"))


def test_proposals_and_drafts_share_one_review_list(night: Sleepy, chat: ChatServer):
    draft = drafted(night, chat, *THREE)
    rows = night.json("review")
    assert [(r["type"], r["id"]) for r in rows] == [("draft", draft)]
    assert night.ok("review").out.startswith(f"{draft}  draft  attempt 1  3 operation(s) on deploy")


def test_the_terminal_attempt_takes_the_reviewers_own_kind_and_target(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer
):
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url, max_attempts=1))
    night.core_note(CORE, "Deploys run from main and only from main")
    draft = drafted(
        night,
        chat,
        {"kind": "supersede", "target_core_id": CORE, "content": "deploy only when CI is green"},
        {"kind": "new_core", "content": "never from release branches"},
    )
    assert night.draft()["terminal"] is True  # max_attempts 1: the first attempt is the last
    wrong = refused(night, draft, [{"op": 1, "verdict": "approve", "edited_kind": "attach"}])
    assert wrong == "operation 1: a attach needs a core; give edited_target_core_id"
    sideways = refused(night, draft, [{"op": 1, "verdict": "approve", "edited_kind": "sideways"}])
    assert sideways == (
        "operation 1: edited_kind must be one of new_core, attach, supersede, verbatim"
    )
    blank = refused(night, draft, [{"op": 1, "verdict": "approve", "edited_content": " "}])
    assert blank == "edited_content must be non-empty; omit it to apply as-is"
    decisions = [
        {"op": 0, "verdict": "approve", "edited_kind": "new_core"},
        {"op": 1, "verdict": "approve", "edited_kind": "attach", "edited_target_core_id": CORE},
    ]
    (night.root / "d.json").write_text(json.dumps(decisions))
    night.ok("review", draft, "--decisions", str(night.root / "d.json"))
    ops = night.draft()["operations"]
    assert ops[0]["review_edits"] == {"kind": "supersede", "target_core_id": CORE}
    assert "superseded_by" not in night.cores()[CORE]
    assert ": never from release branches\n" in night.cores()[CORE]
    assert ops[1]["long_term_id"] == CORE


@pytest.mark.parametrize("edited", ["../../x", "../proposals/y", ".hidden"])
def test_a_draft_whose_id_was_edited_by_hand_is_refused_and_nothing_written_outside(
    night: Sleepy, chat: ChatServer, edited: str
) -> None:
    """A draft's id names the file it is saved to (and its proposals' ids): ``../../x``
    wrote ``.hippo/x.json``."""
    draft = drafted(night, chat, THREE[0])
    path = night.root / ".hippo/sleep/drafts" / f"{draft}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "id": edited}))
    before = sorted(p for p in night.root.rglob("*") if ".hippo/cache" not in p.as_posix())

    run = night.run("review", draft, "--approve", "0")

    assert run.code == 1 and len(run.err.splitlines()) == 1, run.err
    assert f"drafts: {edited!r} is not a record id" in run.err
    after = sorted(p for p in night.root.rglob("*") if ".hippo/cache" not in p.as_posix())
    assert [p for p in after if p not in before and "/.hippo/sleep/" not in p.as_posix()] == []
    assert night.cores() == {CORE: night.cores()[CORE]}  # nothing landed
