"""A scripted OpenAI-compatible chat completions server on 127.0.0.1, for the sleep tests.

It answers ``POST /v1/chat/completions`` with the first rule whose every ``when`` substring
occurs in the request's messages and whose ``repeat`` is not used up (as server-sent chunks
when the request asks ``stream: true``, as agent programs do), and records every request.
A rule's keys, all optional::

    when      substrings that must all occur in the messages   []
    reply     the answer's text (a dict or list is sent as its JSON; a function of the
              request gives it; a :class:`Call` asks the agent to run one of its tools)  ""
    after_tool  only when the last message is (True) or is not (False) a tool's result  None
    delay     seconds to wait before answering                  0
    status    an HTTP status other than 200 (its body an error)  200
    repeat    how many requests the rule may answer              unlimited

Like a real server it holds the answer to the request's ``max_tokens``: a reply longer
than four characters a token is cut there and sent with ``finish_reason: "length"``.
No rule matching is HTTP 500 ``no rule matches``.

``refuses`` maps a ``response_format`` type to the status a server that does not take it
answers (llama-cpp-python's: 500, its validation error naming the field; others: 400),
before any rule is tried.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.local_http import start_server

CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Call:
    """An answer that calls the agent's tool ``name`` with ``arguments``."""

    name: str
    arguments: dict[str, Any]


@dataclass
class Rule:
    reply: Any = ""
    when: tuple[str, ...] = ()
    after_tool: bool | None = None
    delay: float = 0.0
    status: int = 200
    repeat: int | None = None
    used: int = 0


@dataclass
class ChatServer:
    url: str = ""
    rules: list[Rule] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    refuses: dict[str, int] = field(default_factory=dict)

    def add(self, reply: Any = "", *when: str, **options: Any) -> None:
        self.rules.append(Rule(reply, tuple(when), **options))

    def operations(
        self, *operations: dict[str, Any], when: tuple[str, ...] = (), **options: Any
    ) -> None:
        """Answer with ``{"operations": [...]}``."""
        self.add({"operations": list(operations)}, *when, **options)

    @property
    def prompts(self) -> list[str]:
        return [r["messages"][-1]["content"] for r in self.requests]

    def answer(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        form = (request.get("response_format") or {}).get("type")
        if form in self.refuses:
            where = "('body', 'response_format', 'type')"
            message = f"1 validation error: {{'loc': {where}, 'input': '{form}'}}"
            return self.refuses[form], {"error": {"message": message}}
        text = "\n".join(str(m.get("content")) for m in request.get("messages", []))
        for rule in self.rules:
            if rule.repeat is not None and rule.used >= rule.repeat:
                continue
            messages = request.get("messages") or [{}]
            if rule.after_tool is not None and (messages[-1].get("role") == "tool") != (
                rule.after_tool
            ):
                continue
            if all(part in text for part in rule.when):
                rule.used += 1
                time.sleep(rule.delay)
                if rule.status != 200:
                    return rule.status, {"error": {"message": f"scripted status {rule.status}"}}
                if isinstance(rule.reply, Call):
                    return 200, _called(rule.reply)
                reply = rule.reply(request) if callable(rule.reply) else rule.reply
                reply = reply if isinstance(reply, str) else json.dumps(reply)
                limit = int(request.get("max_tokens") or 0) * CHARS_PER_TOKEN
                finish = "stop"
                if limit and len(reply) > limit:
                    reply, finish = reply[:limit], "length"
                return 200, {
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": finish,
                        }
                    ]
                }
        return 500, {"error": {"message": "no rule matches"}}


def _called(call: Call) -> dict[str, Any]:
    function = {"name": call.name, "arguments": json.dumps(call.arguments)}
    message = {"role": "assistant", "content": None}
    message["tool_calls"] = [{"id": "call_scripted", "type": "function", "function": function}]
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    state = ChatServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            status, answer = state.answer(body)
            if body.get("stream") and status == 200:
                self.stream(answer)
                return
            data = json.dumps(answer).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass

        def stream(self, answer: dict[str, Any]) -> None:
            """The answer as server-sent chunks, as a client asking ``stream: true`` reads it."""
            choice = answer["choices"][0]
            delta = {"role": "assistant", "content": choice["message"]["content"]}
            if choice["message"].get("tool_calls"):
                calls = [{"index": 0, **c} for c in choice["message"]["tool_calls"]]
                delta = {"role": "assistant", "tool_calls": calls}
            chunks = [
                {"index": 0, "delta": delta, "finish_reason": None},
                {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]},
            ]
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for chunk in chunks:
                    data = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk"}
                    data |= {"created": 0, "model": "scripted", "choices": [chunk]}
                    self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
            except OSError:
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    url, stop = start_server(Handler, monkeypatch)
    state.url = f"{url}v1"
    try:
        yield state
    finally:
        stop()
