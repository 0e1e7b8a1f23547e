"""What a person or an agent gets wrong about briefs and forgetting: one clear line, an
exit that says so, and records that stay true."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.chat_server import ChatServer
from tests.sleep_scene import Sleepy, make_sleepy, model_settings


def store_files(night: Sleepy) -> dict[str, bytes]:
    folder = night.root / ".hippo/sleep"
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "sleep.lock"
    }


def brief_record(night: Sleepy, brief: str) -> dict[str, object]:
    return dict(json.loads((night.root / f".hippo/sleep/briefs/{brief}.json").read_text()))


def test_an_empty_brief_is_refused_in_one_line_and_writes_nothing(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo)
    before = store_files(night)
    run = night.run("brief", "--summary", "   ", "--promote", "deploy")
    assert run.code != 0 and "Traceback" not in run.err
    assert run.err.strip().count("\n") == 0 and "a brief needs a summary" in run.err
    assert store_files(night) == before


def test_a_second_brief_replaces_the_first_which_is_never_slept_on(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo, model_settings("http://127.0.0.1:9/v1"))
    night.remember("Deploys run from main after CI passes", "deploy")
    first = night.json("brief", "--summary", "the printer mattered", "--promote", "printer")
    second = night.json("brief", "--summary", "deploys mattered", "--promote", "deploy")
    assert night.json("sleep", "status")["brief"]["id"] == second["id"]
    assert brief_record(night, first["id"])["consumed_by_draft"] == f"superseded-by-{second['id']}"
    # The sleep on the second fails (no model listens): the first does not come back as
    # the steer of the next sleep; a fresh brief is asked for.
    assert night.failed("nudge")["check"]["slept"]["outcome"] == "failed"
    assert night.json("sleep", "status")["brief"] is None


def test_forgetting_what_is_not_there_says_so_and_changes_nothing(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo)
    night.core_note("deploys-go-through-staging", "Deploys go through staging first")
    before = store_files(night)
    for flags in ([], ["--now"]):
        run = night.run("forget", "deploys-go-nowhere", "--reason", "wrong", *flags)
        assert run.code == 1 and "Traceback" not in run.err
        assert run.err == (
            "error: no long-term entry 'deploys-go-nowhere': not a core under notes/cores/ "
            "(`hippo sleep cores` lists them)\n"
        )
    run = night.run("forget", "deploys-go-through-staging")
    assert run.code == 1 and "a 'reason' is required" in run.err
    assert store_files(night) == before
    assert list(night.cores()) == ["deploys-go-through-staging"]


def test_forgetting_twice_names_the_tombstone_and_purges_nothing_more(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo)
    night.core_note("deploys-go-through-staging", "Deploys go through staging first")
    stone = night.json("forget", "deploys-go-through-staging", "--reason", "wrong", "--now")
    stone_id = stone["tombstone"]["id"]
    before = store_files(night)
    for given in ("deploys-go-through-staging", "notes/cores/deploys-go-through-staging.md"):
        for flags in ([], ["--now"]):
            run = night.ok("forget", given, "--reason", "again", *flags)
            assert run.out.startswith(f"already forgotten: tombstone {stone_id}, purged ")
            assert run.out.endswith("; nothing to do\n")
    again = night.json("forget", "deploys-go-through-staging", "--reason", "again")
    assert again["already"] is True and again["tombstone"]["id"] == stone_id
    assert store_files(night) == before  # no flag written, the tombstone as it was


def test_forgetting_a_core_a_waiting_draft_attaches_to_denies_that_operation(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo)
    night.core_note("deploys-go-through-staging", "Deploys go through the staging bucket first")
    fragment = night.remember(
        "deploys go through the staging bucket first, then prod after smoke tests", "deploy"
    )
    night.ok("brief", "--summary", "deploy work mattered")
    night.ok("sleep", "now")
    draft = night.draft()
    assert [op["kind"] for op in draft["operations"]] == ["attach"]

    stone = night.json("forget", "deploys-go-through-staging", "--reason", "wrong", "--now")
    stone_id = stone["tombstone"]["id"]
    draft = night.draft()
    op = draft["operations"][0]
    assert op["status"] == "denied" and op["forgotten"] == stone_id
    assert op["critique"] == f"its core was forgotten ({stone_id})"
    assert op["content"] == "[purged]" and draft["status"] == "reviewed"
    assert night.run("review").out == ""  # nothing waits for a verdict that would land [purged]
    run = night.run("review", draft["id"], "--approve", "0")
    assert run.code == 1 and "Traceback" not in run.err

    # The fragment was evidence of what is forgotten: it goes with the core, and the next
    # tick closes the chain without drafting it again or making a core of "[purged]".
    assert fragment not in {f["id"] for f in night.json("remember", "list")}
    night.ok("sleep", "tick")
    assert night.cores() == {} and night.draft()["status"] == "closed"
    assert len(night.drafts()) == 1
    kept = "\n".join(
        p.read_text()
        for p in Path(night.root).rglob("*")
        if p.is_file() and ".git/" not in str(p) and p.suffix in (".json", ".jsonl", ".md")
    )
    assert "smoke tests" not in kept


def test_a_model_slow_past_its_timeout_fails_that_night_and_the_next_recovers(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer
):
    settings = model_settings(chat.url).replace("timeout_seconds = 10", "timeout_seconds = 1")
    night = make_sleepy(make_workspace(), hippo, settings)
    ids = [
        night.remember("Deploys run from main after CI passes", "deploy"),
        night.remember("we deploy from main now, never from release branches", "deploy"),
        night.remember("deploy only when CI is green on main", "deploy"),
    ]
    answer = {"kind": "new_core", "content": "Deploys run from main", "source_indexes": [1, 2, 3]}
    chat.operations(answer, delay=3.0, repeat=1)
    chat.operations(answer)
    night.ok("brief", "--summary", "deploys")
    run = night.run("sleep", "now")
    assert (
        run.code == 1
        and run.err.startswith("error: the sleep failed")
        and "no answer within 1 s" in run.err
    )
    assert run.err.count("\n") == 1 and "Traceback" not in run.err
    assert night.drafts() == [] and "sleep_failed" in night.events()
    assert {f["id"] for f in night.json("remember", "list")} == set(ids)  # nothing lost

    night.set_state(model_failed_at=0)  # the next night, past retry_after_seconds
    night.ok("brief", "--summary", "deploys, again")
    slept = night.json("sleep", "now")["sleep"]
    assert slept["outcome"] == "drafted"
    assert night.draft()["operations"][0]["source_short_ids"] == ids
