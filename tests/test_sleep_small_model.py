"""The sleep cycle against a real small model (SmolLM2-135M on llama-cpp's server): whatever
it answers, a sleep drafts operations that passed the checks or fails with one clear line,
keeps its brief when it fails, and never leaves a record that lies."""

from __future__ import annotations

import json

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.local_http import PROXIES
from tests.models.chat_server import ChatServer
from tests.sleep_scene import make_sleepy, model_settings

pytestmark = pytest.mark.slow

FRAGMENTS = (
    ("Deploys run from main after CI passes.", "deploy"),
    ("We deploy from main now, never from release branches.", "deploy"),
    ("Deploy only when CI is green on main.", "deploy"),
    ("The user likes green tea in the afternoon.", "tea"),
    ("Green tea, not coffee, after lunch.", "tea"),
)


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for proxy in PROXIES:
        monkeypatch.delenv(proxy, raising=False)


@pytest.mark.parametrize("max_tokens", [2000, 40])
def test_a_sleep_with_a_real_small_model_drafts_checked_operations_or_fails_cleanly(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    small_model: str,
    max_tokens: int,
):
    settings = model_settings(small_model).replace("timeout_seconds = 10", "timeout_seconds = 300")
    settings += f"max_tokens = {max_tokens}\n"
    night = make_sleepy(make_workspace(), hippo, settings)
    texts = [text for text, _topic in FRAGMENTS]
    for text, topic in FRAGMENTS:
        night.remember(text, topic)
    brief = night.json("brief", "--summary", "Deploys and tea", "--promote", "tea")
    ticked = night.run("nudge", "--json")
    assert "Traceback" not in ticked.err, ticked.err
    slept = json.loads(ticked.out)["check"]["slept"]
    assert slept.get("calls", 2) == 2, slept  # deploy (three fragments) and tea (promoted)
    # A sleep that failed exits 1 with one error line; any other exits 0.
    assert ticked.code == (1 if slept["outcome"] == "failed" else 0), ticked.err
    if slept["outcome"] == "failed":
        assert slept["error"].startswith(
            (
                "the model's answer was not the JSON",
                "the model's answer was empty",
                "the answer was cut off",
            )
        )
        assert ticked.err == f"error: the sleep failed: {slept['error']}\n"
        assert night.json("sleep", "status")["brief"] is None  # spent: a fresh one is asked for
        spent = json.loads((night.root / f".hippo/sleep/briefs/{brief['id']}.json").read_text())
        assert spent["failure"] == slept["error"] and night.drafts() == []
        return
    if slept["outcome"] == "nothing to draft":  # JSON, but no operation passed the checks
        assert night.drafts() == [], slept
        assert slept["dropped"] or slept["model_failures"] or slept["calls"], slept
        return
    assert slept["outcome"] == "drafted", slept
    draft = night.draft()
    assert 1 <= len(draft["operations"]) <= len(FRAGMENTS) + 1
    for op in draft["operations"]:
        assert op["kind"] in ("new_core", "attach", "supersede", "verbatim")
        assert set(op["source_short_ids"]) <= {f["id"] for f in night.json("remember", "list")}
        assert op["content"] and any(
            word in " ".join(texts).lower() for word in op["content"].lower().split()
        )
    approve = [
        {"op": op["index"], "verdict": "approve", "restate": True} for op in draft["operations"]
    ]
    (night.root / "d.json").write_text(json.dumps(approve))
    landed = night.run("review", draft["id"], "--decisions", str(night.root / "d.json"), "--json")
    assert "Traceback" not in landed.err
    if landed.code == 0:
        assert json.loads(landed.out)["status"] == "reviewed"
        assert len(night.cores()) >= 1
    else:
        assert landed.err.startswith("error: operation ") and night.draft()["status"] == "pending"


def test_a_redraft_from_a_real_small_model_comes_back_checked_or_fails_cleanly(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, small_model: str, chat: ChatServer
):
    # The first attempt comes from the scripted model; the redraft from the real one.
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url))
    for text, topic in FRAGMENTS[:3]:
        night.remember(text, topic)
    chat.operations({"kind": "new_core", "content": "Deploys run from main after CI passes."})
    night.ok("brief", "--summary", "deploys")
    night.ok("nudge")
    draft = night.draft()
    night.ok("review", draft["id"], "--deny", "0=say that release branches are not used")
    settings = night.root / ".hippo/settings.toml"
    text = settings.read_text().replace(chat.url, small_model)
    settings.write_text(text.replace("timeout_seconds = 10", "timeout_seconds = 300"))
    tended = night.run("sleep", "tend", "--json")
    assert tended.code == 0 and "Traceback" not in tended.err, tended.err
    done = json.loads(tended.out)
    if done["resubmitted"]:
        second = night.draft()
        assert second["attempt"] == 2 and second["previous_draft_ids"] == [draft["id"]]
        for op in second["operations"]:
            assert "restated_content" not in op and op["redraft_of"] == 0
    elif done.get("error"):  # not the JSON asked for: the tend says so, the chain waits
        assert done["error"].startswith("the redraft of "), done
        assert done["deferred"] == [draft["id"]] and night.draft()["status"] == "reviewed"
        assert "sleep_failed" in night.events()
    else:  # JSON, but no operation passed the checks: nothing came back, the chain ends
        assert done["closed"] == [draft["id"]], done
        assert night.draft()["extra"]["redraft"] == "nothing came back"
        assert "chain_ended" in night.events()
