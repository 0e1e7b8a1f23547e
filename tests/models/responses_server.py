"""A scripted OpenAI Responses API server on 127.0.0.1, for driving the real Codex CLI.

Codex (a ``model_providers`` entry with ``wire_api = "responses"``) asks
``POST /v1/responses`` with ``stream: true`` and reads the answer as server-sent events:
the output items, each as ``response.output_item.done``, then ``response.completed``.
Every request is kept, with its path, in order; anything else Codex asks (a list of
models) is answered 404, which it takes in its stride.

The turns are stateless, as in the research captures: the scenario is the keyword of the
last user message that has one, the step what the tools returned since.

    HIPPO-PLAIN   answer ``Hello from the scripted model.``
    HIPPO-SEARCH  call hippo's MCP tool ``search`` with the words after the keyword as the
                  query, then answer ``hippo said: ...`` with what it returned
    HIPPO-SHELL   run the rest of the prompt through Codex's ``exec_command`` tool, then
                  answer ``shell said: ...`` with what it printed

Codex defers an MCP server's tools behind its client-side ``tool_search``: the model
searches (a ``tool_search_call``), Codex answers with the tools found (a
``tool_search_output``, hippo's as functions inside a ``namespace`` tool), and the call
names the namespace and the function, as Codex's own calls in a namespace do. A
request that does not offer the tool a scenario needs is answered ``no tool named ...``,
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

#: How many times the model searches for hippo's tool before it gives up: Codex may search
#: before the MCP server it starts has listed its tools.
SEARCHES = 20
USAGE = {
    "input_tokens": 10,
    "input_tokens_details": None,
    "output_tokens": 5,
    "output_tokens_details": None,
    "total_tokens": 15,
}


@dataclass
class ResponsesServer:
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def turns(self) -> list[dict[str, Any]]:
        """The bodies of the ``/responses`` requests: what the agent's model was asked."""
        return [r["body"] for r in self.requests if r["path"].endswith("/responses")]

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The output items answering ``body``."""
        prompt, results = _scenario(body.get("input", []))
        if "HIPPO-SHELL" in prompt:
            if results:
                return [_message("shell said: " + results[-1])]
            command = prompt.split("HIPPO-SHELL", 1)[1].strip(" :")
            arguments = {"cmd": command, "yield_time_ms": 30000}
            call = {"type": "function_call", "id": "fc_scripted_1", "call_id": "call_scripted_1"}
            call |= {"name": "exec_command", "arguments": json.dumps(arguments)}
            return [call | {"status": "completed"}]
        if "HIPPO-SEARCH" not in prompt:
            return [_message("Hello from the scripted model.")]
        items = body.get("input", [])
        loaded = [t for i in items if i.get("type") == "tool_search_output" for t in i["tools"]]
        found = _search_tool([*body.get("tools", []), *loaded])
        if found is None:
            offered = {tool.get("type") for tool in body.get("tools", [])}
            searched = sum(item.get("type") == "tool_search_call" for item in items)
            if "tool_search" in offered and searched < SEARCHES:
                if searched:  # hippo's server may still be starting: give it a moment
                    time.sleep(0.5)
                return [_tool_search("hippo search")]
            return [_message("no tool named search from hippo was offered")]
        if results:
            return [_message("hippo said: " + results[-1])]
        namespace, name = found
        query = prompt.split("HIPPO-SEARCH", 1)[1].strip(" :") or "hippo"
        call = {"type": "function_call", "id": "fc_scripted_1", "call_id": "call_scripted_1"}
        call |= {"name": name, "arguments": json.dumps({"query": query}), "status": "completed"}
        if namespace:
            call["namespace"] = namespace
        return [_message("Searching hippo."), call]


def _message(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {"type": "message", "id": "msg_scripted", "role": "assistant", "content": content}


def _tool_search(query: str) -> dict[str, Any]:
    """A call of Codex's own tool search, which loads the MCP tools it deferred."""
    item = {"type": "tool_search_call", "id": "ts_scripted_1", "call_id": "ts_scripted_1"}
    return item | {"status": "completed", "execution": "client", "arguments": {"query": query}}


def _search_tool(tools: list[dict[str, Any]]) -> tuple[str, str] | None:
    """hippo's ``search`` among the offered tools: ``(namespace, name)``, the namespace
    empty for a tool offered on its own."""
    for tool in tools:
        name = str(tool.get("name", ""))
        if tool.get("type") == "namespace" and "hippo" in name:
            for inner in tool.get("tools", []):
                if str(inner.get("name", "")).endswith("search"):
                    return name, str(inner["name"])
        elif name.endswith("search") and "hippo" in name:
            return "", name
    return None


def _scenario(items: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """The last keyworded user text, and the output of each call since."""
    prompt, results = "", []
    for item in items:
        kind = item.get("type")
        if kind == "message" and item.get("role") == "user":
            for part in item.get("content") or []:
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str) and "HIPPO-" in text:
                    prompt, results = text, []
        elif kind == "function_call_output":
            output = item.get("output")
            results.append(output if isinstance(output, str) else json.dumps(output))
    return prompt, results


def _events(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    response = {"id": "resp_scripted", "object": "response", "status": "in_progress"}
    yield {"type": "response.created", "response": response}
    for index, item in enumerate(items):
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    done = {**response, "status": "completed", "output": items, "usage": USAGE}
    yield {"type": "response.completed", "response": done}


@pytest.fixture
def responses_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ResponsesServer]:
    """The scripted server, at ``responses_api.url`` (a Codex provider's ``base_url``)."""
    server = ResponsesServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            server.requests.append({"path": self.path, "body": None})
            self.send_error(404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            server.requests.append({"path": self.path, "body": body})
            if not self.path.endswith("/responses"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for event in _events(server.answer(body)):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

    url, stop = start_server(Handler, monkeypatch)
    server.url = f"{url}v1"
    yield server
    stop()
