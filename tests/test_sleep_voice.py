"""The voice card: opt in, versions with their why, its cap, first in every draft and
redraft prompt, stamped on the draft; through the CLI, the tools and the service's routes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.chat_server import ChatServer
from tests.sleep_scene import Sleepy, make_sleepy, model_settings
from tests.test_sleep_service import serving, stop

CARD = "Ana runs the payments team; keep what she decided, not what she tried."
BLOCK = "These memories belong to someone"


def voice_on(night: Sleepy, max_chars: int = 1500) -> None:
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write(f"\n[sleep.voice]\nenabled = true\nmax_chars = {max_chars}\n")


def test_off_by_default_nothing_is_written_and_setting_is_refused(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    from hippo_core.workspace.folder import Workspace
    from hippo_packs.sleep.commands.tools import NoArguments, voice_card

    night = make_sleepy(make_workspace(), hippo)
    run = night.run("voice", "set", CARD, "--why", "first")
    assert run.code == 1 and "opt in" in run.err
    assert not (night.root / ".hippo" / "sleep" / "voice.json").exists()
    shown = voice_card(Workspace.open(night.root), NoArguments())
    assert shown["ok"] is False and "opt in" in shown["error"]


def test_versions_their_why_and_the_cap(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    from hippo_core.workspace.folder import Workspace
    from hippo_packs.sleep.commands.tools import NoArguments, voice_card

    night = make_sleepy(make_workspace(), hippo)
    voice_on(night, max_chars=100)
    assert night.json("voice", "show") == {"ok": True, "version": 0, "text": None, "max_chars": 100}
    empty = night.run("voice", "set", "   ")
    assert empty.code == 1 and "an empty card" in empty.err
    over = night.run("voice", "set", "x" * 101)
    assert over.code == 1 and "capped at 100 (voice.max_chars). Trim it" in over.err
    assert night.json("voice", "show")["version"] == 0
    assert night.json("voice", "set", CARD, "--why", "w" * 600)["version"] == 1
    again = night.json("voice", "set", CARD, "--why", "same words")
    assert again == {"ok": True, "changed": False, "version": 1}
    assert night.json("voice", "set", "Ana, payments lead", "--why", "shorter")["version"] == 2
    versions = night.json("voice", "history")["versions"]
    assert [v["version"] for v in versions] == [2, 1]  # newest first
    assert versions[0]["why"] == "shorter" and len(versions[1]["why"]) == 500
    assert voice_card(Workspace.open(night.root), NoArguments())["max_chars"] == 100
    for n in range(3, 206):
        night.json("voice", "set", f"card {n}")
    kept = night.json("voice", "history")["versions"]
    assert len(kept) == 200 and kept[0]["version"] == 205 and kept[-1]["version"] == 6


def test_an_unreadable_card_is_never_written_over(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    voice_on(night)
    path = night.root / ".hippo" / "sleep" / "voice.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{ torn")
    run = night.run("voice", "set", CARD)
    assert run.code == 1 and "unreadable" in run.err
    assert path.read_text() == "{ torn"


def test_the_card_is_first_in_every_draft_and_redraft_prompt(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer
) -> None:
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url))
    voice_on(night)
    night.ok("voice", "set", CARD, "--why", "who this is for")
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    operation = {"kind": "new_core", "content": "deploys run from main", "source_indexes": [1]}
    chat.operations(operation, when=("You turn short-term memory fragments",))
    chat.operations(operation, when=("its reviewer denied it",))
    night.ok("brief", "--summary", "deploys")
    night.ok("nudge")
    draft = night.draft()
    assert draft["extra"]["model_voice"] == 1
    night.ok("review", draft["id"], "--deny", "0=say which branch")
    night.ok("sleep", "tend")
    prompts = [m["content"] for r in chat.requests for m in r["messages"] if m["role"] == "user"]
    # After the line that marks every call as hippo's own (so its transcript is not indexed).
    bodies = [p.split("\n", 1)[1] for p in prompts if p.startswith("<hippo-model-call key=")]
    assert len(bodies) == 2 and all(b.startswith(BLOCK) and CARD in b for b in bodies)
    assert night.draft()["extra"]["model_voice"] == 1


def test_the_voice_routes(make_workspace: WorkspaceMaker, hippo: HippoRunner) -> None:
    night = make_sleepy(make_workspace(), hippo)
    served = serving(night.root)
    try:
        status, said = served.ask("GET", "/voice")
        assert status == 404 and "opt in" in said["error"]
    finally:
        stop(served)
    voice_on(night)
    served = serving(night.root)
    try:
        assert served.ask("GET", "/voice") == (200, {"version": 0, "text": None})
        body = json.dumps({"text": CARD, "why": "set over HTTP"})
        assert served.ask("PUT", "/voice", body) == (
            200,
            {"ok": True, "changed": True, "version": 1},
        )
        assert served.ask("PUT", "/voice", json.dumps({"text": ""}))[0] == 400
        assert served.ask("PUT", "/voice", json.dumps({"why": 3}))[0] == 400
        assert served.ask("GET", "/voice") == (200, {"version": 1, "text": CARD})
        status, found = served.ask("GET", "/voice/history")
        assert status == 200 and found["versions"][0]["why"] == "set over HTTP"
    finally:
        stop(served)
    assert json.loads(Path(night.root / ".hippo/sleep/voice.json").read_text())["versions"]
