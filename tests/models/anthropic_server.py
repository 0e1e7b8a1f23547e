"""A scripted Anthropic Messages API server on 127.0.0.1, for driving the real Claude Code.

Claude Code asks ``POST /v1/messages`` (``?beta=true``) with ``stream: true`` and reads the
answer as server-sent events. This server is stateless, as the one the research captures
were made with: the scenario is the keyword of the last prompt that has one, the step what
the tools called since it returned. Every request body is kept, in order.

    HIPPO-PLAIN   answer ``Hello from the scripted model.``
    HIPPO-SEARCH  call hippo's MCP tool ``search`` (``mcp__hippo__search``) with the words
                  after the keyword as the query (loading it with ``ToolSearch`` first when
                  Claude Code deferred it, as it does MCP tools), then answer with what it
                  returned, ``hippo said: ...``
    HIPPO-SHELL   run the rest of the prompt through Claude Code's ``Bash`` tool, then
                  answer ``shell said: ...`` with what it printed
    HIPPO-REVIEW  review the sleep draft named after the keyword as a main model woken by
                  the ripple does: show it (``review_show``), approve every operation
                  (``review_decide``), ``nudge``, then answer ``reviewed: ...`` with what
                  review_decide said

A request that does not offer the tool a scenario needs is answered ``no tool named ...``,
so a test fails on the reason, not on a timeout.
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

SEARCH_TOOL = "mcp__hippo__search"
#: How many times the model loads hippo's tool with ToolSearch before it gives up: Claude
#: Code may be asked before the MCP server it starts has listed its tools.
SEARCHES = 20
TOOL_SEARCH = "ToolSearch"
SHELL_TOOL = "Bash"
REVIEW_TOOLS = ("mcp__hippo__review_show", "mcp__hippo__review_decide", "mcp__hippo__nudge")


@dataclass
class AnthropicServer:
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The content blocks of the answer to ``body``."""
        prompt, calls = _scenario(body.get("messages", []))
        if "HIPPO-SHELL" in prompt:
            return _shell(prompt, calls)
        if "HIPPO-REVIEW" in prompt:
            return _review(body, prompt, calls)
        if "HIPPO-SEARCH" not in prompt:
            return [_text("Hello from the scripted model.")]
        done = dict(calls)
        if SEARCH_TOOL in done:
            return [_text("hippo said: " + done[SEARCH_TOOL])]
        offered = {tool.get("name") for tool in body.get("tools", [])}
        # Claude Code may defer MCP tools: a model loads one with ToolSearch first.
        if SEARCH_TOOL in offered or SEARCH_TOOL in done.get(TOOL_SEARCH, ""):
            query = prompt.split("HIPPO-SEARCH", 1)[1].strip(" :") or "hippo"
            return [_text("Searching hippo."), _call(SEARCH_TOOL, {"query": query}, len(calls))]
        searched = sum(name == TOOL_SEARCH for name, _ in calls)
        if TOOL_SEARCH in offered and searched < SEARCHES:
            if searched:  # "Some MCP servers may still be connecting": a moment, then again
                time.sleep(0.5)
            return [_call(TOOL_SEARCH, {"query": f"select:{SEARCH_TOOL}"}, len(calls))]
        return [_text(f"no tool named {SEARCH_TOOL} was offered")]


def _review(
    body: dict[str, Any], prompt: str, calls: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    draft = prompt.split("HIPPO-REVIEW", 1)[1].strip(" :").split()[0]
    done = dict(calls)
    offered = {tool.get("name") for tool in body.get("tools", [])}
    loaded = " ".join(text for name, text in calls if name == TOOL_SEARCH)
    if any(t not in offered and t not in loaded for t in REVIEW_TOOLS):
        searched = sum(name == TOOL_SEARCH for name, _ in calls)
        if TOOL_SEARCH not in offered or searched >= SEARCHES:
            return [_text(f"no tools named {', '.join(REVIEW_TOOLS)} were offered")]
        if searched:  # the MCP server may still be connecting: a moment, then again
            time.sleep(0.5)
        return [_call(TOOL_SEARCH, {"query": "select:" + ",".join(REVIEW_TOOLS)}, len(calls))]
    show, decide, nudge = REVIEW_TOOLS
    if nudge in done:
        return [_text("reviewed: " + done[decide])]
    if decide in done:
        return [_call(nudge, {}, len(calls))]
    if show in done:
        operations = json.loads(done[show])["item"]["operations"]
        decisions = [{"op": op["index"], "verdict": "approve"} for op in operations]
        return [_call(decide, {"id": draft, "decisions": decisions}, len(calls))]
    return [_call(show, {"id": draft}, len(calls))]


def _shell(prompt: str, calls: list[tuple[str, str]]) -> list[dict[str, Any]]:
    done = dict(calls)
    if SHELL_TOOL in done:
        return [_text("shell said: " + done[SHELL_TOOL])]
    command = prompt.split("HIPPO-SHELL", 1)[1].strip(" :")
    return [_call(SHELL_TOOL, {"command": command, "description": "run it"}, len(calls))]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _call(name: str, arguments: dict[str, Any], number: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_scripted_{number}", "name": name, "input": arguments}


def _scenario(messages: list[dict[str, Any]]) -> tuple[str, list[tuple[str, str]]]:
    """The last keyworded prompt, and each tool called since, with its result's text."""
    prompt, calls, names = "", [], {}
    for message in messages:
        content = message.get("content")
        blocks = [_text(content)] if isinstance(content, str) else content or []
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_use":
                names[block.get("id")] = block.get("name", "")
            elif kind == "tool_result":
                inner = block.get("content")
                parts = inner if isinstance(inner, list) else [{"text": str(inner)}]
                text = " ".join(str(part.get("text", "")) for part in parts)
                calls.append((names.get(block.get("tool_use_id"), ""), text))
            elif kind == "text" and message.get("role") == "user" and "HIPPO-" in block["text"]:
                prompt, calls = block["text"], []
    return prompt, calls


def _events(blocks: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": "msg_scripted", "type": "message", "role": "assistant", "content": []}
    message |= {"model": "claude-scripted", "stop_reason": None, "usage": usage}
    yield "message_start", {"type": "message_start", "message": message}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start, delta = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": block["text"]},
            )
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    delta = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}
    yield "message_delta", delta
    yield "message_stop", {"type": "message_stop"}


@pytest.fixture
def anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicServer]:
    """The scripted server, at ``anthropic.url`` (Claude Code's ``ANTHROPIC_BASE_URL``)."""
    server = AnthropicServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                self.send_error(404)
                return
            server.requests.append(body)
            blocks = server.answer(body)
            if not body.get("stream"):
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                reply = {"id": "msg_scripted", "type": "message", "role": "assistant"}
                reply |= {"model": "claude-scripted", "content": blocks, "stop_reason": stop}
                data = json.dumps({**reply, "usage": {"input_tokens": 10, "output_tokens": 5}})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data.encode())))
                self.end_headers()
                self.wfile.write(data.encode())
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for name, data in _events(blocks):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

    server.url, stop = start_server(Handler, monkeypatch)
    yield server
    stop()
