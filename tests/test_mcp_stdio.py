"""`hippo mcp` at the end of its input: every request read before it is answered, then the
server exits 0. The real server in a subprocess, its stdin written and closed as a client
piping its messages in does (``printf ... | hippo mcp``)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.chat_server import ChatServer
from tests.sleep_scene import make_sleepy, model_settings
from tests.test_mcp import SERVER, Raw, server_env

CLIENT = {"name": "piped", "version": "0"}
INITIALIZE = {
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT},
}
INITIALIZED = {"method": "notifications/initialized"}


def piped(cwd: Path, *messages: dict[str, Any]) -> tuple[int, list[dict[str, Any]], str]:
    """``messages`` written to the server at once and its stdin closed: the exit code,
    every answer it wrote, its stderr."""
    lines = b"".join(json.dumps({"jsonrpc": "2.0", **m}).encode() + b"\n" for m in messages)
    run = subprocess.run(
        SERVER, cwd=cwd, env=server_env(), input=lines, capture_output=True, timeout=60
    )
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    return run.returncode, answers, run.stderr.decode()


def sleepy(root: Path, hippo: HippoRunner, chat: ChatServer) -> None:
    """A workspace whose ``nudge`` asks the model, which takes 1.5 seconds to answer."""
    night = make_sleepy(root, hippo, model_settings(chat.url))
    for text in ("Deploys run from main after CI passes", "we deploy from main now", "CI on main"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys")
    operation = {"kind": "new_core", "content": "Deploys run from main.", "topic": "deploy"}
    chat.operations(
        {**operation, "source_indexes": [1, 2, 3], "rationale": "three say so"}, delay=1.5
    )


def test_initialize_initialized_and_tools_list_then_the_end_get_both_answers(
    make_workspace: WorkspaceMaker,
) -> None:
    code, answers, err = piped(
        make_workspace(), INITIALIZE, INITIALIZED, {"id": 2, "method": "tools/list"}
    )
    assert code == 0 and err == ""
    assert [a["id"] for a in answers] == [1, 2]
    assert "search" in {tool["name"] for tool in answers[1]["result"]["tools"]}


def test_every_request_before_the_end_is_answered_errors_and_a_repeated_id_too(
    make_workspace: WorkspaceMaker,
) -> None:
    call = {"method": "tools/call", "params": {"name": "recall", "arguments": {"query": "home"}}}
    code, answers, err = piped(
        make_workspace(),
        INITIALIZE,
        INITIALIZED,
        {"id": 2, **call},
        {"id": 2, "method": "tools/list"},  # the same id again: each is answered
        {"id": "three", "method": "no/such/method"},
        {"id": 4, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}},
    )
    assert code == 0 and err == ""
    assert sorted(str(a["id"]) for a in answers) == ["1", "2", "2", "4", "three"]
    by_id = {str(a["id"]): a for a in answers if "error" in a or "isError" in a.get("result", {})}
    assert by_id["three"]["error"]["code"] == -32601
    assert by_id["4"]["result"]["isError"] is True


def test_a_slow_call_read_before_the_end_is_answered_before_the_server_exits(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer, tmp_path: Path
) -> None:
    root = make_workspace()
    sleepy(root, hippo, chat)
    raw = Raw(root, tmp_path / "stderr.txt")
    raw.start()
    raw.call(1, "nudge")
    assert raw.process.stdin is not None and raw.process.stdout is not None
    raw.process.stdin.close()  # the end of input, with the call still asking the model
    answer = raw.answer()
    assert answer["id"] == 1 and answer["result"]["isError"] is False, answer
    assert raw.process.wait(timeout=30) == 0
    raw.process.stdout.close()
    raw.log.close()
    assert (tmp_path / "stderr.txt").read_text() == ""


def test_a_request_the_client_cancelled_keeps_the_server_waiting_for_nothing(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer, tmp_path: Path
) -> None:
    """The server answers no cancelled request, so the end of input does not wait for one."""
    root = make_workspace()
    sleepy(root, hippo, chat)
    raw = Raw(root, tmp_path / "stderr.txt")
    raw.start()
    raw.call(7, "nudge")
    deadline = time.monotonic() + 20
    while not chat.requests:  # the call is under way
        assert time.monotonic() < deadline and raw.process.poll() is None
        time.sleep(0.02)
    raw.send({"method": "notifications/cancelled", "params": {"requestId": 7}})
    assert raw.process.stdin is not None and raw.process.stdout is not None
    raw.process.stdin.close()
    assert raw.process.wait(timeout=30) == 0
    raw.process.stdout.close()
    raw.log.close()
