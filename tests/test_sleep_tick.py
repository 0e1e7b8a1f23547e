"""The tick (tend, then check), bedtime and the brief request, forgetting, the settings,
and the sleep pack's place in the workspace: init, doctor, context and dream."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from hippo_core.workspace.folder import Workspace
from hippo_packs.sleep.cycle.purge import tombstone_id
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.chat_server import ChatServer
from tests.sleep_scene import Sleepy, make_sleepy, model_settings

CORE = "deploys-run-from-main"


@pytest.fixture
def night(make_workspace: WorkspaceMaker, hippo: HippoRunner) -> Sleepy:
    return make_sleepy(make_workspace(), hippo)


def denied_chain(night: Sleepy, chat: ChatServer) -> str:
    for text in ("Deploys run from main", "deploy from main", "main is where deploys run"):
        night.remember(text, "deploy")
    chat.operations({"kind": "new_core", "content": "Deploys run from main"}, repeat=1)
    chat.operations({"kind": "new_core", "content": "deploy from main, always"})
    night.ok("brief", "--summary", "deploys")
    night.ok("nudge")
    draft = str(night.draft()["id"])
    night.ok("review", draft, "--deny", "0=say where CI runs")
    return draft


def test_with_the_tend_cycle_on_redrafts_wait_for_the_interval(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    chat: ChatServer,
):
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url))
    draft = denied_chain(night, chat)
    night.set_state(last_redraft=time.time())
    waited = night.json("sleep", "tick")["tend"]
    assert waited["deferred"] == [draft] and waited["resubmitted"] == []
    night.set_state(last_redraft=time.time() - 601)
    assert night.json("sleep", "tick")["tend"]["resubmitted"] == [night.draft()["id"]]
    assert "tend cycle" not in night.json("sleep", "status")["say"]


def test_with_the_tend_cycle_off_redrafts_wait_for_bedtime_or_the_asking(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    chat: ChatServer,
):
    settings = model_settings(chat.url, tend_cycle=False)
    night = make_sleepy(make_workspace(), hippo, settings)
    draft = denied_chain(night, chat)
    night.set_state(last_redraft=0)
    assert night.json("sleep", "tick")["tend"]["deferred"] == [draft]
    status = night.json("sleep", "status")
    assert status["tend_cycle"] is False and status["last_tend"]["deferred"] == [draft]
    assert "tend cycle is off" in status["say"] and "tend_now" in status["say"]
    # the open chain's own brief does not count as a new one; a new brief does
    night.ok("brief", "--summary", "more deploys")
    assert night.json("sleep", "tick")["tend"]["resubmitted"] == [night.draft()["id"]]


def test_tend_by_hand_always_redrafts(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    chat: ChatServer,
):
    settings = model_settings(chat.url, tend_cycle=False)
    night = make_sleepy(make_workspace(), hippo, settings)
    denied_chain(night, chat)
    done = night.json("sleep", "tend")
    assert done["resubmitted"] == [night.draft()["id"]]


def test_a_nudge_redrafts_once_whatever_the_clock(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    chat: ChatServer,
):
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url))
    denied_chain(night, chat)
    night.set_state(last_redraft=time.time())
    nudged = night.json("nudge")
    assert nudged["woke"] is True and len(nudged["tend"]["resubmitted"]) == 1
    assert "nudged" in night.events() and "nudged" not in night.state()


def test_past_bedtime_the_misses_ask_for_a_brief_once(night: Sleepy):
    long_ago = time.time() - 80_000
    night.set_state(last_sleep=long_ago)
    for _ in range(2):
        assert "asked_for_brief" not in night.json("sleep", "tick")["check"]
    third = night.json("sleep", "tick")["check"]
    assert third["misses"] == 3 and third["asked_for_brief"] is True
    intents = json.loads((night.root / ".hippo/sleep/intents.json").read_text())["intents"]
    assert [i["topic"] for i in intents] == ["hippocampus, brief"]
    for _ in range(3):
        night.ok("sleep", "tick")
    intents = json.loads((night.root / ".hippo/sleep/intents.json").read_text())["intents"]
    assert len(intents) == 1  # asked again (the event), but no second note
    assert night.events().count("brief_requested") == 2
    status = night.json("sleep", "status")
    assert status["brief_wanted"] is True and "Past bedtime" in status["say"]


def test_bedtime_is_the_interval_after_the_last_sleep_or_the_next_wall_clock_time(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo, "[sleep]\ninterval_seconds = 100\n")
    night.set_state(last_sleep=1_000_000.0)
    assert night.json("sleep", "status")["bedtime_at"] == "1970-01-12T13:56:40Z"  # floor 600
    clock = make_sleepy(make_workspace(), hippo, '[sleep]\nat = "03:30"\n')
    clock.set_state(last_sleep=time.time())
    due = clock.json("sleep", "status")["bedtime_at"]
    from datetime import datetime

    local = datetime.fromisoformat(due.replace("Z", "+00:00")).astimezone()
    assert (local.hour, local.minute) == (3, 30)


def test_a_month_away_purges_but_sleeps_not(night: Sleepy):
    night.core_note(CORE, "Deploys run from main")
    night.ok("forget", CORE, "--reason", "it was wrong")
    night.set_state(last_sleep=time.time() - 30 * 86400)
    done = night.json("sleep", "tick")
    assert done["check"]["purged"] == [tombstone_id(CORE)] and done["check"]["slept"] is None


def test_the_first_sleep_back_is_a_catch_up_that_ages_nothing_out(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo, "[sleep]\nshort_term_seconds = 1\n")
    night.remember("an old fragment", "old")
    time.sleep(1.1)
    night.ok("brief", "--summary", "x")
    slept = night.json("nudge")["check"]["slept"]
    assert slept["catch_up"] is True and "catch_up" in night.events()
    assert len(night.json("remember", "list")) == 1  # not aged out on a catch-up
    night.set_state(last_sleep=time.time() - 10)
    night.ok("brief", "--summary", "y")
    night.ok("nudge")
    assert night.json("remember", "list") == []  # a normal sleep ages it out
    assert (night.root / ".hippo/sleep/pruned").is_dir()


def test_a_purge_leaves_a_tombstone_and_never_the_content(night: Sleepy):
    for text in ("Deploys run from main", "deploy from main", "main is where deploys run"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys")
    night.ok("nudge")
    draft = night.draft()["id"]
    night.ok("review", draft, "--approve", "0", "--approve", "1")
    core = night.draft()["operations"][0]["long_term_id"]
    assert night.run("forget", core).code == 1
    assert "a 'reason' is required" in night.run("forget", core).err
    assert "no long-term entry 'Home'" in night.run("forget", "Home", "--reason", "x").err
    flagged = night.ok("forget", core, "--reason", "private")
    assert "purged at the next tick" in flagged.out
    assert night.cores()  # a flag alone removes nothing
    stone_id = tombstone_id(core)  # not the core's id: it is made of the words forgotten
    assert night.json("sleep", "tick")["check"]["purged"] == [stone_id]
    assert night.cores() == {}
    stone = json.loads((night.root / f".hippo/sleep/tombstones/{stone_id}.json").read_text())
    assert stone["reason"] == "private" and stone["state"] == "done" and stone["kind"] == "core"
    assert stone["cascade"]["fragments_purged"] == 3 and stone["cascade"]["drafts_scrubbed"] == 1
    assert not (night.root / ".hippo/sleep/purging").exists() or not list(
        (night.root / ".hippo/sleep/purging").iterdir()
    )  # the working plan goes with the purge
    packs = night.root / ".hippo" / "packs"  # the pack's own eval cases name such a core
    everything = b"".join(
        p.read_bytes()
        for p in night.root.joinpath(".hippo").rglob("*")
        if p.is_file() and not p.is_relative_to(packs) and p.name != "packs.lock"
    )
    assert b"main is where deploys run" not in everything  # the content is nowhere
    assert night.draft()["operations"][0]["content"] == "[purged]"
    assert night.draft()["summary"] == "[purged in part]"
    assert night.draft()["operations"][0]["status"] == "approved"  # verdicts kept
    purged = [e for e in night.json("sleep", "events") if e["event"] == "purged"]
    assert purged[0]["ids"] == [stone_id] and set(purged[0]) == {"id", "event", "at", "ids"}
    assert core.encode() not in everything  # nor its id, which is made of its words
    assert night.json("sleep", "audit")["fragments"]["counts"]["purged"] == 3
    again = night.ok("forget", core, "--reason", "again", "--now")
    assert again.out.startswith(f"already forgotten: tombstone {stone_id}")


def test_forget_now_purges_at_once(night: Sleepy):
    night.core_note(CORE, "Deploys run from main")
    done = night.json("forget", f"notes/cores/{CORE}.md", "--reason", "emergency", "--now")
    assert done["tombstone"]["id"] == tombstone_id(CORE) and night.cores() == {}


def test_handoffs_arrive_as_fragments_once(night: Sleepy):
    night.ok("session", "start", "--id", "s1", "--task", "fix deploys")
    night.ok("session", "end", "--handoff", "Moved deploys to main; see [[Deploy]].")
    night.ok("sleep", "tick")
    night.ok("sleep", "tick")
    fragments = night.json("remember", "list")
    assert [(f["content"], f["topic"], f["source"]) for f in fragments] == [
        ("Moved deploys to main; see [[Deploy]].", "Deploy", "handoff")
    ]


def test_the_open_loops_are_in_the_context_block_within_the_budget(night: Sleepy):
    night.set_state(last_sleep=time.time() - 80_000)
    for _ in range(3):
        night.ok("sleep", "tick")
    block = night.ok("context").out
    assert "open loops:\n- I see you're looking tired, let's get ready for bed" in block
    # the open loops are a required part: they count against the budget like the entry note
    over = night.run("context", "--budget", "20")
    assert over.code == 1 and over.err.startswith("error: context over budget: ")


def test_settings_are_clamped_and_a_misplaced_key_is_named(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    from hippo_core.plugins.manager import load_plugins
    from hippo_packs.sleep.config import load

    settings = (
        "[sleep]\nmax_attempts = 999\ntick_seconds = 1\ntend_interval_seconds = 5\n"
        "interval_seconds = 10\nmax_tokens = 4096\nbedtime = 3\n[sleep.model]\nmax_token = 1\n"
    )
    night = make_sleepy(make_workspace(), hippo, settings)
    found, warnings = load(Workspace.open(night.root), load_plugins())
    assert (found.max_attempts, found.tick_seconds, found.tend_interval_seconds) == (10, 30, 60)
    assert found.interval_seconds == 600 and found.model.max_tokens == 2000
    assert warnings == [
        "'sleep.max_tokens' is not a setting and was ignored - did you mean "
        "sleep.model.max_tokens?",
        "'sleep.bedtime' is not a setting and was ignored",
        "'sleep.model.max_token' is not a setting and was ignored - did you mean "
        "sleep.model.max_tokens?",
        # clamped as the cycle does (the spec's floors), never in silence
        "'sleep.max_attempts' = 999 is out of its range and is read as 10",
        "'sleep.tick_seconds' = 1 is out of its range and is read as 30",
        "'sleep.tend_interval_seconds' = 5 is out of its range and is read as 60",
        "'sleep.interval_seconds' = 10 is out of its range and is read as 600",
    ]
    status = night.run("sleep", "status")
    assert status.code == 0 and status.err.splitlines()[0] == warnings[0]
    assert any("sleep.bedtime" in line for line in night.ok("doctor").out.splitlines())


@pytest.mark.parametrize("cores_dir", ["../escaped", "/tmp/escaped", "cores/../../escaped", ""])
def test_a_cores_dir_outside_the_notes_is_refused(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, cores_dir: str
) -> None:
    night = make_sleepy(make_workspace(), hippo, f"[sleep]\ncores_dir = {cores_dir!r}\n")
    for command in (("sleep", "status"), ("remember", "deploys run from main")):
        run = night.run(*command)
        assert run.code == 1 and run.err.count("\n") == 1, run.err
        assert "sleep.cores_dir" in run.err and "a relative folder inside notes_dir" in run.err
    assert not list(night.root.parent.glob("escaped")) and not Path("/tmp/escaped").exists()


@pytest.mark.parametrize(
    ("settings", "heartbeat"),
    [
        ("", 300),
        ("[sleep]\ntend_interval_seconds = 120\n", 120),
        ("[sleep]\ntend_cycle = false\ntend_interval_seconds = 120\n", 300),
    ],
)
def test_the_heartbeat(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, settings: str, heartbeat: int
):
    night = make_sleepy(make_workspace(), hippo, settings)
    assert night.json("sleep", "status")["heartbeat_seconds"] == heartbeat


def test_a_bad_value_is_one_line(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    night = make_sleepy(make_workspace(), hippo, '[sleep]\nmax_attempts = "three"\n')
    run = night.run("sleep", "status")
    assert run.code == 1 and run.err.startswith("error: .hippo/settings.toml: sleep.max_attempts:")
    late = make_sleepy(make_workspace(), hippo, '[sleep]\nat = "25:00"\n')
    assert "sleep.at: must be a local time as HH:MM" in late.run("sleep", "status").err


def test_bad_input_to_the_commands(night: Sleepy):
    empty = night.run("brief", "--summary", "  ")
    assert empty.code == 1 and "a brief needs a summary" in empty.err
    assert night.run("remember", " ").code == 1
    assert night.run("remember", "list", "--topic", "x").code == 2
    assert not (night.root / ".hippo/sleep/briefs").exists() or not any(
        (night.root / ".hippo/sleep/briefs").iterdir()
    )


def test_without_the_pack_the_commands_say_how_to_add_it(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace()
    assert hippo("init", cwd=root).code == 0
    run = hippo("remember", "x", cwd=root)
    assert run.code == 1 and "add it with `hippo pack add sleep`" in run.err
    assert "open loops" not in hippo("context", cwd=root).out


def test_dream_leaves_the_sleep_passes_to_the_cycle(scene: Any):
    assert scene.hippo("pack", "add", "sleep", cwd=scene.root).code == 0
    scene.transcript(hours_ago=2)
    scene.proposer_replies()
    run = scene.dream("--dry-run")
    assert run.code == 0, run.err
    window = scene.section("Window")
    assert any(
        "sleep/draft not run: the sleep pack's passes run from `hippo sleep`" in line
        for line in window
    )
    assert not any("fragments" in call.get("prompt", "") for call in scene.calls())


def test_init_and_doctor_agree_on_what_stays_local(night: Sleepy):
    ignored = (night.root / ".gitignore").read_text().splitlines()
    assert "/.hippo/sleep/fragments/" in ignored and "/.hippo/sleep/drafts/" not in ignored
    doctor = night.ok("doctor").out
    assert "mechanical mode" in doctor


def test_a_model_slower_than_its_timeout_fails_the_sleep(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer
):
    settings = model_settings(chat.url).replace("timeout_seconds = 10", "timeout_seconds = 0.5")
    night = make_sleepy(make_workspace(), hippo, settings)
    for text in ("Deploys run from main", "deploy from main", "main is where deploys run"):
        night.remember(text, "deploy")
    chat.operations({"kind": "new_core", "content": "Deploys run from main"}, delay=2.0)
    night.ok("brief", "--summary", "deploys")
    slept = night.failed("nudge")["check"]["slept"]
    assert slept["outcome"] == "failed" and "no answer within 0.5 s" in slept["error"]


def test_a_second_sleep_while_one_runs_is_busy(night: Sleepy, monkeypatch: pytest.MonkeyPatch):
    from hippo_core.files.locks import file_lock

    monkeypatch.setattr("hippo_packs.sleep.cycle.LOCK_WAIT", 0.2)
    with file_lock(night.root / ".hippo/sleep/sleep.lock"):
        run = night.run("sleep", "tick")
    assert run.code == 1 and run.err.startswith("error: busy: a sleep or tend is running")


def test_brief_pull_drafts_after_the_misses_with_nobody_to_ask(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo, "[sleep]\nbrief_pull = true\n")
    for text in ("Deploys run from main", "deploy from main", "main is where deploys run"):
        night.remember(text, "deploy")
    night.set_state(last_sleep=time.time() - 80_000)
    for _ in range(2):
        assert night.json("sleep", "tick")["check"].get("slept") is None
    slept = night.json("sleep", "tick")["check"]["slept"]
    assert slept["outcome"] == "drafted"
    brief = json.loads((night.root / f".hippo/sleep/briefs/{slept['brief']}.json").read_text())
    assert brief["written_by"] == "the fragments" and "deploy" in brief["summary"]


def test_a_purge_killed_midway_is_finished_by_the_next_tick(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch
):
    import hippo_packs.sleep.records.store as store

    class Killed(BaseException):
        """Stands in for a kill: nothing after it runs, and nobody catches it."""

    def dies(*args: object, **kwargs: object) -> list[str]:
        raise Killed

    night.core_note(CORE, "Deploys run from main")
    monkeypatch.setattr(store, "restore", dies)  # after the plan and the tombstone
    with pytest.raises(Killed):
        night.run("forget", CORE, "--reason", "wrong", "--now")
    monkeypatch.undo()
    stone = night.root / f".hippo/sleep/tombstones/{tombstone_id(CORE)}.json"
    assert json.loads(stone.read_text())["state"] == "purging"
    assert "interrupted" in night.ok("doctor").out
    night.ok("sleep", "tick")
    assert json.loads(stone.read_text())["state"] == "done" and night.cores() == {}
    assert not list((night.root / ".hippo/sleep/purging").glob("*.json"))


def test_decisions_come_from_standard_input(night: Sleepy, monkeypatch: pytest.MonkeyPatch):
    import io

    for text in ("Deploys run from main", "deploy from main", "main is where deploys run"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys")
    night.ok("nudge")
    draft = night.draft()["id"]
    monkeypatch.setattr("sys.stdin", io.StringIO('[{"op": 0, "verdict": "approve"}]'))
    done = night.json("review", draft, "--decisions", "-")
    assert done["approved"] == 1
    monkeypatch.setattr("sys.stdin", io.StringIO("not json"))
    bad = night.run("review", draft, "--decisions", "-")
    assert bad.code == 2 and bad.err.startswith("error: --decisions standard input: not JSON")


def test_a_dream_pass_may_read_the_sleep_packs_fragments_and_cores(scene: Any):
    assert scene.hippo("pack", "add", "sleep", cwd=scene.root).code == 0
    extra = scene.root / ".hippo/packs/extra"
    (extra / "passes").mkdir(parents=True)
    (extra / "prompts").mkdir()
    (extra / "personas").mkdir()
    (extra / "pack.toml").write_text(
        'name = "extra"\nversion = "0.1.0"\ndescription = "x"\nprotocol = "HIPPO_V1"\n'
        'hippo = ">=0.1"\n'
    )
    (extra / "passes/memory.toml").write_text(
        'protocol = "HIPPO_V1"\nprompt = "prompts/memory.md"\n'
        'reads = ["fragments", "cores", "brief"]\nreviewer = "personas/r.md"\nper_note = false\n'
    )
    (extra / "prompts/memory.md").write_text(
        "Fragments:\n{{fragments}}\nCores:\n{{cores}}\nBrief:\n{{brief}}\n"
    )
    (extra / "personas/r.md").write_text("Review.\n")
    core = scene.root / "notes/cores/deploys-run-from-main.md"
    core.parent.mkdir(parents=True)
    core.write_text(
        '---\ntype: core\nstatus: current\ntopic: "deploy"\nevidence_count: 2\n---\n'
        "# Deploys run from main\n\nDeploys run from main.\n"
    )
    assert scene.hippo("remember", "ship on Fridays", "--topic", "ops", cwd=scene.root).code == 0
    scene.transcript(hours_ago=2)
    run = scene.dream("--dry-run", "--show-prompts", "--pass", "memory")
    assert run.code == 0, run.err
    assert "1. [ops] (" in run.out and "ship on Fridays" in run.out
    assert "- target_core_id: deploys-run-from-main (topic deploy, evidence 2)" in run.out
    assert "(no brief: nobody steered this sleep" in run.out


def test_a_revert_of_a_landed_core_is_the_cycles_restored_event(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    draft = night.json("sleep", "now", "--without-brief")["sleep"]["draft"]
    night.ok("review", draft, "--approve", "0")
    [core] = night.cores()
    landed = [
        p
        for p in (night.root / ".hippo" / "receipts").glob("*.json")
        if json.loads(p.read_text()).get("note", "").endswith(f"cores/{core}.md")
    ]
    night.ok("revert", landed[0].stem)
    [restored] = [e for e in night.json("sleep", "events") if e["event"] == "restored"]
    assert restored["ids"] == [core] and restored["receipt"].endswith(".json")


def test_the_first_bedtime_is_an_interval_after_the_pack_was_added(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clock moved with ``HIPPO_NOW``: before bedtime nothing is asked; past it, every
    ``brief_check_misses`` ticks ask for a brief, and the request makes a brief wanted."""
    added = (night.root / ".hippo/packs/sleep/pack.toml").stat().st_mtime
    status = night.json("sleep", "status")
    assert (status["past_bedtime"], status["brief_wanted"]) == (False, False)
    assert status["bedtime_at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(added + 72000))
    monkeypatch.setenv("HIPPO_NOW", str(added + 71000))  # an hour to go
    assert night.json("sleep", "tick")["check"].get("misses") is None
    monkeypatch.setenv("HIPPO_NOW", str(added + 72060))
    misses = [night.json("sleep", "tick")["check"].get("misses") for _ in range(3)]
    assert misses == [1, 2, 3] and "brief_requested" in night.events()
    status = night.json("sleep", "status")
    assert status["past_bedtime"] and status["brief_wanted"]
    [intent] = json.loads((night.root / ".hippo/sleep/intents.json").read_text())["intents"]
    assert intent["intent"].startswith("I see you're looking tired")


def test_a_brief_asked_for_before_bedtime_is_wanted(night: Sleepy) -> None:
    assert night.json("sleep", "now") == {"ok": True, "asked_for_brief": True}
    status = night.json("sleep", "status")
    assert status["past_bedtime"] is False and status["brief_wanted"] is True
    night.ok("brief", "--summary", "deploys")
    assert night.json("sleep", "status")["brief_wanted"] is False


def test_a_failed_sleep_is_heard_and_the_next_bedtime_asks_for_a_fresh_brief(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    chat: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hippo_packs.sleep.config import SleepRipple
    from hippo_packs.sleep.wake.ripple import message

    settings = model_settings("http://127.0.0.1:9/v1") + "retry_after_seconds = 0\n"
    night = make_sleepy(make_workspace(), hippo, settings)
    for text in ("Deploys run from main", "deploy from main", "main is where deploys run"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys")
    failed = night.failed("sleep", "now")["sleep"]
    assert failed["outcome"] == "failed" and "connection refused" in failed["error"]
    [heard] = [e for e in night.json("sleep", "events") if e["event"] == "sleep_failed"]
    assert "connection refused" in heard["error"] and heard["brief"] == failed["brief"]
    # The next bedtime: no brief is open (the failed one is spent), so the tick asks for a
    # fresh one, saying why.
    added = (night.root / ".hippo/packs/sleep/pack.toml").stat().st_mtime
    monkeypatch.setenv("HIPPO_NOW", str(added + 72060))
    for _ in range(3):
        assert night.json("sleep", "tick")["check"]["slept"] is None  # never on the spent brief
    [asked] = [e for e in night.json("sleep", "events") if e["event"] == "brief_requested"]
    assert "connection refused" in asked["failed"]
    [intent] = json.loads((night.root / ".hippo/sleep/intents.json").read_text())["intents"]
    assert intent["intent"].startswith("The last sleep failed (openai backend at ")
    woken = message(SleepRipple(type="script"), "brief_requested", asked)
    assert "The last sleep failed (openai backend at " in woken and "submit a fresh" in woken
    # The model is back: the fresh brief sleeps, and the fragments were all still there.
    settings_file = night.root / ".hippo/settings.toml"
    settings_file.write_text(settings_file.read_text().replace("http://127.0.0.1:9/v1", chat.url))
    chat.operations({"kind": "new_core", "content": "Deploys run from main"})
    night.ok("brief", "--summary", "deploys, again")
    slept = night.json("nudge")["check"]["slept"]
    assert slept["outcome"] == "drafted" and slept["brief"] != failed["brief"]


def test_config_set_refuses_a_value_out_of_its_range_and_names_the_table_of_a_key(
    night: Sleepy,
) -> None:
    settings = night.root / ".hippo/settings.toml"
    before = settings.read_bytes()
    for key, value, read, said in (
        ("sleep.interval_seconds", "100", "600", "600 or more"),
        ("sleep.max_attempts", "50", "10", "1 to 10"),
        ("sleep.max_attempts", "0", "1", "1 to 10"),
    ):
        run = night.run("config", "set", key, value)
        assert run.code == 1 and run.err.count("\n") == 1, run.err
        assert f"'{key}' = {value} is out of its range: it would be read as {read}" in run.err
        assert said in run.err
    assert settings.read_bytes() == before
    night.ok("config", "set", "sleep.max_attempts", "5")
    assert night.ok("config", "get", "sleep.max_attempts").out == "5\n"
    misplaced = night.run("config", "set", "max_attempts", "5")
    assert (misplaced.code, misplaced.err) == (
        2,
        "error: 'max_attempts' is a key of [sleep]: hippo config set sleep.max_attempts 5\n",
    )
    whole = night.ok("config", "get", "sleep").out
    assert whole.startswith('[sleep]\nmode = "thread"\n') and "max_attempts = 5\n" in whole
    assert '\n[sleep.model]\nurl = ""\n' in whole and "[sleep.model.lifecycle]" in whole


def test_forget_takes_the_cores_words_from_every_file_and_only_what_belongs_to_it(
    night: Sleepy,
) -> None:
    contact = "Rider Ana Lopez, phone 555-0134, asked twice about a refund for the dock"
    rule = "Refunds are settled within five working days"
    night.ok("session", "start", "--id", "s1", "--task", "answer a rider")
    night.ok("session", "end", "--handoff", f"{contact} [[Riders]]")
    night.ok("sleep", "tick")  # the handoff is a fragment now
    night.remember(rule, "Riders")
    night.ok("brief", "--summary", "riders", "--promote", "riders")
    night.ok("nudge")
    draft = night.draft()
    assert [op["kind"] for op in draft["operations"]] == ["new_core", "attach"]
    night.ok("review", draft["id"], "--approve", "0", "--approve", "1")
    core = night.draft()["operations"][0]["long_term_id"]
    night.ok("log")  # the session log holds the handoff's first line
    assert contact in (night.root / "notes" / "Session log.md").read_text()
    assert "555-0134" in night.ok("context", "--task", "rider phone refund").out
    night.ok("forget", core, "--reason", "a rider's contact data", "--now")
    home = Path(os.environ["HIPPO_HOME"])
    holding = [
        path
        for root in (night.root, home)
        for path in root.rglob("*")
        if path.is_file() and b"555-0134" in path.read_bytes()
    ]
    assert holding == []  # records, receipts, snapshots, the log, the notes index, caches
    record = json.loads((night.root / ".hippo/sessions/s1.json").read_text())
    assert record["handoff"] == "[purged]"
    # The rule only sat in the core as a satellite, sharing none of its words: it is
    # back in short-term, to be drafted again, not purged with the contact.
    [back] = night.json("remember", "list")
    assert back["content"] == rule
    fates = night.json("sleep", "audit")["fragments"]
    assert fates["counts"]["purged"] == 1 and fates["counts"]["pending"] == 1
    assert fates["lost"] == []
    assert "555-0134" not in night.ok("context", "--task", "rider phone refund").out


@pytest.mark.parametrize(
    ("core", "path"),
    [
        (CORE, "../victim.md"),
        (CORE, "../.hippo/settings.toml"),
        (CORE, "Home.md"),
        ("../../victim", f"cores/{CORE}.md"),
    ],
)
def test_a_forget_flag_edited_to_name_another_file_purges_nothing(
    night: Sleepy, core: str, path: str
):
    """Forget flags are committed: a teammate's (or a hand-edited) flag naming a file that
    is not a core, or an id that is a path, deleted that file at the next tick."""
    kept = night.core_note(CORE, "Deploys run from main")
    victim = night.root / "victim.md"
    victim.write_text("not a core\n")
    flag = night.root / ".hippo/sleep/forget" / f"{CORE}.json"
    flag.parent.mkdir(parents=True, exist_ok=True)
    flag.write_text(json.dumps({"core": core, "path": path, "reason": "x", "flagged_at": 1}))
    before = {p: p.read_bytes() for p in night.root.rglob("*") if p.is_file()}

    tick = night.run("sleep", "tick")

    assert victim.read_text() == "not a core\n" and kept.exists()
    assert (night.root / "notes/Home.md").exists()
    assert not (night.root.parent / "victim.json").exists()
    # Nothing outside the store (and its caches) changed, and no purge began.
    outside = {p: b for p, b in before.items() if "/.hippo/sleep/" not in p.as_posix()}
    outside = {p: b for p, b in outside.items() if "/.hippo/cache/" not in p.as_posix()}
    assert {p: p.read_bytes() for p in outside if p.exists()} == outside
    assert not (night.root / ".hippo/sleep/tombstones").exists()
    said = "is not a record id" if core != CORE else "is not a core's note under notes/cores/"
    assert tick.code == 1 and said in tick.err and len(tick.err.splitlines()) == 1


def test_a_tend_with_nothing_to_do_says_so_and_its_time_is_iso(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """``hippo sleep tend`` said nothing, its ``at`` was epoch seconds where every other
    answer has ISO times, and the audit printed Python's None (newcomer defects 17, 25, 30)."""

    night = make_sleepy(make_workspace(), hippo)
    said = night.ok("sleep", "tend")
    assert said.out == (
        "nothing to tend: no denied operation to redraft, no finished chain to close\n"
    )
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", night.json("sleep", "tend")["at"])
    night.ok("remember", "deploys run from main", "--topic", "deploy")
    night.ok("brief", "--summary", "deploys", "--promote", "deploy")
    night.ok("nudge")
    [model] = [line for line in night.ok("sleep", "audit").out.splitlines() if "model" in line]
    assert model == "model mechanical (no model): first pass -, mean attempts 1.0, repeat rate -"
