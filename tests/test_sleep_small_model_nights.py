"""Three nights of extractive drafting with a real small model (SmolLM2-135M on
llama-cpp-python's server, which takes the answer's schema as ``json_object``), the main
model played by a rule through the CLI. The floors are the ones the public week gave
(docs/sleep.md, "Measuring the drafter"): every answer parses, the model chooses on every
night, the changed value supersedes the old core, and a denial comes back chosen again and
lands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.local_http import PROXIES
from tests.sleep_scene import Sleepy, make_sleepy, model_settings

pytestmark = pytest.mark.slow

#: Each night's fragments, by topic. Night 3 changes the port night 1 stated.
NIGHTS: list[list[tuple[str, str]]] = [
    [
        ("the staging database listens on port 5433", "database"),
        ("connect to staging postgres on 5433 with the ops role", "database"),
        ("release builds are signed with the key in the team vault", "release"),
        ("always sign release builds before uploading them", "release"),
    ],
    [
        ("the mobile app reads feature flags from the config service", "flags"),
        ("feature flags are cached for ten minutes by the app", "flags"),
        ("new flags need a default that keeps the old behaviour", "flags"),
    ],
    [
        ("the staging database moved from port 5433 to port 5440", "database"),
        ("staging postgres is on 5440 now, update your env files", "database"),
    ],
]


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for proxy in PROXIES:
        monkeypatch.delenv(proxy, raising=False)


def review(night: Sleepy, draft: dict[str, Any], *, deny_first: bool) -> None:
    """The main model's rule: approve every operation, except (once) the first, denied
    with a critique the model must answer."""
    decisions = []
    for op in draft["operations"]:
        if deny_first and op["index"] == 0 and op.get("target_op") is None:
            critique = "keep this fact, but choose its fragments again"
            decisions.append({"op": 0, "verdict": "deny", "critique": critique})
        else:
            decisions.append({"op": op["index"], "verdict": "approve"})
    denied = {d["op"] for d in decisions if d["verdict"] == "deny"}
    for d in decisions:  # an attach to a denied new core goes with it
        target = draft["operations"][d["op"]].get("target_op")
        if target in denied and d["verdict"] == "approve":
            d.update(verdict="deny", critique="its core was denied")
    path = night.root / "decisions.json"
    path.write_text(json.dumps(decisions))
    # A person reviews: a core from one fragment is a person's to approve (issue 37).
    night.as_person("review", draft["id"], "--decisions", str(path))


def test_three_nights_of_extractive_drafting_with_a_real_small_model(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, small_model: str
):
    settings = model_settings(small_model, draft="extractive", max_attempts=3)
    settings = settings.replace("timeout_seconds = 10", "timeout_seconds = 300")
    night = make_sleepy(make_workspace(), hippo, settings)
    chose, chains = [], []
    for number, fragments in enumerate(NIGHTS, 1):
        for text, topic in fragments:
            night.remember(text, topic)
        topics = sorted({topic for _text, topic in fragments})
        promote = [flag for topic in topics for flag in ("--promote", topic)]
        night.ok("brief", "--summary", f"night {number}: {', '.join(topics)}", *promote)
        ticked = night.run("nudge", "--json")
        assert "Traceback" not in ticked.err, ticked.err
        slept = json.loads(ticked.out)["check"]["slept"]
        assert slept["model_failures"] == [], slept  # held to the schema, every answer parses
        assert slept["calls"] == len(topics), slept  # one call a topic, none repeated
        chose.append(slept["outcome"] == "drafted")
        if slept["outcome"] != "drafted":
            continue
        draft = night.draft()
        assert all(op.get("choice") for op in draft["operations"])  # the model's, none copied
        review(night, draft, deny_first=number == 1)
        for _ in range(3):  # redrafts until the chain ends
            tended = night.json("nudge")["tend"]
            if not tended["resubmitted"]:
                break
            redraft = night.draft()
            review(night, redraft, deny_first=False)
        chains.append([d["attempt"] for d in night.drafts() if d["cluster_id"] == draft["id"]])
    assert chose.count(True) >= 2, chose  # floor: the week chose on 7 of 7 nights
    assert json.loads((night.root / ".hippo/sleep/formats.json").read_text())
    cores = night.cores()
    old = [name for name, text in cores.items() if "5433" in text and "5440" not in text]
    assert old and all("superseded_by" in cores[name] for name in old), list(cores)
    # the denial on night 1 came back chosen again, and landed
    assert any(len(chain) >= 2 for chain in chains), chains
    assert night.json("sleep", "audit")["fragments"]["lost"] == []  # every fragment has a fate
