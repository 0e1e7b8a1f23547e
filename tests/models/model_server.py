"""A model server program for the lifecycle tests, started and stopped by hippo itself.

``python model_server.py -m MODEL --host H --port P [--reply-file F] [--ready-after S]
[--api-key KEY] [--requests-file F]``: the arguments llama.cpp's ``llama-server`` takes
for the same job. It answers ``POST /v1/chat/completions`` with the text of the reply
file (its whole content; none: ``{}``), and with ``--api-key`` a request without
``Authorization: Bearer KEY`` with 401, as llama-server does; ``GET /health`` with 503
until ``--ready-after`` seconds have passed, then 200, as a server loading its model does;
with ``--die-on-call`` it dies in the middle of its first answer. ``--requests-file``
appends each request's body to F as a line of JSON. MODEL must be an existing file. It
needs nothing from the test suite, so hippo can start it as any program.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-m", dest="model", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--reply-file", default="")
    parser.add_argument("--ready-after", type=float, default=0.0)
    parser.add_argument("--die-on-call", action="store_true")
    parser.add_argument("--api-key", default="")
    parser.add_argument("--requests-file", default="")
    parser.add_argument("--tag", default="", help="ignored: a word for the start line to hold")
    given = parser.parse_args()
    if not os.path.isfile(given.model):
        sys.stderr.write(f"no model file {given.model}\n")
        return 1
    ready_at = time.monotonic() + given.ready_after

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            ready = time.monotonic() >= ready_at
            self.answer(200 if ready else 503, {"status": "ok" if ready else "loading"})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if given.requests_file:
                with open(given.requests_file, "ab") as handle:
                    handle.write(body.replace(b"\n", b" ") + b"\n")
            if given.api_key and self.headers.get("Authorization") != f"Bearer {given.api_key}":
                self.answer(401, {"error": {"message": "Invalid API Key"}})
                return
            if given.die_on_call:  # a server that dies in the middle of an answer
                self.wfile.write(b'HTTP/1.1 200 OK\r\nContent-Length: 999\r\n\r\n{"cho')
                self.wfile.flush()
                os._exit(9)
            reply = "{}"
            if given.reply_file:
                with open(given.reply_file, encoding="utf-8") as handle:
                    reply = handle.read()
            message = {"role": "assistant", "content": reply}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            self.answer(200, {"choices": [choice]})

        def answer(self, status: int, body: dict[str, object]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    ThreadingHTTPServer((given.host, given.port), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
