"""`hippo eval pack sleep`: the sleep pack's cases, one sleep each, in mechanical mode, with a
scripted model, and recorded then replayed with no model at all."""

from __future__ import annotations

import json

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.chat_server import ChatServer
from tests.sleep_scene import make_sleepy, model_settings

CORE = "deploys-run-from-main"
#: What the scripted model answers, by a fragment only that case shows.
ANSWERS = {
    "Deployed from main again today": [
        {
            "kind": "attach",
            "target_core_id": CORE,
            "content": "Deployed from main again today; CI was green first.",
            "source_indexes": [1],
        }
    ],
    "Deploys run from release branches again": [
        {
            "kind": "supersede",
            "target_core_id": CORE,
            "content": "Deploys run from release branches again, not from main.",
            "source_indexes": [1, 2, 3],
        }
    ],
    "We deploy from main now, never from release branches.": [
        {
            "kind": "new_core",
            "content": "We deploy from main now, after CI passes.",
            "source_indexes": [1, 2, 3],
        }
    ],
}


def test_mechanical_mode_lands_cores_attaches_and_verbatims_by_rule(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    night = make_sleepy(make_workspace(), hippo)
    result = night.json("eval", "pack", "sleep")
    cases = {case["name"]: case for case in result["cases"]}
    assert sorted(cases) == ["attach", "new-core", "supersede", "verbatim"]
    assert [cases[n]["matched"] for n in ("new-core", "verbatim", "attach")] == [1, 1, 1]
    # A contradiction in words, with no value changed, is a model's to see: attached here.
    assert cases["supersede"]["matched"] == 0
    assert result["recall"]["rate"] == 0.75
    assert all(case["calls"] == 0 for case in cases.values())


def test_a_model_is_measured_then_replayed_without_one(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer
):
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url))
    for marker, operations in ANSWERS.items():
        chat.operations(*operations, when=(marker,))
    recorded = night.json("eval", "pack", "sleep", "--record")
    assert recorded["recall"]["rate"] == 1.0
    assert recorded["precision"]["rate"] == 1.0
    assert len(chat.requests) == 3  # the verbatim case calls no model
    folder = night.root / ".hippo/packs/sleep/eval"
    calls = json.loads((folder / "attach/recorded.json").read_text())["calls"]
    assert len(calls) == 1 and "Deployed from main again today" in calls[0]["prompt"]
    chat.rules.clear()
    replayed = night.json("eval", "pack", "sleep", "--replay")
    rates = ("validity", "precision", "recall")
    assert [replayed[r] for r in rates] == [recorded[r] for r in rates]
    assert len(chat.requests) == 3 and replayed["calls"] == 3


def test_a_bad_case_is_one_line_naming_its_file(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    night = make_sleepy(make_workspace(), hippo)
    case = night.root / ".hippo/packs/sleep/eval/verbatim/case.toml"
    case.write_text('description = "x"\n[[fragment]]\ntext = "wrong key"\n')
    run = night.run("eval", "pack", "sleep", "--case", "verbatim")
    assert run.code == 1
    assert "eval/verbatim/case.toml: fragment.0.content: Field required" in run.out + run.err


def test_the_shipped_recording_of_the_small_model_replays_with_no_model(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    """The pack's cases come with what SmolLM2-135M chose for them (extractive drafting,
    recorded with ``hippo eval pack sleep --record``): replayed on any day, in a workspace
    with no model set, out of the box."""
    night = make_sleepy(make_workspace(), hippo)
    replayed = night.json("eval", "pack", "sleep", "--replay")
    cases = {case["name"]: case for case in replayed["cases"]}
    assert all(case["status"] == "ok" for case in cases.values()), cases
    # it chose a new core every time: the attach and the supersede miss
    assert [cases[n]["matched"] for n in ("attach", "new-core", "supersede", "verbatim")] == [
        0,
        1,
        0,
        1,
    ]
    assert replayed["recall"]["rate"] == 0.5 and replayed["calls"] == 3
    assert replayed["validity"]["rate"] == 1.0
