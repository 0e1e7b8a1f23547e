"""``hippo sleep serve``: a real service process on 127.0.0.1, asked over real HTTP.

Each test starts ``python -m hippo_core sleep serve --port 0`` in a workspace with the sleep
pack (mechanical mode: no model), reads the address it prints, and talks to it with the
standard library's HTTP client.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HippoRunner
from tests.sleep_scene import Sleepy, make_sleepy


@dataclass
class Served:
    process: subprocess.Popen[str]
    host: str
    port: int
    token: str = ""

    def ask(
        self,
        method: str,
        path: str,
        body: bytes | str | None = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = dict(headers or {})
        bearer = self.token if token is None else token
        if bearer:
            sent["Authorization"] = f"Bearer {bearer}"
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, json.loads(data)


def start(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hippo_core", "sleep", "serve", *args],
        cwd=root,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def serving(root: Path, *args: str, token: str = "", env: dict[str, str] | None = None) -> Served:
    process = start(root, "--port", "0", *args, env=env)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        raise AssertionError(process.stderr.read() if process.stderr else "no output")
    address = line.split("http://", 1)[1].split(" ", 1)[0]
    host, port = address.rsplit(":", 1)
    return Served(process, host, int(port), token)


def stop(served: Served) -> str:
    served.process.terminate()
    _, err = served.process.communicate(timeout=30)
    return err


@pytest.fixture
def sleepy(tmp_path: Path, hippo: HippoRunner) -> Sleepy:
    root = tmp_path / "ws"
    root.mkdir()
    return make_sleepy(root, hippo)


@pytest.fixture
def service(sleepy: Sleepy) -> Iterator[Served]:
    served = serving(sleepy.root)
    yield served
    assert "Traceback" not in stop(served)


def wait_for(check: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_the_routes_answer_what_the_cycle_says(service: Served, sleepy: Sleepy) -> None:
    status, health = service.ask("GET", "/health")
    assert status == 200 and health["ok"] is True and health["service"] == "hippo sleep"
    status, found = service.ask("GET", "/status")
    assert status == 200 and found["service"]["mode"] == "thread"
    assert {"bedtime_at", "brief_wanted", "last_check", "model_lifecycle", "open_chain"} <= set(
        found
    )
    # No brief: a sleep asks for one, and records no sleep.
    assert service.ask("POST", "/sleep") == (200, {"ok": True, "asked_for_brief": True})
    assert service.ask("GET", "/history") == (200, {"sleeps": []})
    for text in ("deploys run from main", "deploy from main", "main is where deploys run"):
        sleepy.remember(text, "deploy")
    status, slept = service.ask("POST", "/sleep?without_brief=true")
    assert status == 200 and slept["sleep"]["outcome"] == "drafted"
    assert service.ask("GET", "/history")[1]["sleeps"]
    status, events = service.ask("GET", "/events?limit=2")
    assert status == 200 and len(events["events"]) == 2
    assert events["events"][0]["at"] >= events["events"][1]["at"]  # newest first
    assert service.ask("GET", "/queue")[0] == 200
    status, tended = service.ask("POST", "/tend")
    assert status == 200 and "closed" in tended
    status, checked = service.ask("POST", "/check")
    assert status == 200 and "purged" in checked


def test_a_service_started_past_bedtime_ticks_after_the_warmup_not_a_heartbeat(
    tmp_path: Path, hippo: HippoRunner
) -> None:
    """An hour's heartbeat and a sleep overdue (the clock two days after the pack was
    added): the first tick comes after ``warmup_seconds``, not a heartbeat later."""
    root = tmp_path / "ws"
    root.mkdir()
    settings = "[sleep]\ntick_seconds = 3600\ntend_cycle = false\nwarmup_seconds = 1\n"
    make_sleepy(root, hippo, settings)
    served = serving(root, env={"HIPPO_NOW": str(time.time() + 2 * 86400)})  # two days on
    try:
        ticked = wait_for(lambda: served.ask("GET", "/status")[1]["service"]["last_tick_at"])
        status = served.ask("GET", "/status")[1]
        assert status["service"]["heartbeat_seconds"] == 3600 and ticked
        assert status["last_check"]  # the tick ran its check
    finally:
        assert "Traceback" not in stop(served)


def test_a_nudge_wakes_the_loop_which_first_waits_for_the_session(
    service: Served, tmp_path: Path
) -> None:
    done = tmp_path / "session-done"
    wait = f"import os, time\nwhile not os.path.exists({str(done)!r}): time.sleep(0.02)"
    session = subprocess.Popen([sys.executable, "-c", wait])  # ends when the test says so
    answer = service.ask("POST", "/nudge", json.dumps({"pid": session.pid}))
    assert answer == (200, {"ok": True, "woke": True, "message": "woke the loop; a tick runs now"})
    assert session.poll() is None  # it answered while the session still ran: at once
    time.sleep(0.5)
    assert service.ask("GET", "/status")[1]["service"]["last_tick_at"] is None  # still waiting
    done.touch()
    session.wait()
    ticked = wait_for(lambda: service.ask("GET", "/status")[1]["service"]["last_tick_at"])
    assert ticked and session.returncode == 0  # it ended by itself: never killed
    events = [e["event"] for e in service.ask("GET", "/events")[1]["events"]]
    assert "nudged" in events


def test_in_external_mode_a_nudge_runs_one_tick_itself(sleepy: Sleepy) -> None:
    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write('\n[sleep]\nmode = "external"\n')
    served = serving(sleepy.root)
    try:
        status, done = served.ask("POST", "/nudge")
        assert status == 200 and done["woke"] is True and {"tend", "check"} <= set(done)
        assert served.ask("GET", "/status")[1]["service"]["mode"] == "external"
    finally:
        stop(served)


def test_bad_requests_get_words_and_a_4xx_and_change_nothing(sleepy: Sleepy) -> None:
    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write('\n[sleep.serve]\nbearer_token_env = "HIPPO_SLEEP_BEARER"\n')
    served = serving(sleepy.root, env={"HIPPO_SLEEP_BEARER": "s3cret"}, token="s3cret")
    try:
        before = (sleepy.root / ".hippo" / "sleep" / "events.jsonl").exists()
        for token in ("", "wrong"):
            status, said = served.ask("POST", "/sleep", token=token)
            assert status == 401 and "needs its bearer" in said["error"]
        # Only the bearer itself, in the header: not a suffix of it, not another scheme, and
        # in the query only on /viewer (a browser's address bar sends no header).
        for header in ("Bearer xs3cret", "Basic s3cret", "s3cret", "Bearer s3cre"):
            status, said = served.ask("GET", "/status", token="", headers={"Authorization": header})
            assert status == 401, header
        assert served.ask("GET", "/status?token=s3cret", token="")[0] == 401
        viewer = http.client.HTTPConnection(served.host, served.port, timeout=30)
        viewer.request("GET", "/viewer?token=s3cret")
        assert viewer.getresponse().status == 200
        viewer.close()
        assert (sleepy.root / ".hippo" / "sleep" / "events.jsonl").exists() == before
        assert served.ask("GET", "/health")[0] == 200
        status, said = served.ask("POST", "/nudge", "{not json")
        assert status == 400 and said["error"].startswith("the body is not JSON")
        status, said = served.ask("POST", "/nudge", json.dumps({"pid": "me"}))
        assert status == 400 and "pid" in said["error"]
        status, said = served.ask("POST", "/nudge", b"x" * (1024 * 1024 + 1))
        assert status == 413
        chunks = http.client.HTTPConnection(served.host, served.port, timeout=30)
        chunks.request(  # no length said: the body is counted as it comes
            "POST",
            "/nudge",
            body=iter([b"{" * 65536] * 20),
            headers={"Authorization": "Bearer s3cret"},
            encode_chunked=True,
        )
        answer = chunks.getresponse()
        assert answer.status == 413, answer.read()
        chunks.close()
        status, said = served.ask("GET", "/nowhere")
        assert status == 404 and said["error"].startswith("no route /nowhere;")
        status, said = served.ask("GET", "/tend")
        assert (status, said["error"]) == (405, "/tend takes POST, not GET")
        status, said = served.ask("GET", "/events?limit=many")
        assert status == 400
    finally:
        assert "Traceback" not in stop(served)


def test_a_sleep_running_elsewhere_makes_a_route_answer_409(service: Served, sleepy: Sleepy):
    from hippo_core.locks import file_lock

    with file_lock(sleepy.root / ".hippo" / "sleep" / "sleep.lock", wait=5) as held:
        assert held is not None
        status, said = service.ask("POST", "/tend")
    assert status == 409 and said["error"].startswith("busy: a sleep or tend is running")
    assert service.ask("POST", "/tend")[0] == 200


def test_the_service_refuses_to_start_open_or_twice(sleepy: Sleepy) -> None:
    refused = start(sleepy.root, "--host", "0.0.0.0", "--port", "0")
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 1
    assert err.startswith("error: hippo sleep serve will not listen on 0.0.0.0 without a bearer")
    first = serving(sleepy.root)
    try:
        second = start(sleepy.root, "--port", "0")
        _, err = second.communicate(timeout=60)
        assert second.returncode == 1
        assert "another hippo sleep serve runs for this workspace" in err
    finally:
        stop(first)
    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write('\n[sleep.serve]\nbearer_token_env = "HIPPO_NO_SUCH_BEARER"\n')
    unset = start(sleepy.root, "--port", "0")
    _, err = unset.communicate(timeout=60)
    assert unset.returncode == 1 and "names HIPPO_NO_SUCH_BEARER, which is not set" in err


def test_mcp_at_slash_mcp_behind_the_bearer(sleepy: Sleepy) -> None:
    """The SDK's own HTTP client: the tools of `hippo mcp` with the service's nudge; a sleep
    running elsewhere answers busy; without the bearer, nothing."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from hippo_core.locks import file_lock

    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write('\n[sleep.serve]\nbearer_token = "mcp-bearer"\n')
    served = serving(sleepy.root, token="mcp-bearer")
    url = f"http://{served.host}:{served.port}/mcp"

    async def session(token: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as client,
            streamable_http_client(url, http_client=client) as (read, write, *_),
            ClientSession(read, write) as mcp,
        ):
            await mcp.initialize()
            names = {tool.name for tool in (await mcp.list_tools()).tools}
            woke = await mcp.call_tool("nudge", {})
            with file_lock(sleepy.root / ".hippo" / "sleep" / "sleep.lock", wait=5):
                busy = await mcp.call_tool("tend_now", {})
            asked = await mcp.call_tool("sleep_now", {})
            return {"names": names, "woke": woke, "busy": busy, "asked": asked}

    try:
        found = anyio.run(session, "mcp-bearer")
        assert {"search", "recall", "sleep_status", "sleep_now", "tend_now", "nudge"} <= found[
            "names"
        ]
        assert found["woke"].structured_content == {
            "ok": True,
            "woke": True,
            "message": "woke the loop; a tick runs now",
        }
        assert found["busy"].is_error
        assert found["busy"].content[0].text.startswith("busy: a sleep or tend is running")
        assert found["asked"].structured_content == {"ok": True, "asked_for_brief": True}
        assert served.ask("POST", "/mcp", "{}", token="wrong")[0] == 401
    finally:
        assert "Traceback" not in stop(served)


#: A plugin that kills its own process just before the n-th rename onto a file below
#: ``.hippo/sleep/`` ($HIPPO_TEST_KILL_AT): the moments a sleep writes its records.
KILLER = """
import os, signal

_at = int(os.environ.get("HIPPO_TEST_KILL_AT", "0"))
_seen = [0]
_real = os.replace


def _replace(source, destination, *args, **kwargs):
    if "/.hippo/sleep/" in os.fspath(destination):
        _seen[0] += 1
        if _seen[0] == _at:
            os.kill(os.getpid(), signal.SIGKILL)
    return _real(source, destination, *args, **kwargs)


os.replace = _replace
"""


@pytest.mark.parametrize("step", [1, 2, 3])
def test_a_service_killed_mid_sleep_leaves_records_the_next_start_goes_on_from(
    sleepy: Sleepy, tmp_path: Path, step: int
) -> None:
    """Killed at each of a sleep's first writes: the next service answers, and a sleep
    from there leaves exactly one pending draft holding the fragments, never two."""
    from tests.test_hot_plugins import make_distribution

    site = tmp_path / "killer-site"
    site.mkdir()
    make_distribution(site, "hippo_sleep_killer", KILLER)
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        sleepy.remember(text, "deploy")
    env = {
        "PYTHONPATH": str(site),
        "HIPPO_LOAD_PLUGINS": "sleep,hippo_sleep_killer",
        "HIPPO_TEST_KILL_AT": str(step),
    }
    doomed = serving(sleepy.root, env=env)
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        doomed.ask("POST", "/sleep?without_brief=true")
    doomed.process.communicate(timeout=30)
    assert doomed.process.returncode == -9
    served = serving(sleepy.root)  # the next start, without the killer
    try:
        status, found = served.ask("GET", "/status")
        assert status == 200
        if found["open_chain"] is None:  # killed before the draft was whole: sleep again
            status, slept = served.ask("POST", "/sleep?without_brief=true")
            assert status == 200 and slept["sleep"]["outcome"] == "drafted"
        drafts = [d for d in sleepy.drafts() if d["status"] == "pending"]
        assert len(drafts) == 1
        held = [i for op in drafts[0]["operations"] for i in op["source_short_ids"]]
        assert sorted(held) == sorted(f["id"] for f in _fragments(sleepy))
    finally:
        assert "Traceback" not in stop(served)


def _fragments(sleepy: Sleepy) -> list[dict[str, Any]]:
    from hippo_core.workspace import Workspace
    from hippo_packs.sleep.records import store

    return store.fragments(Workspace.open(sleepy.root))


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
)
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_the_mcp_mount_moves_and_the_host_check_turns_on(sleepy: Sleepy) -> None:
    env = {"HIPPO_SLEEP_MCP_MOUNT": "/tools/mcp"}
    served = serving(sleepy.root, env=env)
    try:
        status, answer = served.ask("POST", "/tools/mcp", INITIALIZE, headers=MCP_HEADERS)
        assert status == 200 and answer["result"]["serverInfo"]["name"] == "hippo"
        assert served.ask("POST", "/mcp", INITIALIZE, headers=MCP_HEADERS)[0] == 404
    finally:
        stop(served)
    served = serving(sleepy.root, env={"HIPPO_SLEEP_MCP_ALLOWED_HOSTS": "memory.example:7424"})
    try:
        conn = http.client.HTTPConnection(served.host, served.port, timeout=30)
        conn.request("POST", "/mcp", body=INITIALIZE, headers=MCP_HEADERS)
        assert conn.getresponse().status == 421  # this Host is not one it was told to take
        conn.close()
    finally:
        stop(served)
    refused = start(sleepy.root, "--port", "0", env={"HIPPO_SLEEP_MCP_MOUNT": "/status"})
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 1 and "HIPPO_SLEEP_MCP_MOUNT='/status'" in err
