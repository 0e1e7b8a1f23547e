"""``hippo sleep serve``: a real service process on 127.0.0.1, asked over real HTTP.

Each test starts ``python -m hippo_core sleep serve --port 0`` in a workspace with the sleep
pack (mechanical mode: no model), reads the address it prints, and talks to it with the
standard library's HTTP client.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hippo_core import Workspace
from hippo_core.notes.watched import socket_path, watched_fresh
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
        status, _, data = self.raw(method, path, body, token=token, headers=headers)
        return status, json.loads(data)

    def raw(
        self,
        method: str,
        path: str,
        body: bytes | str | None = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        """The status, headers and bytes of one answer; a body is sent as JSON unless
        ``headers`` name a Content-Type (or ``None`` as one, to send none)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = dict(headers or {})
        if body is not None and "Content-Type" not in sent:
            sent["Content-Type"] = "application/json"
        sent = {name: value for name, value in sent.items() if value is not None}
        bearer = self.token if token is None else token
        if bearer:
            sent["Authorization"] = f"Bearer {bearer}"
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, response.headers, data


def start(
    root: Path, *args: str, env: dict[str, str] | None = None, umask: int = -1
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hippo_core", "sleep", "serve", *args],
        cwd=root,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        umask=umask,
    )


def serving(
    root: Path,
    *args: str,
    token: str = "",
    env: dict[str, str] | None = None,
    umask: int = -1,
) -> Served:
    """A service started in ``root``; its bearer is ``token``, or the one it made (from the
    viewer's address it prints)."""
    process = start(root, "--port", "0", *args, env=env, umask=umask)
    assert process.stdout is not None
    line, viewer = process.stdout.readline(), process.stdout.readline()
    if not viewer:
        raise AssertionError(process.stderr.read() if process.stderr else "no output")
    address = line.split("http://", 1)[1].split(" ", 1)[0]
    host, port = address.rsplit(":", 1)
    made = viewer.split("?token=", 1)[1].split(" ", 1)[0] if "?token=" in viewer else ""
    return Served(process, host, int(port), token or ("" if made == "..." else made))


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
            headers={"Authorization": "Bearer s3cret", "Content-Type": "application/json"},
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
    from hippo_core.files.locks import file_lock

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


@pytest.mark.skipif(sys.platform != "linux", reason="the notes watcher needs inotify")
def test_while_it_serves_it_keeps_the_notes_index_fresh_for_the_hooks(
    sleepy: Sleepy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service answers the hooks' question as `hippo notes watch` does, and its socket
    goes with it."""
    runtime = tempfile.mkdtemp(prefix="hippo-run-")  # short, as a socket's path must be
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)  # the service's socket folder and ours
    workspace = Workspace.open(str(sleepy.root))
    index = workspace.inside(".hippo", "cache", "notes.sqlite")
    notes = workspace.inside(workspace.settings.notes_dir)
    with_terms = workspace.settings.relevance in ("bm25", "history")
    where = socket_path(index)
    assert where is not None and where.startswith(runtime)
    try:
        served = serving(sleepy.root)
        try:
            # The watcher's first scan comes before its socket.
            assert wait_for(lambda: watched_fresh(index, notes, with_terms), timeout=10)
        finally:
            assert "Traceback" not in stop(served)
        assert served.process.returncode == 0  # SIGTERM ran serve's `finally`
        assert not os.path.exists(where)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def test_mcp_at_slash_mcp_behind_the_bearer(sleepy: Sleepy) -> None:
    """The SDK's own HTTP client: the tools of `hippo mcp` with the service's nudge; a sleep
    running elsewhere answers busy; without the bearer, nothing."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from hippo_core.files.locks import file_lock

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
    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write('\n[sleep.serve]\nbearer_token = "kill-me"\n')  # no bearer to write
    env = {
        "PYTHONPATH": str(site),
        "HIPPO_LOAD_PLUGINS": "sleep,hippo_sleep_killer",
        "HIPPO_TEST_KILL_AT": str(step),
    }
    doomed = serving(sleepy.root, env=env, token="kill-me")
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        doomed.ask("POST", "/sleep?without_brief=true")
    doomed.process.communicate(timeout=30)
    assert doomed.process.returncode == -9
    served = serving(sleepy.root, token="kill-me")  # the next start, without the killer
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
    from hippo_core.workspace.folder import Workspace
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


def test_the_mcp_mount_moves_and_the_allowed_hosts_variable_adds_names(sleepy: Sleepy) -> None:
    env = {"HIPPO_SLEEP_MCP_MOUNT": "/tools/mcp"}
    served = serving(sleepy.root, env=env)
    try:
        status, answer = served.ask("POST", "/tools/mcp", INITIALIZE, headers=MCP_HEADERS)
        assert status == 200 and answer["result"]["serverInfo"]["name"] == "hippo"
        assert served.ask("POST", "/mcp", INITIALIZE, headers=MCP_HEADERS)[0] == 404
    finally:
        stop(served)
    served = serving(sleepy.root, env={"HIPPO_SLEEP_MCP_ALLOWED_HOSTS": "memory.example"})
    try:
        # The names it adds are taken on every route, /mcp's too; the service's own still.
        for host in ("memory.example", f"memory.example:{served.port}", None):
            headers = {**MCP_HEADERS, **({"Host": host} if host else {})}
            assert served.ask("POST", "/mcp", INITIALIZE, headers=headers)[0] == 200, host
            assert served.ask("GET", "/status", headers=headers)[0] == 200, host
        headers = {**MCP_HEADERS, "Host": "other.example"}
        assert served.ask("POST", "/mcp", INITIALIZE, headers=headers)[0] == 421
    finally:
        stop(served)
    refused = start(sleepy.root, "--port", "0", env={"HIPPO_SLEEP_MCP_ALLOWED_HOSTS": "a b"})
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 1 and "HIPPO_SLEEP_MCP_ALLOWED_HOSTS: 'a b' is not a Host" in err
    refused = start(sleepy.root, "--port", "0", env={"HIPPO_SLEEP_MCP_MOUNT": "/status"})
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 1 and "HIPPO_SLEEP_MCP_MOUNT='/status'" in err


# -- Safe by default: the service answers only its own origin (issue 26) -------------------


def kept(root: Path) -> dict[str, bytes]:
    """Every file of the cycle's store, the notes and the review records, as they are now
    (the service's own lock aside): what a refused request must leave as it was."""
    found = {}
    for folder in ("notes", ".hippo/sleep", ".hippo/proposals", ".hippo/receipts"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and path.name != "serve.lock":
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def with_work(sleepy: Sleepy, settings: str = "") -> None:
    """A workspace where every route that may change something would: fragments and a
    brief to sleep on, and the voice card on."""
    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write(f"\n[sleep.voice]\nenabled = true\n{settings}")
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        sleepy.remember(text, "deploy")
    sleepy.ok("brief", "--summary", "deploys mattered")


CARD = json.dumps({"text": "short and plain", "why": "a test"})
CALL = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "read_note", "arguments": {"path": "Home.md"}},
    }
)
#: Every route with the method and body that would change something or read something.
EVERY_ROUTE = [
    ("GET", "/", None),
    ("GET", "/health", None),
    ("GET", "/status", None),
    ("POST", "/sleep", None),
    ("POST", "/nudge", '{"pid": 1}'),
    ("POST", "/tend", None),
    ("POST", "/check", None),
    ("GET", "/queue", None),
    ("GET", "/history", None),
    ("GET", "/events", None),
    ("GET", "/voice", None),
    ("PUT", "/voice", CARD),
    ("GET", "/voice/history", None),
    ("GET", "/viewer", None),
    ("POST", "/mcp", CALL),
    ("POST", "/mcp", INITIALIZE),
]


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_foreign_host_is_refused_on_every_route_and_mcp_and_changes_nothing(
    sleepy: Sleepy,
) -> None:
    """S1, DNS rebinding: a page whose name now resolves to 127.0.0.1 sends its own name as
    the Host. Every route and /mcp answer 421 with the bearer itself, and nothing moves."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with_work(sleepy)
    served = serving(sleepy.root)
    port = served.port
    try:
        before = kept(sleepy.root)
        foreign = [
            "evil.test",
            f"evil.test:{port}",
            f"127.0.0.1.evil.test:{port}",
            f"localhost.:{port}",
            f"localhost:{port + 1}",
            f"127.0.0.1:{port}.evil.test",
            f"127.0.0.2:{port}",
            f"[::2]:{port}",
            "localhost",
        ]
        for host in foreign:
            for method, path, body in EVERY_ROUTE:
                headers = {**MCP_HEADERS, "Host": host}
                status, _, data = served.raw(method, path, body, headers=headers)
                assert status == 421, (host, method, path, data)
                assert f"not Host: {host};" in json.loads(data)["error"]
        assert kept(sleepy.root) == before  # no event, no draft, no voice card, no note
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            f"LocalHost:{port}",
            f"[::1]:{port}",
        ):
            assert served.ask("GET", "/health", headers={"Host": host})[0] == 200, host

        async def tools(host: str | None) -> Any:
            headers = {
                "Authorization": f"Bearer {served.token}",
                **({"Host": host} if host else {}),
            }
            with anyio.fail_after(30):
                async with (
                    httpx2.AsyncClient(headers=headers, timeout=30) as client,
                    streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as (
                        read,
                        write,
                        *_,
                    ),
                    ClientSession(read, write) as mcp,
                ):
                    await mcp.initialize()
                    return await mcp.call_tool("read_note", {"path": "Home.md"})

        assert not anyio.run(tools, None).is_error  # the SDK's own client, on our own name
        with pytest.raises(ExceptionGroup) as refused:  # and on a rebound one: nothing
            anyio.run(tools, f"evil.test:{port}")
        assert "Server returned an error response" in repr(refused.value)
        assert kept(sleepy.root) == before
    finally:
        assert "Traceback" not in stop(served)


def test_allowed_hosts_adds_names_with_their_port_or_any(sleepy: Sleepy) -> None:
    port = free_port()
    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write(f'\n[sleep.serve]\nallowed_hosts = ["Hippo.LAN:{port}", "memory.example"]\n')
    served = serving(sleepy.root, "--port", str(port))
    try:
        assert served.port == port
        for host in (f"hippo.lan:{port}", "memory.example", "memory.example:443"):
            assert served.ask("GET", "/status", headers={"Host": host})[0] == 200, host
        for host in ("hippo.lan", f"hippo.lan:{port + 1}", "other.example"):
            assert served.ask("GET", "/status", headers={"Host": host})[0] == 421, host
    finally:
        assert "Traceback" not in stop(served)
    settings = (sleepy.root / ".hippo" / "settings.toml").read_text()
    (sleepy.root / ".hippo" / "settings.toml").write_text(
        settings.replace('"memory.example"', '"http://memory.example/"')
    )
    refused = start(sleepy.root, "--port", "0")
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 1 and "allowed_hosts" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_a_change_from_another_origin_or_not_in_json_is_refused(sleepy: Sleepy) -> None:
    """S2, cross-site requests: with no bearer at all (bearer = "none"), a POST or PUT a
    page of another origin could send (a form, text/plain, no-cors fetch) is refused, and
    nothing moves; the service's own origin and programs that send JSON are served."""
    with_work(sleepy, '[sleep.serve]\nbearer = "none"\n')
    served = serving(sleepy.root)
    port = served.port
    assert served.token == ""
    changes = [
        ("POST", "/sleep", "{}"),
        ("POST", "/nudge", '{"pid": 1}'),
        ("POST", "/tend", "{}"),
        ("POST", "/check", "{}"),
        ("PUT", "/voice", CARD),
        ("POST", "/mcp", CALL),
    ]
    refusals: list[tuple[dict[str, str | None], int]] = [
        ({"Origin": "http://evil.test"}, 403),
        ({"Origin": f"http://evil.test:{port}"}, 403),
        ({"Origin": f"http://localhost:{port + 1}"}, 403),  # the same site, another origin
        ({"Origin": f"https://127.0.0.1:{port}.evil.test"}, 403),
        ({"Origin": "null"}, 403),
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({"Sec-Fetch-Site": "same-site"}, 403),
        ({"Content-Type": "text/plain"}, 415),
        ({"Content-Type": "text/plain;charset=UTF-8"}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Type": "multipart/form-data; boundary=x"}, 415),
        ({"Content-Type": None}, 415),  # a body, and no type said
    ]
    try:
        before = kept(sleepy.root)
        for method, path, body in changes:
            for headers, code in refusals:
                sent = {**MCP_HEADERS, **headers} if path == "/mcp" else headers
                status, _, data = served.raw(method, path, body, headers=sent)
                assert status == code, (method, path, headers, data)
            # No body, but a type a form sends: refused all the same.
            status, _, _ = served.raw(method, path, headers={"Content-Type": "text/plain"})
            assert status == 415, (method, path)
        assert kept(sleepy.root) == before
        own = f"http://127.0.0.1:{port}"
        assert served.ask("POST", "/check", "{}", headers={"Origin": own})[0] == 200
        assert served.ask("POST", "/tend", headers={"Sec-Fetch-Site": "same-origin"})[0] == 200
        assert served.ask("POST", "/tend")[0] == 200  # no body, no type: a program's POST
        typed = {"Content-Type": "application/json; charset=utf-8"}
        assert served.ask("PUT", "/voice", CARD, headers=typed)[0] == 200
    finally:
        assert "Traceback" not in stop(served)


def test_with_no_bearer_set_the_service_makes_one_keeps_it_owner_only_and_asks_for_it(
    sleepy: Sleepy,
) -> None:
    import stat

    path = sleepy.root / ".hippo" / "sleep" / "serve.token"
    served = serving(sleepy.root, umask=0)  # owner-only whatever the umask
    try:
        assert served.token and path.read_text().strip() == served.token
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        subprocess.run(["git", "init", "-q"], cwd=sleepy.root, check=True)
        ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=sleepy.root)
        assert ignored.returncode == 0  # never committed: hippo init ignored it
        status, said = served.ask("GET", "/status", token="")
        assert status == 401 and ".hippo/sleep/serve.token" in said["error"]
        for scheme in ("Bearer", "bearer", "BEARER", "bEaReR"):  # RFC 7235: any case
            sent = {"Authorization": f"{scheme} {served.token}"}
            assert served.ask("GET", "/status", token="", headers=sent)[0] == 200, scheme
        before = kept(sleepy.root)
        for route in ("/status", "/events", "/health", "/queue", "/"):  # ?token= on /viewer only
            assert served.ask("GET", f"{route}?token={served.token}", token="")[0] == 401
        for route in ("/sleep", "/nudge", "/tend", "/check", "/mcp"):
            assert served.ask("POST", f"{route}?token={served.token}", token="")[0] == 401
        assert kept(sleepy.root) == before
        status, headers, page = served.raw("GET", f"/viewer?token={served.token}", token="")
        assert status == 200 and b"<title>hippo sleep</title>" in page
        # A browser without the bearer is told how to open the page, as a page.
        status, headers, page = served.raw("GET", "/viewer", token="", headers=BROWSER)
        assert status == 401 and headers["Content-Type"].startswith("text/html")
        assert b"/viewer?token=" in page and b".hippo/sleep/serve.token" in page
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert served.ask("GET", "/viewer", token="")[0] == 401  # a program: words in JSON
    finally:
        assert "Traceback" not in stop(served)
    again = serving(sleepy.root)  # the same bearer on the next start
    try:
        assert again.token == served.token
    finally:
        stop(again)
    path.chmod(0o644)  # a copy others could read (as git checks files out) is no bearer
    refused = start(sleepy.root, "--port", "0")
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 1 and "serve.token can be read by others" in err
    path.unlink()
    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write('\n[sleep.serve]\nbearer_token_env = "HIPPO_SLEEP_BEARER"\n')
    chosen = serving(sleepy.root, env={"HIPPO_SLEEP_BEARER": "chosen-one"}, token="chosen-one")
    try:  # the bearer you set wins, and hippo keeps none of its own
        assert chosen.ask("GET", "/status")[0] == 200 and not path.exists()
    finally:
        stop(chosen)


BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def test_bearer_none_serves_without_one_on_loopback_only(sleepy: Sleepy) -> None:
    settings = sleepy.root / ".hippo" / "settings.toml"
    with settings.open("a") as handle:
        handle.write('\n[sleep.serve]\nbearer = "none"\n')
    served = serving(sleepy.root)
    try:
        assert served.token == "" and served.ask("GET", "/status")[0] == 200
        assert not (sleepy.root / ".hippo" / "sleep" / "serve.token").exists()
    finally:
        stop(served)
    refused = start(sleepy.root, "--host", "0.0.0.0", "--port", "0")
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 1
    assert err.startswith(
        'error: hippo sleep serve will not listen on 0.0.0.0 with bearer = "none"'
    )
    with settings.open("a") as handle:
        handle.write('bearer_token = "and-one"\n')
    refused = start(sleepy.root, "--port", "0")
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 1 and 'bearer = "none" and a bearer_token' in err


TOO_BIG = [
    "100000000000000000000000000000",
    "0",
    "-1",
    "4194305",
    "true",
    "false",
    "1.5",
    "1e400",
    '"1"',
    "[1]",
]


def test_no_nudge_can_stop_the_heartbeat(sleepy: Sleepy) -> None:
    """S3: a pid out of range is a 400 on the route and a tool error over MCP; after them
    all, a nudge still makes the heartbeat tick."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from hippo_core import process_alive

    for pid in (10**29, 2**63, -(10**29), 4194305, 2**31):
        assert process_alive(pid) is False, pid  # never raises, on any int
    served = serving(sleepy.root)
    try:
        for pid in TOO_BIG:
            status, said = served.ask("POST", "/nudge", f'{{"pid": {pid}}}')
            assert status == 400 and "from 1 to 4194304" in said["error"], pid

        async def nudges() -> list[Any]:
            headers = {"Authorization": f"Bearer {served.token}"}
            url = f"http://{served.host}:{served.port}/mcp"
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as client,
                streamable_http_client(url, http_client=client) as (read, write, *_),
                ClientSession(read, write) as mcp,
            ):
                await mcp.initialize()
                return [await mcp.call_tool("nudge", {"pid": pid}) for pid in (10**29, 0, True)]

        assert all(answer.is_error for answer in anyio.run(nudges))
        assert served.ask("GET", "/status")[1]["service"]["last_tick_at"] is None
        assert served.ask("POST", "/nudge")[0] == 200
        assert wait_for(lambda: served.ask("GET", "/status")[1]["service"]["last_tick_at"])
    finally:
        assert "Traceback" not in stop(served)


def test_a_tick_that_fails_is_told_and_the_next_one_runs(tmp_path: Path, hippo: HippoRunner):
    """The heartbeat survives a failing tick: the error is in /status and in a
    ``tick_failed`` event, and the next tick (a nudge's) runs."""
    root = tmp_path / "ws"
    root.mkdir()
    make_sleepy(root, hippo, "[sleep]\nwarmup_seconds = 1\n")
    state = root / ".hippo" / "sleep" / "state.json"
    state.mkdir(parents=True)  # where the tick keeps its state, a folder: it cannot write
    served = serving(root, env={"HIPPO_NOW": str(time.time() + 2 * 86400)})  # past bedtime
    try:
        error = wait_for(lambda: served.ask("GET", "/status")[1]["service"]["last_error"])
        assert "state.json" in error
        failed = wait_for(
            lambda: [
                e for e in served.ask("GET", "/events")[1]["events"] if e["event"] == "tick_failed"
            ]
        )
        assert failed[0]["error"] == error
        state.rmdir()
        assert served.ask("POST", "/nudge")[0] == 200
        ticked = wait_for(lambda: served.ask("GET", "/status")[1]["service"]["last_tick_at"])
        assert ticked and served.ask("GET", "/status")[1]["service"]["last_error"] is None
    finally:
        err = stop(served)
    assert "Traceback" not in err and "the tick failed: " in err


def test_every_query_field_takes_ascii_digits_in_range_only(service: Served) -> None:
    """S4: Unicode digits that str.isdigit takes and int() does not (or does) are a 400."""
    for raw in ("%C2%B9", "%D9%A1", "%EF%BC%91", "0", "10001", "-1", "", "1.0", "+1", "1e3"):
        status, said = service.ask("GET", f"/events?limit={raw}")
        assert status == 400 and said["error"].startswith("limit "), raw
    assert service.ask("GET", "/events?limit=10000")[0] == 200
    status, said = service.ask("POST", "/sleep?without_brief=maybe")
    assert status == 400 and said["error"] == "without_brief 'maybe': give true or false"
    assert service.ask("POST", "/sleep?without_brief=FALSE")[0] == 200


def test_a_slow_or_idle_client_is_cut_and_the_others_are_served(sleepy: Sleepy) -> None:
    """S5: half a request line, nothing at all, a header every 0.3 s, or half of the next
    request on a kept-alive connection: each is cut within the bound
    (request_timeout_seconds, 1 s here), with a 408 when it had begun a request, while a
    whole request is served meanwhile."""
    import socket

    with (sleepy.root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write("\n[sleep.serve]\nrequest_timeout_seconds = 1\n")
    served = serving(sleepy.root)
    host = f"Host: 127.0.0.1:{served.port}\r\nAuthorization: Bearer {served.token}\r\n".encode()
    slow = [socket.create_connection((served.host, served.port)) for _ in range(4)]
    try:
        began = time.monotonic()
        slow[0].sendall(b"GET /sta")
        slow[2].sendall(b"GET /status HTTP/1.1\r\n" + host)
        slow[3].sendall(b"GET /health HTTP/1.1\r\n" + host + b"\r\n")
        answer = http.client.HTTPResponse(slow[3])
        answer.begin()
        assert answer.status == 200 and answer.read()  # answered whole, and kept alive
        answer.close()
        slow[3].sendall(b"GET /he")
        assert served.ask("GET", "/health")[0] == 200  # the others are served meanwhile
        for _ in range(10):
            with contextlib.suppress(OSError):
                slow[2].sendall(b"X-Drip: 1\r\n")
            time.sleep(0.3)
        for number, connection in enumerate(slow):
            connection.settimeout(10)
            said = b""
            while chunk := connection.recv(65536):
                said += chunk
            if number == 1:  # it sent nothing: closed without a word
                assert said == b""
            else:
                assert said.startswith(b"HTTP/1.1 408"), number
                assert said.endswith(b"too long to arrive\n"), number
        assert time.monotonic() - began < 6
        assert served.ask("GET", "/health")[0] == 200
    finally:
        for connection in slow:
            connection.close()
        assert "Traceback" not in stop(served)
