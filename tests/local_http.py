"""A real HTTP server on 127.0.0.1 for tests, quiet, on a free port, in a thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

PROXIES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy")


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up on purpose is no test failure


def start_server(
    handler: Callable[..., BaseHTTPRequestHandler],
    monkeypatch: pytest.MonkeyPatch,
    host: str = "127.0.0.1",
) -> tuple[str, Callable[[], None]]:
    """Serve with ``handler`` on ``host`` (any of 127.0.0.0/8 reaches loopback on Linux),
    proxies off; returns the base URL and an idempotent stop."""
    for proxy in PROXIES:
        monkeypatch.delenv(proxy, raising=False)
    httpd = _Quiet((host, 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    stopped = False

    def stop() -> None:
        nonlocal stopped
        if not stopped:
            stopped = True
            httpd.shutdown()
            httpd.server_close()
            thread.join()

    return f"http://{host}:{httpd.server_address[1]}/", stop


class Heard(list[dict[str, Any]]):
    """What a recorder heard: each request's method, path, headers and body bytes."""

    def credentials(self) -> list[str]:
        return [
            h["headers"].get("Authorization", "") for h in self if "Authorization" in h["headers"]
        ]


def recorder(
    monkeypatch: pytest.MonkeyPatch,
    host: str = "127.0.0.2",
    *,
    status: int = 200,
    location: str = "",
) -> tuple[str, Heard, Callable[[], None]]:
    """A server on ``host`` that keeps every request, whatever its method, and answers
    ``status`` (with ``Location: location`` when given: a redirect to somewhere else)."""
    heard = Heard()

    class Handler(BaseHTTPRequestHandler):
        def handle_one(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size) if size else b""
            heard.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": body,
                }
            )
            try:
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
            except OSError:
                pass

        do_GET = do_POST = do_PUT = handle_one

        def log_message(self, format: str, *args: Any) -> None:
            pass

    url, stop = start_server(Handler, monkeypatch, host)
    return url, heard, stop
