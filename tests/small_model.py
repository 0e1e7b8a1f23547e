"""A real small model for the robustness tests: SmolLM2-135M-Instruct served on 127.0.0.1 by
llama-cpp-python's OpenAI-compatible server, on the CPU.

``HIPPO_TEST_LLAMA_PYTHON`` names an interpreter that has ``llama_cpp.server`` and
``HIPPO_TEST_SMOLLM2`` the model's GGUF file; ``.ci/small-model.sh`` sets both up. Without
them the tests that need the model are skipped (under CI they fail: tests/requires.py). The
model writes poor JSON, which is what they are for.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_http import PROXIES
from tests.requires import missing

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server's base URL (``http://127.0.0.1:<port>/v1``), up until the module ends."""
    python, model = os.environ.get("HIPPO_TEST_LLAMA_PYTHON"), os.environ.get("HIPPO_TEST_SMOLLM2")
    if not python or not model or not Path(model).is_file():
        missing(
            "no small model: .ci/small-model.sh sets HIPPO_TEST_LLAMA_PYTHON and HIPPO_TEST_SMOLLM2"
        )
    port = _free_port()
    log = tmp_path_factory.mktemp("small-model") / "server.log"
    env = {k: v for k, v in os.environ.items() if k not in PROXIES}
    with log.open("wb") as out:
        server = subprocess.Popen(
            [
                python,
                "-m",
                "llama_cpp.server",
                "--model",
                model,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "4096",
                "--n_threads",
                "2",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        probe = json.dumps(
            {"model": "smollm2", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
        ).encode()
        while True:  # up when it answers a chat request (a server can listen and then die)
            try:
                request = urllib.request.Request(
                    f"{url}/chat/completions", probe, {"Content-Type": "application/json"}
                )
                with NO_PROXY.open(request, timeout=30):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"the small model did not start:\n{log.read_text()[-2000:]}"
                    ) from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
