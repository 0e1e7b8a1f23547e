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
    handler: Callable[..., BaseHTTPRequestHandler], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, Callable[[], None]]:
    """Serve with ``handler``, proxies off; returns the base URL and an idempotent stop."""
    for proxy in PROXIES:
        monkeypatch.delenv(proxy, raising=False)
    httpd = _Quiet(("127.0.0.1", 0), handler)
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

    return f"http://127.0.0.1:{httpd.server_address[1]}/", stop
