"""A month of the sleep cycle in mechanical mode, on hippo's clock (``HIPPO_NOW``): a month
away ages nothing out before the catch-up sleep has drafted from it, an agent's last
message is not a fragment, a repeated fact is counted as evidence of its core, and the
dream leaves the cycle's cores to the cycle (issue 35, findings F5 and F6)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.sleep_scene import Sleepy, make_sleepy

#: Day 1 of the month, a Monday, as the month's simulation began.
DAY_1 = datetime(2027, 1, 4, tzinfo=UTC).timestamp()


def at(day: int, hour: float = 19) -> str:
    """``HIPPO_NOW`` for ``day`` of the month (day 61 is a month after day 30) at ``hour``."""
    return str(DAY_1 + (day - 1) * 86400 + hour * 3600)


@pytest.fixture
def night(make_workspace: WorkspaceMaker, hippo: HippoRunner) -> Sleepy:
    return make_sleepy(make_workspace(), hippo)


def sleep_on(night: Sleepy, *promote: str) -> dict[str, Any]:
    """A brief promoting ``promote``, then a nudge: the sleep's record."""
    hints = [arg for hint in promote for arg in ("--promote", hint)]
    night.ok("brief", "--summary", "what mattered today", *hints)
    slept = night.json("nudge")["check"]["slept"]
    assert slept is not None and slept["outcome"] != "failed", slept
    return dict(slept)


def approve_all(night: Sleepy) -> None:
    draft = night.draft()
    ops = [a for op in draft["operations"] for a in ("--approve", str(op["index"]))]
    night.ok("review", draft["id"], *ops)


def waiting(night: Sleepy) -> dict[str, str]:
    """The fragments waiting for a sleep: their words, by id."""
    return {f["id"]: f["content"] for f in night.json("remember", "list")}


def fates(night: Sleepy) -> dict[str, Any]:
    return dict(night.json("sleep", "audit")["fragments"])


# -- F5: a month away ages nothing out ---------------------------------------------------


def test_a_month_away_ages_nothing_out_until_the_catch_up_sleep_has_drafted(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch
):
    """The finding's month: nightly sleeps, a chain left open on day 30, a month away. The
    first tick back closes that chain; its tidy is not a catch-up by its draft, and the
    last sleep is a month old, so nothing ages out. The catch-up sleep drafts from what
    waited; only a sleep after it ages out what is still free and old."""
    monkeypatch.setenv("HIPPO_NOW", at(22))
    rollback = night.remember("helm history relay lists the revisions", "rollback")
    monkeypatch.setenv("HIPPO_NOW", at(25))
    port = night.remember("Local setup works; the API answers on port 8443", "onboarding")
    monkeypatch.setenv("HIPPO_NOW", at(26))
    office = night.remember("the printer on floor two jams", "office")
    monkeypatch.setenv("HIPPO_NOW", at(29))
    night.remember("Deploys run from main after CI passes", "deploy")
    assert sleep_on(night, "deploy")["catch_up"] is True  # the first sleep ever here
    approve_all(night)
    night.ok("sleep", "tick")
    monkeypatch.setenv("HIPPO_NOW", at(30))
    night.remember("the staging cluster is called relay-stg", "staging")
    assert sleep_on(night, "staging")["catch_up"] is False
    approve_all(night)  # landed, and nobody ticks before the month away: the chain is open
    old = {rollback, port, office}
    assert old <= set(waiting(night))

    monkeypatch.setenv("HIPPO_NOW", at(61, 8.67))  # the first tick back, 08:40
    ticked = night.json("sleep", "tick")
    assert ticked["tend"]["closed"] == [night.draft()["id"]]
    assert old <= set(waiting(night)), "the first tick back aged out what waited"
    assert fates(night)["counts"]["aged out"] == 0

    monkeypatch.setenv("HIPPO_NOW", at(61))
    slept = sleep_on(night, "rollback", "onboarding")
    assert slept["catch_up"] is True and "catch_up" in night.events()
    drafted = {i for op in night.draft()["operations"] for i in op["source_short_ids"]}
    assert drafted == {rollback, port}  # the catch-up sleep drafted from them
    assert office in waiting(night)  # no hint: it had its chance, and waits
    approve_all(night)
    night.ok("sleep", "tick")  # the catch-up chain closes: still nothing ages out
    assert set(waiting(night)) == {office}

    monkeypatch.setenv("HIPPO_NOW", at(62))
    assert sleep_on(night)["catch_up"] is False
    assert waiting(night) == {}  # a sleep after the catch-up ages out the old again
    told = fates(night)
    assert told["counts"]["aged out"] == 1 and told["counts"]["in a core"] == 4
    assert told["lost"] == [] and told["aged_early"] == []


def test_a_chain_that_ends_denied_after_the_month_away_ages_nothing_out(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch
):
    """The other way a chain closes on the way back: a denied operation waited for its
    redraft over the month, and the redraft comes back with nothing."""
    monkeypatch.setenv("HIPPO_NOW", at(25))
    old = night.remember("helm history relay lists the revisions", "rollback")
    monkeypatch.setenv("HIPPO_NOW", at(29))
    night.remember("deploys go out at ten", "deploy")
    sleep_on(night, "deploy")
    approve_all(night)
    night.ok("sleep", "tick")
    monkeypatch.setenv("HIPPO_NOW", at(30))
    night.remember("deploys go out at ten, from the release train", "deploy")
    sleep_on(night, "deploy")
    draft = night.draft()
    assert [op["kind"] for op in draft["operations"]] == ["attach"]
    night.ok("review", draft["id"], "--deny", "0=not a fact of the core")
    monkeypatch.setenv("HIPPO_NOW", at(61, 8.67))
    night.ok("sleep", "tick")  # redrafted as a core of its own
    night.ok("review", night.draft()["id"], "--deny", "0=not worth keeping")
    night.ok("sleep", "tend")  # nothing comes back: the chain ends denied and closes
    assert night.json("sleep", "audit")["chains"][0]["outcome"] == "ended denied"
    assert old in waiting(night)
    assert fates(night)["counts"]["aged out"] == 0


def test_the_audit_names_a_fragment_aged_out_before_its_catch_up(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch
):
    """Records an older hippo left: a fragment aged out by the first tick after a month
    away. The audit says so, and where its words still are."""
    monkeypatch.setenv("HIPPO_NOW", at(29))
    kept = night.remember("helm history relay lists the revisions", "rollback")
    sleep_on(night)
    store = night.root / ".hippo/sleep"
    fragment = store / "fragments" / f"{kept}.json"
    record = json.loads(fragment.read_text())
    record.update(pruned_at=float(at(61, 8.67)), pruned_because="aged out")
    (store / "pruned").mkdir(exist_ok=True)
    (store / "pruned" / fragment.name).write_text(json.dumps(record))
    fragment.unlink()
    line = {"id": kept, "fate": "aged out", "at": float(at(61, 8.67)), "why": "aged out"}
    with (store / "fates.jsonl").open("a") as handle:
        handle.write(json.dumps(line) + "\n")

    told = fates(night)
    assert told["counts"]["aged out"] == 1 and told["lost"] == []
    [early] = told["aged_early"]
    assert early["id"] == kept and early["at"] == "2027-03-05T08:40:12Z"
    assert early["last_sleep"] == "2027-02-01T19:00:00Z"
    assert early["kept_in"] == f".hippo/sleep/pruned/{kept}.json"
    run = night.run("sleep", "audit")
    assert run.code == 0
    assert "0 lost; 1 aged out before the catch-up sleep" in run.out
    assert (
        f"AGED OUT EARLY: fragment {kept} aged out at 2027-03-05T08:40:12Z, 31 days after the "
        "last sleep, before a catch-up sleep had drafted from it; this is a bug of hippo's. "
        f"Its words are in .hippo/sleep/pruned/{kept}.json: `hippo remember` them again to "
        "keep them"
    ) in run.err


# -- F6: what the cycle takes, and what it writes -----------------------------------------


def test_a_derived_handoff_is_not_a_fragment(
    night: Sleepy, claude_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """ingest gives a session that ended without a handoff its last answer as one
    (``handoff_derived``); that is not the session's own word about what it did, and the
    tick leaves it. The session's own handoff, declared later, is taken."""
    import io
    import sys

    session = ClaudeSession(claude_home, str(night.root))
    session.prompt("run the suite").answer("Everything passes.").write()
    payload = {
        "session_id": session.session,
        "transcript_path": str(session.path),
        "cwd": str(night.root),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    night.ok("hook", "session-start")
    payload.update(hook_event_name="SessionEnd", reason="exit")
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    night.ok("hook", "session-end")
    night.ok("ingest")
    [record] = [json.loads(p.read_text()) for p in (night.root / ".hippo/sessions").glob("*.json")]
    assert record["handoff"] == "Everything passes." and record["handoff_derived"] is True
    night.ok("sleep", "tick")
    assert waiting(night) == {}
    night.ok("session", "end", "--id", record["id"], "--handoff", "The suite is green on main.")
    night.ok("sleep", "tick")
    assert list(waiting(night).values()) == ["The suite is green on main."]


def test_a_repeated_fact_is_counted_as_evidence_of_its_core(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch
):
    """The month's example: `deploys run from main after CI is green` remembered on nine
    nights. The first makes the core; each later one is its evidence, counted at the sleep
    with a receipt: no satellite, no operation to review."""
    fact = "deploys run from main after CI is green"
    monkeypatch.setenv("HIPPO_NOW", at(1))
    night.remember(fact, "deploy")
    sleep_on(night, "deploy")
    approve_all(night)
    night.ok("sleep", "tick")
    [core] = night.cores()
    drafts = len(night.drafts())
    for day in range(2, 10):
        monkeypatch.setenv("HIPPO_NOW", at(day))
        night.remember(fact if day % 2 else "Deploys run from main after CI is green.", "deploy")
        slept = sleep_on(night, "deploy")
        assert slept["outcome"] == "counted" and slept["counted"] == 1 and slept["draft"] is None
        history = night.ok("sleep", "history").out.splitlines()[0]
        assert history.endswith(
            "counted: 1 fragment(s) in a core's own words, counted as its evidence"
        )
    assert len(night.drafts()) == drafts  # nothing for a person to review
    assert "nothing is waiting for a verdict" in night.ok("review").err
    text = night.cores()[core]
    assert "evidence_count: 9" in text and "updated: 2027-01-12" in text
    assert "## Evidence" not in text and text.count(fact) == 2  # its title and its text
    assert fates(night)["counts"] == {
        "pending": 0,
        "in a core": 9,
        "dropped": 0,
        "aged out": 0,
        "purged": 0,
    }
    receipts = sorted((night.root / ".hippo/receipts").glob("f*-evidence.json"))
    assert len(receipts) == 8
    last = json.loads(receipts[-1].read_text())
    assert last["kind"] == "evidence" and last["state"] == "applied"
    assert last["note"] == f"cores/{core}.md"
    assert night.ok("revert", last["id"]).code == 0  # undone like any change
    assert "evidence_count: 8" in night.cores()[core]
    # the fragment named in the core's words is purged with it when it is forgotten
    night.ok("forget", core, "--reason", "wrong", "--now")
    assert fates(night)["counts"]["purged"] == 9


@pytest.mark.parametrize(
    ("again", "counted"),
    [
        ("Deploys run from main", True),  # its words, in the core's order
        ("CI is green", True),  # says nothing the core does not
        ("deploys run from main after CI is green and the tag is signed", False),  # more
        ("deploys run from main after CI is green on GitLab", False),  # a value of its own
        ("CI is green, deploys run from main", False),  # not the core's words in its order
    ],
)
def test_the_cores_own_words_are_a_run_of_its_words(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch, again: str, counted: bool
):
    monkeypatch.setenv("HIPPO_NOW", at(1))
    night.remember("deploys run from main after CI is green", "deploy")
    sleep_on(night, "deploy")
    approve_all(night)
    night.ok("sleep", "tick")
    monkeypatch.setenv("HIPPO_NOW", at(2))
    night.remember(again, "deploy")
    slept = sleep_on(night, "deploy")
    assert (slept["outcome"] == "counted") is counted
    if not counted:
        assert [op["kind"] for op in night.draft()["operations"]] == ["attach"]


def test_a_repeat_of_a_satellite_is_counted_and_a_count_killed_midway_is_finished_once(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch
):
    """A satellite's words are the core's too. A sleep killed after the count was written
    and before its fragment was archived counts nothing twice: the next sleep finds the
    receipt and archives the fragment."""
    from hippo_packs.sleep.records import store

    monkeypatch.setenv("HIPPO_NOW", at(1))
    night.remember("deploys run from main after CI is green", "deploy")
    night.remember("deploys are tagged by the release bot", "deploy")
    sleep_on(night, "deploy")
    approve_all(night)
    night.ok("sleep", "tick")
    [core] = night.cores()
    assert ": deploys are tagged by the release bot" in night.cores()[core]  # a satellite

    class Killed(BaseException):
        pass

    real = store.prune

    def killed(*args: Any, **kwargs: Any) -> list[str]:
        raise Killed

    monkeypatch.setenv("HIPPO_NOW", at(2))
    repeat = night.remember("Deploys are tagged by the release bot.", "deploy")
    monkeypatch.setattr(store, "prune", killed)
    night.ok("brief", "--summary", "x", "--promote", "deploy")
    with pytest.raises(Killed):
        night.run("nudge")
    monkeypatch.setattr(store, "prune", real)
    assert "evidence_count: 3" in night.cores()[core]  # counted before the kill
    assert repeat in waiting(night)
    slept = night.json("nudge")["check"]["slept"]
    assert slept["outcome"] == "counted" and slept["counted"] == 1
    assert "evidence_count: 3" in night.cores()[core]  # counted once
    assert night.cores()[core].count("tagged by the release bot") == 1
    assert waiting(night) == {}


# -- F6: the dream leaves the cycle's cores to the cycle -----------------------------------


REDIS_CORE = (
    '---\ntype: core\nstatus: current\ntopic: "redis"\nevidence_count: 3\n'
    "updated: 2027-01-20\ncreated: 2027-01-10\n---\n"
    "# local Redis for the tests runs on port 6379\n\n"
    "local Redis for the tests runs on port 6379\n"
)


def test_the_dream_leaves_the_sleep_cycles_cores_alone(scene: Any):
    """Verify fixed a core's title line and not its body: a current core that contradicts
    itself, which the supersede rule no longer sees. The sleep pack keeps every per-note
    pass off its cores, and the report counts them by its reason."""
    from tests.dream_scene import PROPOSER, VERIFY_REVIEWER, replace

    assert scene.hippo("pack", "add", "sleep", cwd=scene.root).code == 0
    path = scene.root / "notes/cores/local-redis-for-the-tests-runs-on-port.md"
    path.parent.mkdir(parents=True)
    path.write_text(REDIS_CORE)
    (scene.root / "notes/cores/README.md").write_text("# Cores\n\nThe sleep cycle's notes.\n")
    scene.transcript(
        hours_ago=2,
        answer="local Redis for the tests runs on port 6380 now; I ran the Testing suite.",
    )
    fix = replace(
        note="cores/local-redis-for-the-tests-runs-on-port.md",
        old="# local Redis for the tests runs on port 6379",
        new="# local Redis for the tests runs on port 6380",
    )
    scene.model(
        {"when": [PROPOSER, "cores/local-redis"], "reply": json.dumps([fix])},
        {"when": [PROPOSER], "reply": "[]"},
        {"when": [VERIFY_REVIEWER], "reply": json.dumps({"verdict": "confirm", "notes": "ok"})},
    )
    run = scene.dream()
    assert run.code == 0, run.err
    assert path.read_text() == REDIS_CORE
    prompted = [c["prompt"] for c in scene.calls() if PROPOSER in c.get("prompt", "")]
    assert prompted and not any("runs on port 6379" in p for p in prompted)
    inputs = scene.section("Inputs")
    assert any(
        line.endswith(
            "core/verify: 1 note left alone by the plugin sleep: a core of the sleep cycle, "
            "which changes only through its reviewed drafts"
        )
        for line in inputs
    ), inputs
    assert not any("README" in line for line in inputs)  # not a core: verify may read it


def test_with_sleep_settings_it_cannot_read_the_dream_still_leaves_the_cores_alone(scene: Any):
    """A [sleep] table with a wrong value: the cycle refuses to run (doctor names the key),
    and the dream goes on, leaving the cores of the default folder alone."""
    from tests.dream_scene import PROPOSER

    assert scene.hippo("pack", "add", "sleep", cwd=scene.root).code == 0
    with (scene.root / ".hippo/settings.toml").open("a") as handle:
        handle.write('\n[sleep]\ninterval_seconds = "often"\n')
    assert scene.hippo("sleep", "tick", cwd=scene.root).code == 1
    path = scene.root / "notes/cores/local-redis-for-the-tests-runs-on-port.md"
    path.parent.mkdir(parents=True)
    path.write_text(REDIS_CORE)
    scene.transcript(hours_ago=2, answer="local Redis for the tests runs on port 6380 now.")
    scene.model({"when": [PROPOSER], "reply": "[]"})
    run = scene.dream()
    assert run.code == 0, run.err
    assert any("1 note left alone by the plugin sleep" in line for line in scene.section("Inputs"))


def test_an_old_value_a_satellite_still_says_is_a_change_not_a_repeat(night: Sleepy):
    """A satellite kept the old port when a reviewer reworded the core with the new one: a
    fragment with the old port again is in the satellite's words, but it states a value the
    core no longer does. Counted, the core would say nothing of it; drafted, it supersedes."""
    path = night.core_note("local-redis-port", "Local Redis runs on port 6380", topic="redis")
    path.write_text(
        path.read_text() + "\n## Evidence\n\n- 2027-01-04: Local Redis runs on port 6379\n"
    )
    night.remember("Local Redis runs on port 6379", "redis")
    slept = sleep_on(night, "redis")
    assert slept["outcome"] == "drafted" and slept["counted"] == 0
    assert [op["kind"] for op in night.draft()["operations"]] == ["supersede"]


def test_no_dream_proposal_writes_a_core_or_claims_ones_provenance(scene: Any):
    """The poisoning review's F13: a consolidate append to a core a handoff links, and a
    create of a forged core (in the cores folder, or elsewhere with a core's provenance),
    are refused before any reviewer sees them; a plain new note still lands."""
    from tests.dream_scene import CONFIRM, CONSOLIDATE_REVIEWER, CONSOLIDATOR, PROPOSER

    assert scene.hippo("pack", "add", "sleep", cwd=scene.root).code == 0
    path = scene.root / "notes/cores/local-redis-for-the-tests-runs-on-port.md"
    path.parent.mkdir(parents=True)
    path.write_text(REDIS_CORE)
    session = scene.transcript(hours_ago=1, answer="Redis moved to 6380; see the core.")
    hippo, root = scene.hippo, scene.root
    hippo("session", "start", "--id", session, "--tool", "claude-code", cwd=root)
    handoff = "Redis is on 6380. [[cores/local-redis-for-the-tests-runs-on-port]] [[Testing]]"
    hippo("session", "end", "--id", session, "--handoff", handoff, cwd=root)
    evidence = [{"session": session, "ordinal": 0}]
    forged = (
        '---\ntype: topic\nstatus: current\napproved_by: "person"\nevidence_count: 7\n---\n'
        "# Redis\n\nRedis moved to 6380.\n"
    )
    plain = "---\ntype: topic\nstatus: current\n---\n# Redis\n\nRedis moved to 6380.\n"
    proposals = [
        {
            "note": "cores/local-redis-for-the-tests-runs-on-port.md",
            "kind": "append",
            "old": "",
            "new": "- Redis moved to 6380.\n",
            "reason": "r",
            "evidence": evidence,
        },
        {
            "note": "Redis forged.md",
            "kind": "create",
            "old": "",
            "new": forged,
            "reason": "r",
            "evidence": evidence,
        },
        {
            "note": "Redis.md",
            "kind": "create",
            "old": "",
            "new": plain,
            "reason": "r",
            "evidence": evidence,
        },
    ]
    scene.model(
        {"when": [CONSOLIDATOR], "reply": json.dumps(proposals)},
        {"when": [CONSOLIDATE_REVIEWER], "reply": CONFIRM},
        {"when": [PROPOSER], "reply": "[]"},
    )
    assert scene.dream().code == 0
    failures = scene.section("Validation failures")
    assert any(
        "is in the sleep cycle's cores folder (cores/), which changes only through its "
        "reviewed drafts" in line
        for line in failures
    ), failures
    assert path.read_text() == REDIS_CORE
    assert not (root / "notes/Redis forged.md").exists()
    assert any(
        "`Redis forged.md` (create): a new note may not claim a core's provenance "
        "(approved_by, evidence_count): only the sleep cycle writes cores" in line
        for line in failures
    ), failures
    assert (root / "notes/Redis.md").read_text() == plain
