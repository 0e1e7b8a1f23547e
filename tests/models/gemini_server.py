"""A scripted Gemini API server on 127.0.0.1, for driving the real Gemini CLI.

Gemini CLI (``GOOGLE_GEMINI_BASE_URL``, any ``GEMINI_API_KEY``) asks three things, as the
research captures show (``../shared/research/realclients2/``): a router call
(``:generateContent`` with a JSON schema naming ``complexity_score``), the turns
(``:streamGenerateContent?alt=sse``, read as server-sent events) and tool-less side calls
(a session summary); ``:countTokens`` may come too. Every request is kept, with its path, in
order; ``turns`` are the streamed ones, the model's real work.

The turns are stateless, as in the capture: the scenario is the keyword of the last user
text that has one, the step what the tools returned since.

    HIPPO-PLAIN   answer ``Hello from the scripted model.``
    HIPPO-SEARCH  call hippo's MCP tool ``search`` (the offered function whose name ends in
                  ``search`` and names hippo) with the words after the keyword as the
                  query, then answer ``hippo said: ...`` with what it returned
    HIPPO-SHELL   run the rest of the prompt through Gemini CLI's ``run_shell_command``,
                  then answer ``shell said: ...`` with what it printed

A request that does not offer the tool a scenario needs is answered ``no tool named ...``,
so a test fails on the reason, not on a timeout.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.local_http import start_server

SHELL_TOOL = "run_shell_command"
USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


@dataclass
class GeminiServer:
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def turns(self) -> list[dict[str, Any]]:
        """The bodies of the streamed requests: what the agent's model was asked."""
        return [r["body"] for r in self.requests if ":streamGenerateContent" in r["path"]]

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The parts of the answer to a turn's ``body``."""
        prompt, results = _scenario(body.get("contents", []))
        if "HIPPO-SHELL" in prompt:
            if SHELL_TOOL in results:
                return [{"text": "shell said: " + results[SHELL_TOOL]}]
            command = prompt.split("HIPPO-SHELL", 1)[1].strip(" :")
            return [{"functionCall": {"name": SHELL_TOOL, "args": {"command": command}}}]
        if "HIPPO-SEARCH" not in prompt:
            return [{"text": "Hello from the scripted model."}]
        offered = [
            str(declaration.get("name", ""))
            for tool in body.get("tools", [])
            for declaration in tool.get("functionDeclarations", [])
        ]
        search = next((n for n in offered if n.endswith("search") and "hippo" in n), "")
        if not search:
            return [{"text": "no tool named search from hippo was offered"}]
        if search in results:
            return [{"text": "hippo said: " + results[search]}]
        query = prompt.split("HIPPO-SEARCH", 1)[1].strip(" :") or "hippo"
        call = {"name": search, "args": {"query": query}}
        return [{"text": "Searching hippo."}, {"functionCall": call}]


def _scenario(contents: list[dict[str, Any]]) -> tuple[str, dict[str, str]]:
    """The last keyworded user text, and each function's response since, as text."""
    prompt, results = "", {}
    for content in contents:
        for part in content.get("parts", []):
            if not isinstance(part, dict):
                continue
            text = part.get("text")
            if content.get("role") == "user" and isinstance(text, str) and "HIPPO-" in text:
                prompt, results = text, {}
            response = part.get("functionResponse")
            if isinstance(response, dict):
                results[str(response.get("name"))] = json.dumps(response.get("response"))
    return prompt, results


def _fits(schema: dict[str, Any]) -> Any:
    """A value of JSON ``schema`` (the router's: a reason and a score of 1)."""
    kind = str(schema.get("type", "")).lower()
    if kind == "object":
        return {key: _fits(inner) for key, inner in schema.get("properties", {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "simple"


def _candidate(parts: list[dict[str, Any]]) -> dict[str, Any]:
    content = {"role": "model", "parts": parts}
    return {"content": content, "finishReason": "STOP", "index": 0}


@pytest.fixture
def gemini_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiServer]:
    """The scripted server, at ``gemini_api.url`` (Gemini CLI's ``GOOGLE_GEMINI_BASE_URL``)."""
    server = GeminiServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def reply(self, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            server.requests.append({"path": self.path, "body": body})
            if ":countTokens" in self.path:
                self.reply({"totalTokens": 10})
            elif ":generateContent" in self.path:
                config = body.get("generationConfig", {})
                schema = config.get("responseJsonSchema") or config.get("responseSchema")
                text = json.dumps(_fits(schema)) if schema else "Scripted title"
                self.reply({"candidates": [_candidate([{"text": text}])], "usageMetadata": USAGE})
            elif ":streamGenerateContent" in self.path:
                chunk = {"candidates": [_candidate(server.answer(body))], "usageMetadata": USAGE}
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            else:
                self.send_error(404)

    server.url, stop = start_server(Handler, monkeypatch)
    server.url = server.url.rstrip("/")
    yield server
    stop()
