"""The built-in model backends, through the registered factories.

``command`` runs the scripted model in ``tests/models``; ``openai`` talks to a real HTTP
server on 127.0.0.1 that answers what each test scripts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from hippo_core.base.errors import HippoError
from hippo_core.dream.backends import MAX_REPLY_BYTES
from hippo_core.dream.model import ModelBackend, ModelUnreachable
from hippo_core.plugins.manager import load_plugins
from hippo_core.transcripts.privacy import model_call_line
from hippo_core.workspace.folder import Workspace

from .conftest import WorkspaceMaker
from .local_http import recorder, start_server
from .models import calls, model_settings, scripted_model


def _mark() -> str:
    """The line every prompt hippo sends begins with: the marker and this machine's key."""
    return f"{model_call_line()}\n"


def backend(root: Path, name: str = "command") -> ModelBackend:
    return load_plugins().backends()[name](Workspace.open(root))


def command_backend(
    make_workspace: WorkspaceMaker,
    tmp_path: Path,
    rules: list[dict[str, Any]],
    *,
    system_file: bool = True,
    timeout: float | None = None,
) -> tuple[ModelBackend, Path]:
    argv, script = scripted_model(tmp_path, rules, system_file=system_file)
    return backend(make_workspace(model_settings(argv, timeout=timeout))), script


# The command backend


def test_the_reply_comes_from_stdout_and_the_system_prompt_from_a_file(
    make_workspace: WorkspaceMaker, tmp_path: Path
):
    model, script = command_backend(
        make_workspace, tmp_path, [{"when": ["persona", "the note"], "reply": "réponse\n"}]
    )
    reply = model.complete("Check the note.", system="You are the persona.")
    assert model.name == "command"
    assert reply.text == "réponse\n" and not reply.too_large
    [call] = calls(script)
    assert call["system"] == "You are the persona."
    assert call["prompt"] == f"{_mark()}Check the note."  # every prompt says it is hippo's
    system_path = call["argv"][call["argv"].index("--system-file") + 1]
    assert system_path != "{system_file}"
    assert not Path(system_path).exists(), "the system file is deleted afterwards"


def test_without_system_file_the_system_prompt_goes_first_on_stdin(
    make_workspace: WorkspaceMaker, tmp_path: Path
):
    model, script = command_backend(make_workspace, tmp_path, [{"reply": "ok"}], system_file=False)
    assert model.complete("The prompt.", system="The persona.\n").text == "ok"
    assert model.complete("Alone.").text == "ok"
    first, second = calls(script)
    assert first["system"] is None
    assert first["prompt"] == f"{_mark()}The persona.\n\nThe prompt."
    assert second["prompt"] == f"{_mark()}Alone."


def test_calls_record_bytes_and_seconds(make_workspace: WorkspaceMaker, tmp_path: Path):
    model, _ = command_backend(make_workspace, tmp_path, [{"reply": "four"}])
    reply = model.complete("prompt é", system="system")
    assert reply.call.backend == "command"
    assert reply.call.bytes_in == len(f"{_mark()}prompt é".encode()) + len(b"system")
    assert reply.call.bytes_out == 4
    assert 0 < reply.call.seconds < 30


def test_a_rule_used_up_stops_answering(make_workspace: WorkspaceMaker, tmp_path: Path):
    model, _ = command_backend(
        make_workspace, tmp_path, [{"reply": "first", "repeat": 1}, {"reply": "then"}]
    )
    assert [model.complete("x").text for _ in range(3)] == ["first", "then", "then"]


def test_a_non_zero_exit_is_unreachable_with_the_last_stderr_line(
    make_workspace: WorkspaceMaker, tmp_path: Path
):
    rules = [{"exit": 3, "stderr": "warming up\nError: quota exceeded \n\n", "reply": "x"}]
    model, _ = command_backend(make_workspace, tmp_path, rules)
    with pytest.raises(ModelUnreachable) as caught:
        model.complete("prompt")
    assert str(caught.value) == "model_command exited with 3: Error: quota exceeded"


def test_no_matching_rule_exits_3_with_its_message(make_workspace: WorkspaceMaker, tmp_path: Path):
    model, _ = command_backend(make_workspace, tmp_path, [{"when": ["never"], "reply": "x"}])
    with pytest.raises(ModelUnreachable, match="exited with 3: scripted model: no rule matches"):
        model.complete("prompt")


def test_a_long_stderr_line_is_shortened(make_workspace: WorkspaceMaker, tmp_path: Path):
    model, _ = command_backend(make_workspace, tmp_path, [{"exit": 1, "stderr": "e" * 5000}])
    with pytest.raises(ModelUnreachable) as caught:
        model.complete("prompt")
    message = str(caught.value)
    assert message.startswith("model_command exited with 1: eee") and message.endswith("…")
    assert len(message) < 300 and "\n" not in message


def test_a_timeout_kills_the_program_and_is_unreachable(
    make_workspace: WorkspaceMaker, tmp_path: Path
):
    model, _ = command_backend(
        make_workspace, tmp_path, [{"sleep": 5, "reply": "late"}], timeout=0.5
    )
    started = time.monotonic()
    with pytest.raises(ModelUnreachable) as caught:
        model.complete("prompt")
    assert str(caught.value) == "model_command timed out after 0.5 s"
    assert time.monotonic() - started < 4, "it did not wait for the program"


@pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")
def test_a_timeout_kills_what_the_program_started(make_workspace: WorkspaceMaker):
    # sh waits for a sleep that holds stdout open: killing sh alone would leave the
    # reply pipe open for ten seconds.
    settings = model_settings(["sh", "-c", "sleep 10; echo done"], timeout=0.3)
    model = backend(make_workspace(settings))
    started = time.monotonic()
    with pytest.raises(ModelUnreachable, match="timed out"):
        model.complete("prompt")
    assert time.monotonic() - started < 5


def test_a_chatty_stderr_and_an_unread_prompt_do_not_block(
    make_workspace: WorkspaceMaker, tmp_path: Path
):
    rules = [{"stderr": "e" * 2_000_000, "reply": "ok"}]
    model, _ = command_backend(make_workspace, tmp_path, rules)
    assert model.complete("prompt").text == "ok"
    deaf = [sys.executable, "-c", "print('ok')"]
    assert backend(make_workspace(model_settings(deaf))).complete("p" * 5_000_000).text == "ok\n"


@pytest.mark.skipif(os.name != "posix", reason="a shell script as the program")
def test_a_wrapper_script_relative_to_the_workspace(
    make_workspace: WorkspaceMaker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # docs/models.md: a wrapper that hands the system file to a tool taking the text.
    root = make_workspace(model_settings(["./.hippo/model.sh", "{system_file}"]))
    wrapper = root / ".hippo" / "model.sh"
    wrapper.write_text('#!/bin/sh\nprintf "%s|%s|" "$(cat "$1")" "$(pwd)"\ncat\n', encoding="utf-8")
    wrapper.chmod(0o755)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the script is found from the workspace all the same
    reply = backend(root).complete("the prompt", system="the persona")
    persona, folder, prompt = reply.text.split("|")
    assert (persona, prompt) == ("the persona", f"{_mark()}the prompt")
    # It runs in a temporary folder, outside the workspace, which is gone afterwards.
    assert not folder.startswith(str(root)) and "hippo-model-" in folder
    assert not Path(folder).exists()
    # ... as models.md and security.md say (security.md said the workspace's folder).
    docs = Path(__file__).resolve().parent.parent / "docs"
    security = " ".join((docs / "security.md").read_text(encoding="utf-8").split())
    assert "never through a shell, in a fresh temporary folder outside the workspace" in security
    assert "in the workspace's folder" not in security


def test_a_program_that_is_not_there(make_workspace: WorkspaceMaker):
    model = backend(make_workspace(model_settings(["hippo-no-such-model", "-p"])))
    with pytest.raises(ModelUnreachable) as caught:
        model.complete("prompt")
    assert str(caught.value) == (
        "model_command: program 'hippo-no-such-model' not found; "
        "check model_command in .hippo/settings.toml"
    )


def test_no_model_command_is_a_settings_error(make_workspace: WorkspaceMaker):
    with pytest.raises(HippoError) as caught:
        backend(make_workspace(""))
    assert not isinstance(caught.value, ModelUnreachable)
    assert str(caught.value) == (
        "no model configured: set model_command in .hippo/settings.toml (see docs/models.md)"
    )


def test_a_50_mb_reply_is_too_large_and_not_kept(make_workspace: WorkspaceMaker, tmp_path: Path):
    model, _ = command_backend(make_workspace, tmp_path, [{"reply_bytes": 50_000_000}])
    started = time.monotonic()
    tracemalloc.start()
    try:
        reply = model.complete("prompt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reply.too_large and reply.text == ""
    assert MAX_REPLY_BYTES < reply.call.bytes_out < 50_000_000
    assert peak < 2 * MAX_REPLY_BYTES
    assert time.monotonic() - started < 20


def test_a_reply_of_exactly_the_limit_is_kept(make_workspace: WorkspaceMaker, tmp_path: Path):
    model, _ = command_backend(make_workspace, tmp_path, [{"reply_bytes": MAX_REPLY_BYTES}])
    reply = model.complete("prompt")
    assert not reply.too_large and len(reply.text) == MAX_REPLY_BYTES


def test_invalid_utf8_is_replaced(make_workspace: WorkspaceMaker, tmp_path: Path):
    script = tmp_path / "bytes.py"
    script.write_text("import sys; sys.stdout.buffer.write(b'ok \\xff')", encoding="utf-8")
    model = backend(make_workspace(model_settings([sys.executable, str(script)])))
    assert model.complete("prompt").text == "ok \ufffd"


# The openai backend


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    length: bool = True
    """Send a Content-Length header (without one, the body ends when the connection does)."""
    delay: float = 0.0


@dataclass
class Server:
    """A chat completions server on 127.0.0.1 that records requests and answers ``answer``."""

    url: str = ""
    answer: Answer = field(default_factory=Answer)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, content: Any) -> None:
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        self.answer = Answer(body=json.dumps(body).encode())


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.requests.append(
                {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
            )
            answer = state.answer
            time.sleep(answer.delay)
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                if answer.length:
                    self.send_header("Content-Length", str(len(answer.body)))
                else:
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(answer.body)
            except OSError:
                pass  # the client stopped reading, as it should for a body too large

        def log_message(self, format: str, *args: Any) -> None:
            pass

    url, stop = start_server(Handler, monkeypatch)
    state.url = f"{url}v1/"
    try:
        yield state
    finally:
        stop()


def openai_settings(url: str, *, key_env: str = "", timeout: float = 5.0) -> str:
    return (
        'model_backend = "openai"\n'
        f"model_timeout_seconds = {timeout!r}\n"
        "[openai]\n"
        f"url = {json.dumps(url)}\n"
        'model = "qwen-test"\n'
        f"api_key_env = {json.dumps(key_env)}\n"
        "max_tokens = 321\n"
    )


def test_openai_sends_the_chat_request_and_returns_the_content(
    make_workspace: WorkspaceMaker, server: Server, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HIPPO_TEST_KEY", "sk-test-123")
    model = backend(make_workspace(openai_settings(server.url, key_env="HIPPO_TEST_KEY")), "openai")
    assert "sk-test-123" not in repr(model)
    server.reply("Le résumé.")
    reply = model.complete("The prompt.", system="The persona.")
    assert model.name == "openai"
    assert reply.text == "Le résumé." and not reply.too_large
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test-123"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["body"] == {
        "model": "qwen-test",
        "messages": [
            {"role": "system", "content": "The persona."},
            {"role": "user", "content": f"{_mark()}The prompt."},
        ],
        "max_tokens": 321,
        "temperature": 0,
    }
    assert reply.call.backend == "openai"
    assert reply.call.bytes_in == len(json.dumps(request["body"]).encode())
    assert reply.call.bytes_out == len("Le résumé.".encode())
    assert reply.call.seconds > 0


def test_openai_without_system_or_key(make_workspace: WorkspaceMaker, server: Server):
    model = backend(make_workspace(openai_settings(server.url.rstrip("/"))), "openai")
    server.reply("ok")
    assert model.complete("Only this.").text == "ok"
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert "Authorization" not in request["headers"]
    assert request["body"]["messages"] == [{"role": "user", "content": f"{_mark()}Only this."}]


def test_openai_names_a_missing_key_variable(
    make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("HIPPO_MISSING_KEY", raising=False)
    root = make_workspace(openai_settings("http://127.0.0.1:9/v1", key_env="HIPPO_MISSING_KEY"))
    with pytest.raises(HippoError, match="HIPPO_MISSING_KEY, which is not set"):
        backend(root, "openai")


def test_openai_http_error_is_unreachable_with_the_body(
    make_workspace: WorkspaceMaker, server: Server
):
    model = backend(make_workspace(openai_settings(server.url)), "openai")
    server.answer = Answer(500, b'{"error": {"message": "model failed to load", "code": 500}}')
    with pytest.raises(ModelUnreachable) as caught:
        model.complete("prompt")
    assert str(caught.value) == (
        f"openai backend at {server.url}chat/completions: answered HTTP 500: model failed to load"
    )
    server.answer = Answer(404, b"<html>\n  Not Found\n</html>")
    with pytest.raises(ModelUnreachable, match="answered HTTP 404: <html> Not Found </html>"):
        model.complete("prompt")


def test_openai_connection_refused_is_unreachable(make_workspace: WorkspaceMaker):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    model = backend(make_workspace(openai_settings(url)), "openai")
    with pytest.raises(ModelUnreachable) as caught:
        model.complete("prompt")
    assert str(caught.value) == (
        f"openai backend at {url}/chat/completions: connection refused; is the server running?"
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"choices": []}',
        b'{"choices": [{"message": {"content": null}}]}',
        b'{"error": "overloaded"}',
        b"[1, 2]",
        b"not json at all",
    ],
)
def test_openai_an_answer_of_another_shape_is_unreachable(
    make_workspace: WorkspaceMaker, server: Server, body: bytes
):
    model = backend(make_workspace(openai_settings(server.url)), "openai")
    server.answer = Answer(body=body)
    with pytest.raises(ModelUnreachable, match=r"^openai backend at http://127\.0\.0\.1:\d+/v1/"):
        model.complete("prompt")


def test_openai_a_slow_server_times_out(make_workspace: WorkspaceMaker, server: Server):
    model = backend(make_workspace(openai_settings(server.url, timeout=0.3)), "openai")
    server.reply("late")
    server.answer.delay = 2
    started = time.monotonic()
    with pytest.raises(ModelUnreachable, match=r"no answer within 0\.3 s$"):
        model.complete("prompt")
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("length", [True, False], ids=["announced", "streamed"])
def test_openai_a_reply_over_the_limit_is_too_large(
    make_workspace: WorkspaceMaker, server: Server, length: bool
):
    model = backend(make_workspace(openai_settings(server.url)), "openai")
    server.answer = Answer(body=b" " * (MAX_REPLY_BYTES + 100_000), length=length)
    reply = model.complete("prompt")
    assert reply.too_large and reply.text == ""
    if length:  # the size was announced, so nothing was read
        assert reply.call.bytes_out == 0
    else:
        assert MAX_REPLY_BYTES < reply.call.bytes_out <= MAX_REPLY_BYTES + 64 * 1024


def test_the_key_variable_is_read_when_the_backend_is_made(
    make_workspace: WorkspaceMaker, server: Server, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HIPPO_TEST_KEY", "first")
    model = backend(make_workspace(openai_settings(server.url, key_env="HIPPO_TEST_KEY")), "openai")
    monkeypatch.setenv("HIPPO_TEST_KEY", "second")
    server.reply("ok")
    model.complete("prompt")
    assert server.requests[0]["headers"]["Authorization"] == "Bearer first"


def test_openai_a_redirect_is_unreachable_and_the_key_never_reaches_the_other_host(
    make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
):
    """W1: urllib followed a 302 from the chat POST to any host as a GET, with the key, and
    took its answer for the model's."""
    elsewhere, stolen, stop_elsewhere = recorder(monkeypatch, "127.0.0.2")
    url, heard, stop = recorder(monkeypatch, status=302, location=f"{elsewhere}stolen")
    monkeypatch.setenv("HIPPO_TEST_KEY", "sk-sleepmodel-KEY-0123456789abcdef")
    model = backend(make_workspace(openai_settings(f"{url}v1", key_env="HIPPO_TEST_KEY")), "openai")
    with pytest.raises(ModelUnreachable) as caught:
        model.complete("The prompt, with the fragments.")
    assert str(caught.value) == (
        f"openai backend at {url}v1/chat/completions: answered 302 to {elsewhere}stolen: "
        "hippo does not follow redirects"
    )
    assert heard.credentials() == ["Bearer sk-sleepmodel-KEY-0123456789abcdef"]
    assert stolen == []
    stop()
    stop_elsewhere()


def test_openai_on_this_machine_never_goes_through_the_proxy(
    server: Server, monkeypatch: pytest.MonkeyPatch
):
    """In a process of its own (urllib keeps the proxies it first read), with ``http_proxy``
    set and no ``no_proxy``: the key and the prompt go to the server on 127.0.0.1."""
    proxy, proxied, stop_proxy = recorder(monkeypatch, "127.0.0.2")
    server.reply("from the model")
    script = (
        "import sys\n"
        "from hippo_core import OpenAIBackend\n"
        "model = OpenAIBackend(sys.argv[1] + 'chat/completions', 'm', 10, 5.0, 'sk-local-0123')\n"
        "print(model.complete('prompt').text)\n"
    )
    env = {k: v for k, v in os.environ.items() if k.lower() != "no_proxy"}
    env["http_proxy"] = proxy
    run = subprocess.run(
        [sys.executable, "-c", script, server.url], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "from the model\n"
    assert proxied == [] and len(server.requests) == 1
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-local-0123"
    stop_proxy()
