"""Extractive drafting through the CLI and a scripted model on 127.0.0.1: the model answers
choices under a JSON schema, hippo writes every operation's words from the fragments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.chat_server import ChatServer
from tests.sleep_scene import Sleepy, make_sleepy, model_settings

REDIS = "local-redis-listens-on-port-6380"
MOVED = "local-redis-moved-from-port-6380-to-port"  # the core that supersedes it


@pytest.fixture
def night(make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer) -> Sleepy:
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url, draft="extractive"))
    night.core_note(REDIS, "Local redis listens on port 6380", topic="redis")
    return night


def choose(chat: ChatServer, *choices: Any, when: tuple[str, ...] = (), **options: Any) -> None:
    chat.add({"operations": list(choices)}, *when, **options)


def redis_fragments(night: Sleepy) -> list[str]:
    return [
        night.remember("local redis moved from port 6380 to port 6390 today", "redis"),
        night.remember("redis now listens on 6390, update your .env", "redis"),
        night.remember("the redis dashboard lives at grafana under cache panels", "redis"),
    ]


def slept(night: Sleepy) -> dict[str, Any]:
    night.ok("brief", "--summary", "the redis port moved", "--promote", "redis")
    return dict(night.json("sleep", "now")["sleep"])


def test_the_model_chooses_and_hippo_writes_each_operation_from_the_fragments(
    night: Sleepy, chat: ChatServer
):
    ids = redis_fragments(night)
    choose(
        chat,
        {"kind": "supersede", "fragments": [1, 2], "core": REDIS},
        {"kind": "new_core", "fragments": [3], "core": "none"},
    )
    record = slept(night)
    assert record["outcome"] == "drafted" and record["chosen"] == 2 and record["dropped"] == []

    # One topic, one call: the fragments numbered, the schema beside them, its enums the
    # fragment numbers and the candidate cores.
    (request,) = chat.requests
    prompt = request["messages"][-1]["content"]
    assert "1. [redis]" in prompt and "3. [redis]" in prompt and f"- {REDIS}: " in prompt
    sent = request["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    items = sent["json_schema"]["schema"]["properties"]["operations"]["items"]["anyOf"]
    assert items[0]["properties"]["kind"]["enum"] == ["new_core"]
    assert items[1]["properties"]["core"]["enum"] == [REDIS]
    assert items[1]["properties"]["fragments"]["items"]["enum"] == [1, 2, 3]

    ops = night.draft()["operations"]
    assert [(op["kind"], op["content"]) for op in ops] == [
        ("supersede", "local redis moved from port 6380 to port 6390 today"),
        ("attach", "redis now listens on 6390, update your .env"),
        ("new_core", "the redis dashboard lives at grafana under cache panels"),
    ]
    assert ops[0]["target_core_id"] == REDIS and ops[1]["target_op"] == 0
    assert [op["source_short_ids"] for op in ops] == [[ids[0]], [ids[1]], [ids[2]]]
    assert ops[0]["choice"] == {"kind": "supersede", "fragments": ids[:2], "core": REDIS}
    assert night.draft()["extra"]["drafting"] == "extractive"

    shown = night.ok("review", night.draft()["id"]).out
    assert f"chosen: supersede onto {REDIS}; its words are the fragments':" in shown
    assert f"    {ids[1]}: redis now listens on 6390, update your .env" in shown
    # Operation 2 is a core from one fragment: a person's (issue 37).
    night.as_person(
        "review", night.draft()["id"], "--approve", "0", "--approve", "1", "--approve", "2"
    )
    cores = night.cores()
    assert "superseded_by" in cores[REDIS]
    new = next(text for name, text in cores.items() if name.startswith("local-redis-moved"))
    assert "- 20" in new and "redis now listens on 6390" in new  # the satellite, dated


def test_a_rule_corrects_what_the_words_contradict_and_says_so(night: Sleepy, chat: ChatServer):
    redis_fragments(night)
    # attach a changed value (a supersede by the rule), and an attach sharing no word
    choose(
        chat,
        {"kind": "attach", "fragments": [1], "core": REDIS},
        {"kind": "new_core", "fragments": [2, 3], "core": "none"},
    )
    slept(night)
    ops = night.draft()["operations"]
    assert ops[0]["kind"] == "supersede" and ops[0]["target_core_id"] == REDIS
    assert "chose attach of fragment(s) 1" in ops[0]["rationale"]
    assert "so it supersedes it (hippo's rule)" in ops[0]["rationale"]
    # Fragment 2 restates the old core too: a core is superseded once in a draft, so it is
    # a satellite of the core that replaces it; fragment 3 is a core of its own.
    assert [(op["kind"], op.get("target_op")) for op in ops] == [
        ("supersede", None),
        ("new_core", None),
        ("attach", 0),
    ]
    assert ops[1]["content"].startswith("the redis dashboard")
    assert ops[2]["content"].startswith("redis now listens on 6390")
    assert "a satellite of its new core" in ops[2]["rationale"]
    assert sum(op["kind"] == "supersede" for op in ops) == 1


def test_an_attach_sharing_no_word_with_its_core_is_a_core_of_its_own(
    night: Sleepy, chat: ChatServer
):
    night.remember("the redis port is in the runbook", "redis")  # so its core is shown
    printer = night.remember("the office printer on floor two jams again", "redis")
    choose(chat, {"kind": "attach", "fragments": [1, 2], "core": REDIS})
    record = slept(night)
    assert record["dropped"] == []
    ops = night.draft()["operations"]
    assert [(op["kind"], op.get("target_core_id")) for op in ops] == [
        ("attach", REDIS),
        ("new_core", None),
    ]
    assert ops[1]["source_short_ids"] == [printer]
    assert f"sharing no word with {REDIS}, a new core (hippo's rule)" in ops[1]["rationale"]


def test_choices_that_name_what_was_not_shown_are_dropped_with_their_reasons(
    night: Sleepy, chat: ChatServer
):
    ids = redis_fragments(night)
    ids.append(night.remember("the office printer on floor two jams again", "redis"))
    choose(
        chat,
        {"kind": "new_core", "fragments": [9], "core": "none"},
        {"kind": "attach", "fragments": [1], "core": "no-such-core"},
        {"kind": "verbatim", "fragments": [1], "core": "none"},
        {"kind": "attach", "fragments": [], "core": REDIS},
        {"kind": "attach", "fragments": [3], "core": "none"},
        {"kind": "supersede", "fragments": [4], "core": REDIS},
        "new_core 1 2 3",
        {"kind": "new_core", "fragments": [1, 2, 3, 4], "core": "none"},
        {"kind": "attach", "fragments": [1, 2, 3, 4], "core": REDIS},
        {"kind": "supersede", "fragments": [1, 2, 3, 4], "core": REDIS},
    )
    record = slept(night)
    why = [d["why"] for d in record["dropped"]]
    assert why == [
        "no fragment 9 (the fragments are 1 to 4)",
        "no core 'no-such-core' among the cores shown",
        "kind 'verbatim' is not one of new_core, attach, supersede",
        "it chooses no fragment",
        "an attach names the core it attaches to",
        f"its fragments share no word with core {REDIS}, which it would replace",
        "not a choice (an object with kind, fragments and core)",
        "its fragments are in an earlier operation",
        "its fragments are in an earlier operation",
    ]
    assert [d["operation"] for d in record["dropped"]] == [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "8",
        "9",
    ]
    # every fragment for every kind: the first choice stands, once
    ops = night.draft()["operations"]
    assert sorted(i for op in ops for i in op["source_short_ids"]) == sorted(ids)


def test_nothing_valid_drafts_nothing_and_never_a_mechanical_copy(night: Sleepy, chat: ChatServer):
    ids = redis_fragments(night)
    choose(chat, {"kind": "attach", "fragments": [7], "core": REDIS})
    record = slept(night)
    assert record["outcome"] == "nothing to draft" and night.drafts() == []
    assert record["dropped"][0]["why"] == "no fragment 7 (the fragments are 1 to 3)"
    assert list(night.cores()) == [REDIS]
    assert {f["id"] for f in night.json("remember", "list")} == set(ids)  # they wait

    chat.rules.clear()
    choose(chat)  # the empty list: nothing chosen, said so
    record = slept(night)
    assert record["outcome"] == "nothing to draft"
    assert record["dropped"] == [
        {"topic": "redis", "operation": "none", "why": "the model chose no operation"}
    ]


@pytest.mark.parametrize(
    ("refuses", "sent", "settled"),
    [
        ({"json_schema": 400}, ["json_schema", "json_object"], "json_object"),
        ({"json_schema": 500}, ["json_schema", "json_object"], "json_object"),  # llama-cpp-python
        ({"json_schema": 422, "json_object": 400}, ["json_schema", "json_object", None], "none"),
    ],
)
def test_a_server_that_refuses_a_form_is_asked_again_with_the_next_and_it_is_remembered(
    night: Sleepy, chat: ChatServer, refuses: dict[str, int], sent: list[Any], settled: str
):
    chat.refuses = refuses
    redis_fragments(night)
    choose(chat, {"kind": "new_core", "fragments": [1, 2, 3], "core": "none"})
    assert slept(night)["outcome"] == "drafted"
    forms = [(r.get("response_format") or {}).get("type") for r in chat.requests]
    assert forms == sent
    kept = json.loads((night.root / ".hippo/sleep/formats.json").read_text())
    (entry,) = kept.values()
    assert entry["response_format"] == settled and "HTTP" in entry["refused"]
    assert "model_format" in night.events()
    # The next sleep asks in the form that worked, at once.
    ops = night.draft()["operations"]
    night.ok("review", night.draft()["id"], *[f"--approve={op['index']}" for op in ops])
    night.ok("sleep", "tick")
    chat.requests.clear()
    night.remember("the redis cache panels moved to the ops board", "redis")
    slept(night)  # (the scripted choices name fragments this pile of one does not have)
    assert [(r.get("response_format") or {}).get("type") for r in chat.requests] == [sent[-1]]


def test_a_failure_that_is_not_the_form_is_not_taken_for_a_refusal(night: Sleepy, chat: ChatServer):
    redis_fragments(night)
    chat.add("", status=503)
    night.ok("brief", "--summary", "the redis port moved", "--promote", "redis")
    record = night.failed("sleep", "now")["sleep"]
    assert record["outcome"] == "failed" and "HTTP 503" in record["error"]
    assert len(chat.requests) == 1
    assert not (night.root / ".hippo/sleep/formats.json").exists()


def test_a_denial_is_chosen_again_from_its_critique_and_the_chain_lands(
    night: Sleepy, chat: ChatServer
):
    redis_fragments(night)
    choose(
        chat,
        {"kind": "supersede", "fragments": [1, 2], "core": REDIS},
        {"kind": "new_core", "fragments": [3], "core": "none"},
        when=("Sort short-term",),
    )
    slept(night)
    first = night.draft()
    assert [op["kind"] for op in first["operations"]] == ["supersede", "attach", "new_core"]
    critique = "2=the dashboard is in the redis core's topic; attach it"
    night.ok("review", first["id"], "--approve", "0", "--approve", "1", "--deny", critique)
    choose(
        chat,
        {"kind": "attach", "fragments": [1], "core": MOVED},
        when=("a reviewer denied them",),
    )
    night.ok("nudge")
    second = night.draft()
    assert second["attempt"] == 2 and second["previous_draft_ids"] == [first["id"]]
    prompt = chat.requests[-1]["messages"][-1]["content"]
    assert "critique: the dashboard is in the redis core's topic; attach it" in prompt
    assert "\n1. [redis]" in prompt and "\n2. " not in prompt  # the denied one's fragments
    redraft_schema = chat.requests[-1]["response_format"]["json_schema"]["schema"]
    assert redraft_schema["properties"]["operations"]["minItems"] == 1
    (op,) = second["operations"]
    assert op["kind"] == "attach" and op["target_core_id"] == MOVED  # the core now current
    assert op["content"] == "the redis dashboard lives at grafana under cache panels"
    assert op["redraft_of"] == 2
    shown = night.ok("review", second["id"]).out
    assert "attempt 1 (new_core): the redis dashboard" in shown
    assert "critique: the dashboard is in the redis core's topic; attach it" in shown
    night.ok("review", second["id"], "--approve", "0")
    night.ok("sleep", "tick")
    assert night.draft()["status"] == "closed"
    assert "grafana under cache panels" in night.cores()[MOVED]


def test_abstractive_drafting_stays_for_capable_models(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer
):
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url, draft="abstractive"))
    for text in ("Deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    chat.operations({"kind": "new_core", "content": "Deploys run from main", "source_indexes": [1]})
    night.ok("brief", "--summary", "deploys")
    night.ok("sleep", "now")
    assert "response_format" not in chat.requests[0]
    assert "Answer with one JSON object and nothing else" in chat.prompts[0]
    assert night.draft()["extra"]["drafting"] == "abstractive"


def test_a_server_that_ignores_the_schema_and_answers_prose_fails_the_sleep(
    night: Sleepy, chat: ChatServer
):
    ids = redis_fragments(night)
    chat.add("Sure! Fragments 1 and 2 are about the redis port.")
    night.ok("brief", "--summary", "the redis port moved", "--promote", "redis")
    record = night.failed("sleep", "now")["sleep"]
    assert record["outcome"] == "failed" and "not the JSON asked for" in record["error"]
    assert night.drafts() == [] and list(night.cores()) == [REDIS]  # no mechanical copy
    assert {f["id"] for f in night.json("remember", "list")} == set(ids)


def test_a_change_the_model_left_out_supersedes_all_the_same(night: Sleepy, chat: ChatServer):
    ids = redis_fragments(night)
    choose(chat, {"kind": "new_core", "fragments": [3], "core": "none"})
    slept(night)
    ops = night.draft()["operations"]
    assert [(op["kind"], op["source_short_ids"]) for op in ops] == [
        ("new_core", [ids[2]]),
        ("supersede", [ids[0]]),  # fragment 1 moved the port; fragment 2 waits
    ]
    assert ops[1]["target_core_id"] == REDIS
    assert ops[1]["rationale"].endswith(
        f"left fragment 1 out; it states a new value for what {REDIS} states, so it "
        "supersedes it (hippo's rule)"
    )
    shown = night.ok("review", night.draft()["id"]).out
    assert "chosen: not by the model (hippo's rule); its words are the fragments':" in shown
    assert ids[1] in {f["id"] for f in night.json("remember", "list")}


def test_a_redraft_offers_first_the_fragments_whose_words_were_not_refused(
    night: Sleepy, chat: ChatServer
):
    for text in (
        "the cache dashboard lives in grafana under cache panels",
        "cache panels show the hit rate of every service",
        "the cache hit rate alert fires below ninety percent",
    ):
        night.remember(text, "dashboards")
    choose(chat, {"kind": "new_core", "fragments": [2, 3], "core": "none"}, when=("Sort",))
    night.ok("brief", "--summary", "dashboards", "--promote", "dashboards")
    night.ok("sleep", "now")
    first = night.draft()
    assert [op["kind"] for op in first["operations"]] == ["new_core", "attach"]
    core_words = first["operations"][0]["content"]
    night.ok("review", first["id"], "--deny", "0=not these words", "--deny", "1=with its core")
    choose(chat, {"kind": "new_core", "fragments": [1], "core": "none"}, when=("denied them",))
    night.ok("nudge")
    prompt = chat.requests[-1]["messages"][-1]["content"]
    listed = [line for line in prompt.splitlines() if line[:3] in ("1. ", "2. ")]
    assert len(listed) == 2 and core_words in listed[1]  # the refused words go last
    (op,) = night.draft()["operations"]
    assert op["content"] != core_words and night.draft()["attempt"] == 2
