"""The drafting model's server on only when needed: a real server process (the suite's
model_server.py, which takes llama-server's arguments) started by hippo for a sleep, kept
or stopped by the ticks, never stopped when somebody else started it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hippo_core.files.processes import process_alive
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.local_http import recorder
from tests.requires import missing
from tests.sleep_scene import Sleepy, make_sleepy

SERVER = Path(__file__).parent / "models" / "model_server.py"
OPERATION = {"kind": "new_core", "content": "deploys run from main", "source_indexes": [1]}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def night(make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path) -> Iterator[Sleepy]:
    scene = make_sleepy(make_workspace(), hippo)
    yield scene
    # A test that ends with a chain open leaves the server hippo started kept warm: stop it.
    try:
        pid = json.loads((scene.root / ".hippo/sleep/model.json").read_text()).get("pid")
    except (OSError, ValueError):
        return
    if isinstance(pid, int) and process_alive(pid):
        os.kill(pid, signal.SIGTERM)


def managed(night: Sleepy, tmp_path: Path, port: int, **lifecycle: Any) -> None:
    """``[sleep.model]`` at ``port``, its server the suite's program, started by hippo."""
    reply = tmp_path / "reply.json"
    reply.write_text(json.dumps({"operations": [OPERATION]}))
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    wrapper = tmp_path / "llama-server"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SERVER}" "$@"\n')
    wrapper.chmod(0o755)
    settings = {
        "server": str(wrapper),
        "model_path": str(model),
        "server_args": f"--reply-file {reply}",
        "poll_seconds": 0.1,
        **lifecycle,
    }
    lines = ["", "[sleep.model]", f'url = "http://127.0.0.1:{port}/v1"', "timeout_seconds = 10"]
    lines += ['draft = "abstractive"', "[sleep.model.lifecycle]"] + [
        f"{k} = {json.dumps(v)}" for k, v in settings.items()
    ]
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def sleep_on_three(night: Sleepy) -> dict[str, Any]:
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys")
    run = night.run("sleep", "tick", "--json")
    ticked: dict[str, Any] = json.loads(run.out)
    failed = (ticked["check"].get("slept") or {}).get("outcome") == "failed"
    # A tick whose sleep failed says so and exits 1; any other exits 0.
    assert run.code == (1 if failed else 0), run.err
    assert run.err.startswith("error: the sleep failed: ") if failed else "error" not in run.err
    return ticked


def model_state(night: Sleepy) -> dict[str, Any]:
    return json.loads((night.root / ".hippo" / "sleep" / "model.json").read_text())


def test_started_for_a_sleep_kept_while_the_chain_is_open_stopped_when_it_ends(
    night: Sleepy, tmp_path: Path
) -> None:
    managed(night, tmp_path, free_port())
    ticked = sleep_on_three(night)
    assert ticked["check"]["slept"]["outcome"] == "drafted"
    assert "model_started" in night.events()
    pid = model_state(night)["pid"]
    assert process_alive(pid)  # a chain is open and it was used just now: kept warm
    status = night.json("sleep", "status")["model_lifecycle"]
    assert status["running"] is True and status["owner"] == "hippo" and status["pid"] == pid
    draft = night.draft()
    night.as_person("review", draft["id"], "--approve", "0")
    ticked = night.json("sleep", "tick")  # the chain landed: the cycle is over
    assert ticked["model_stopped"] == "the cycle is over"
    assert not process_alive(pid) and "model_stopped" in night.events()


def test_in_external_mode_the_halves_of_a_tick_stop_what_hippo_started(
    night: Sleepy, tmp_path: Path
) -> None:
    """Something else calls tend and check (``POST /tend``, ``/check``, their CLI and MCP
    twins), never a whole tick: each ends with the lifecycle's step all the same."""
    managed(night, tmp_path, free_port())
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys")
    checked = night.json("sleep", "check")
    assert checked["slept"]["outcome"] == "drafted" and "model_stopped" not in checked
    pid = model_state(night)["pid"]
    assert process_alive(pid)  # the chain is open: kept warm
    night.as_person("review", night.draft()["id"], "--approve", "0")
    tended = night.json("sleep", "tend")  # closes the chain, and so ends the cycle
    assert tended["closed"] and tended["model_stopped"] == "the cycle is over"
    assert not process_alive(pid) and "model_stopped" in night.events()


def test_idle_past_keep_warm_it_is_stopped_even_mid_chain(night: Sleepy, tmp_path: Path):
    managed(night, tmp_path, free_port(), keep_warm_seconds=0.0)
    ticked = sleep_on_three(night)  # the tick that slept ends with the server idle
    assert ticked["check"]["slept"]["outcome"] == "drafted" and night.draft()
    assert ticked["model_stopped"] == "idle for keep_warm_seconds (0)"
    [started] = [e for e in night.json("sleep", "events") if e["event"] == "model_started"]
    assert not process_alive(started["pid"]) and "model_stopped" in night.events()


def test_a_server_somebody_else_started_is_used_and_never_stopped(
    night: Sleepy, tmp_path: Path
) -> None:
    port = free_port()
    managed(night, tmp_path, port)
    reply = tmp_path / "reply.json"
    theirs = subprocess.Popen(
        [
            sys.executable,
            str(SERVER),
            "-m",
            str(tmp_path / "tiny.gguf"),
            "--port",
            str(port),
            "--reply-file",
            str(reply),
        ]
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        assert sleep_on_three(night)["check"]["slept"]["outcome"] == "drafted"
        assert "model_started" not in night.events()
        night.as_person("review", night.draft()["id"], "--approve", "0")
        assert "model_stopped" not in night.json("sleep", "tick")
        assert theirs.poll() is None and "model_stopped" not in night.events()
    finally:
        theirs.terminate()
        theirs.wait(timeout=30)


def test_a_missing_model_file_fails_the_sleep_naming_it_and_the_retry_waits(
    night: Sleepy, tmp_path: Path
) -> None:
    managed(night, tmp_path, free_port())
    os.remove(tmp_path / "tiny.gguf")
    ticked = sleep_on_three(night)
    slept = ticked["check"]["slept"]
    assert slept["outcome"] == "failed" and str(tmp_path / "tiny.gguf") in slept["error"]
    assert "does not exist" in slept["error"] and "model_start_failed" in night.events()
    assert night.json("sleep", "status")["brief"] is None  # spent: it is never slept on again
    night.ok("brief", "--summary", "deploys, again")
    again = night.failed("sleep", "now")["sleep"]
    assert again["outcome"] == "failed" and "retry_after_seconds" in again["error"]


def test_a_server_that_never_becomes_healthy_is_stopped_and_the_sleep_fails(
    night: Sleepy, tmp_path: Path
) -> None:
    managed(night, tmp_path, free_port(), ready_timeout_seconds=1.0)
    settings = (night.root / ".hippo" / "settings.toml").read_text()
    settings = settings.replace(
        'server_args = "--reply-file', 'server_args = "--ready-after 600 --reply-file'
    )
    (night.root / ".hippo" / "settings.toml").write_text(settings)
    slept = sleep_on_three(night)["check"]["slept"]
    assert slept["outcome"] == "failed" and "ready_timeout_seconds (1)" in slept["error"]
    assert "model_start_failed" in night.events()
    assert "pid" not in model_state(night)


def test_with_handover_the_model_stops_before_the_main_model_is_woken(
    night: Sleepy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_sleep_notify import webhook

    url, heard, stop = webhook(monkeypatch)
    managed(night, tmp_path, free_port(), handover=True)
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write(f'\n[sleep.ripple]\ntype = "endpoint"\nurl = "{url}wake"\n')
    sleep_on_three(night)
    stopped = [e for e in night.json("sleep", "events") if e["event"] == "model_stopped"]
    assert [e["reason"] for e in stopped] == ["handing over to the main model"]
    assert [h["body"]["event"] for h in heard] == ["draft_submitted"]  # woken after
    stop()


@pytest.mark.slow
def test_a_real_llama_cpp_server_is_started_for_a_sleep_and_stopped_after(
    night: Sleepy, tmp_path: Path
) -> None:
    """llama-cpp-python's server with SmolLM2-135M (.ci/small-model.sh), started by hippo's
    own start line, answered (however poorly), and stopped by the tick that used it."""
    python, model = os.environ.get("HIPPO_TEST_LLAMA_PYTHON"), os.environ.get("HIPPO_TEST_SMOLLM2")
    if not python or not model or not Path(model).is_file():
        missing(
            "no small model: .ci/small-model.sh sets HIPPO_TEST_LLAMA_PYTHON and HIPPO_TEST_SMOLLM2"
        )
    port = free_port()
    start = (
        f"{python} -m llama_cpp.server --model {model} --host 127.0.0.1 --port {port} "
        "--n_ctx 4096 --n_threads 2"
    )
    lines = [
        "",
        "[sleep.model]",
        f'url = "http://127.0.0.1:{port}/v1"',
        'name = "smollm2"',
        "max_tokens = 300",
        "timeout_seconds = 300",
        "[sleep.model.lifecycle]",
        f"start = {json.dumps(start)}",
        f'health_url = "http://127.0.0.1:{port}/v1/models"',
        "ready_timeout_seconds = 240",
        "poll_seconds = 0.5",
        "keep_warm_seconds = 0",
    ]
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    ticked = sleep_on_three(night)
    slept = ticked["check"]["slept"]
    # The model answered: a draft, or a sleep failed on its JSON, never "unreachable".
    assert slept["outcome"] in ("drafted", "failed", "nothing to draft"), slept
    assert "could not be reached" not in str(slept.get("error", ""))
    [started] = [e for e in night.json("sleep", "events") if e["event"] == "model_started"]
    assert ticked.get("model_stopped") and not process_alive(started["pid"])


def test_a_server_that_dies_mid_answer_fails_the_sleep_and_spends_the_brief(
    night: Sleepy, tmp_path: Path
) -> None:
    managed(night, tmp_path, free_port())
    settings = (night.root / ".hippo" / "settings.toml").read_text()
    settings = settings.replace(
        'server_args = "--reply-file', 'server_args = "--die-on-call --reply-file'
    )
    (night.root / ".hippo" / "settings.toml").write_text(settings)
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys")
    slept = night.failed("sleep", "tick")["check"]["slept"]
    assert slept["outcome"] == "failed" and slept["error"]
    status = night.json("sleep", "status")
    assert status["brief"] is None and "The last sleep failed" in status["say"]
    assert night.drafts() == [] and "sleep_failed" in night.events()


KEY = "sk-local-LIFECYCLE-0123456789abcdef"


def test_the_start_line_in_events_has_the_api_key_masked(
    night: Sleepy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """W4: model_started kept the start command whole, --api-key and all; it is served by
    GET /events and sent by the webhook. The program and the other arguments stay."""
    monkeypatch.setenv("HIPPO_TEST_LOCAL_KEY", KEY)
    managed(night, tmp_path, free_port())
    settings = (night.root / ".hippo" / "settings.toml").read_text()
    settings = settings.replace(
        'server_args = "--reply-file', f'server_args = "--api-key {KEY} --reply-file'
    )
    settings = settings.replace(
        "timeout_seconds = 10", 'timeout_seconds = 10\napi_key_env = "HIPPO_TEST_LOCAL_KEY"', 1
    )
    (night.root / ".hippo" / "settings.toml").write_text(settings)
    ticked = sleep_on_three(night)
    assert ticked["check"]["slept"]["outcome"] == "drafted"  # the server took the key
    [started] = [e for e in night.json("sleep", "events") if e["event"] == "model_started"]
    command = started["command"]
    assert command[0] == str(tmp_path / "llama-server") and "-m" in command
    assert command[command.index("--api-key") + 1] == "[redacted:secret]"
    assert KEY not in (night.root / ".hippo" / "sleep" / "events.jsonl").read_text()


def test_a_start_line_that_fails_names_its_arguments_with_the_key_masked(
    night: Sleepy, tmp_path: Path
) -> None:
    managed(night, tmp_path, free_port())
    port = free_port()
    start = (
        f"{tmp_path / 'llama-server'} -m {tmp_path / 'missing.gguf'} --port {port} "
        f"--api-key={KEY} --hf-token hf_abcdefghijklmnopqrstuvwxyz0123"
    )
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write(f"start = {json.dumps(start)}\n")
    ticked = sleep_on_three(night)
    slept = ticked["check"]["slept"]
    assert slept["outcome"] == "failed" and "exited with status" in slept["error"]
    assert "--api-key=[redacted:secret] --hf-token [redacted:secret])" in slept["error"]
    events = (night.root / ".hippo" / "sleep" / "events.jsonl").read_text()
    assert "model_start_failed" in events and KEY not in events and "hf_abcdef" not in events
    assert KEY not in json.dumps(ticked)


def test_a_model_server_that_redirects_never_gives_the_key_to_the_other_host(
    night: Sleepy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """W1 for [sleep.model]: the prompt and the key went on to the host a 302 named, and
    its answer was taken for the model's."""
    elsewhere, stolen, stop_elsewhere = recorder(monkeypatch, "127.0.0.2")
    url, heard, stop = recorder(monkeypatch, status=302, location=f"{elsewhere}stolen")
    monkeypatch.setenv("SLEEP_KEY", "sk-sleepmodel-KEY-0123456789abcdef")
    lines = ["", "[sleep.model]", f'url = "{url}v1"', 'api_key_env = "SLEEP_KEY"']
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    slept = sleep_on_three(night)["check"]["slept"]
    assert slept["outcome"] == "failed"
    assert f"answered 302 to {elsewhere}stolen: hippo does not follow redirects" in slept["error"]
    assert heard.credentials() == ["Bearer sk-sleepmodel-KEY-0123456789abcdef"]
    assert stolen == [] and night.drafts() == []
    stop()
    stop_elsewhere()


def test_llama_cpp_python_started_by_hippo_gets_its_schema_form_first(
    night: Sleepy, tmp_path: Path
) -> None:
    """``response_format = "auto"`` with a server hippo starts that is llama-cpp-python's
    (``llama_cpp`` in its start line) sends the schema as ``json_object`` at once."""
    port = free_port()
    reply = tmp_path / "reply.json"
    reply.write_text(
        json.dumps({"operations": [{"kind": "new_core", "fragments": [1], "core": "none"}]})
    )
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    asked = tmp_path / "requests.jsonl"
    start = (
        f"{sys.executable} {SERVER} -m {tmp_path / 'tiny.gguf'} --host 127.0.0.1 --port {port} "
        f"--reply-file {reply} --requests-file {asked} --tag llama_cpp.server"
    )
    lines = ["", "[sleep.model]", f'url = "http://127.0.0.1:{port}/v1"', "timeout_seconds = 10"]
    lines += ["[sleep.model.lifecycle]", f"start = {json.dumps(start)}", "poll_seconds = 0.1"]
    lines += [f'health_url = "http://127.0.0.1:{port}/health"', "keep_warm_seconds = 0"]
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    assert sleep_on_three(night)["check"]["slept"]["outcome"] == "drafted"
    sent = [json.loads(line) for line in asked.read_text().splitlines()]
    assert [s["response_format"]["type"] for s in sent] == ["json_object"]
    assert "enum" in json.dumps(sent[0]["response_format"]["schema"])
