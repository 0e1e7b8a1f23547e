"""The real Gemini CLI from npm (``gemini -p``), driven against a scripted Gemini API on
127.0.0.1 (tests/models/gemini_server.py), with hippo's hooks and MCP server installed by
hippo's own commands.

Gemini CLI folds each hook's context into the user's message as
``<hook_context>&lt;hippo-context&gt; ...</hook_context>`` and hands BeforeAgent the prompt
with SessionStart's context already in it; these tests read what the model was sent, the
session record and the index. .ci/agents.sh installs the program and sets
``HIPPO_TEST_GEMINI``; without it they skip (under CI they fail: tests/requires.py).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.gemini_server import GeminiServer
from tests.requires import missing
from tests.test_real_agents import ENTRY, NOTES
from tests.test_real_agents import SETTINGS as HIPPO_SETTINGS

pytestmark = pytest.mark.slow
GEMINI = os.environ.get("HIPPO_TEST_GEMINI", "")
PROMPT = "HIPPO-PLAIN: how do refunds work?"
RELEVANT = "- Refunds: Refunds go through the nightly queue."
#: What the capture's settings turn off (../shared/research/realclients2/README.md):
#: telemetry, updates, the IDE, folder trust; the API key as the way in.
SETTINGS = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "ide": {"enabled": False},
}


@pytest.fixture
def gemini_home() -> Path:
    if not GEMINI or not Path(GEMINI).exists():
        missing("no Gemini CLI: .ci/agents.sh installs it with npm and sets HIPPO_TEST_GEMINI")
    folder = Path(os.environ["HOME"]) / ".gemini"
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps(SETTINGS))
    return folder


def gemini(*args: str, ws: Path, server: GeminiServer) -> str:
    """``gemini ARGS`` in ``ws``, as a person runs it, with only the model faked; its stdout."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": os.environ["HOME"],
        "HIPPO_HOME": os.environ["HIPPO_HOME"],
        "HIPPO_LOAD_PLUGINS": os.environ.get("HIPPO_LOAD_PLUGINS", ""),
        "GEMINI_API_KEY": "dummy",
        "GOOGLE_GEMINI_BASE_URL": server.url,
        "NO_BROWSER": "true",
    }
    run = subprocess.run(
        [GEMINI, *args],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, (run.stdout, run.stderr)
    return run.stdout


def sent(server: GeminiServer, text: str) -> list[int]:
    """How many times each turn's request held ``text``."""
    return [json.dumps(body.get("contents", [])).count(text) for body in server.turns]


def indexed_prompts() -> list[str]:
    index = sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite")
    with index:
        rows = index.execute("SELECT prompt FROM turns WHERE tool = 'gemini' ORDER BY rowid")
        prompts = [row[0] for row in rows]
    index.close()
    return prompts


def test_gemini_cli_gets_the_block_once_and_indexes_the_persons_words(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, gemini_api: GeminiServer, gemini_home
) -> None:
    ws = make_workspace(HIPPO_SETTINGS, NOTES)
    assert hippo("hooks", "install", "gemini", cwd=ws).code == 0
    assert "Hello from the scripted model." in gemini("-p", PROMPT, ws=ws, server=gemini_api)

    # The block of session-start, then the task's relevant notes: each once, and the
    # entry note is no relevant note of its own block.
    assert sent(gemini_api, ENTRY) == [1]
    assert sent(gemini_api, RELEVANT) == [1]
    assert sent(gemini_api, "- Home:") == [0]
    assert sent(gemini_api, "&lt;hippo-context&gt;") == [2]
    [record_path] = (ws / ".hippo" / "sessions").glob("gemini-*.json")
    record = json.loads(record_path.read_text())
    assert record["kind"] == "declared" and record["task"] == PROMPT
    assert record["context_bytes"] > 0 and record["first_prompt"]

    assert hippo("ingest", cwd=ws).code == 0
    assert indexed_prompts() == [PROMPT]
    found = hippo("search", "ledger", "--json", cwd=ws)  # words of the entry note only
    assert found.code in (0, 1) and "gemini" not in found.out, found.out

    # Gemini CLI resumes without every user message that begins with a hook's context
    # (the first prompt, here): the resumed prompt gets the block again, once.
    native = record["id"].removeprefix("gemini-")
    gemini("--resume", native, "-p", "HIPPO-PLAIN: and again", ws=ws, server=gemini_api)
    assert sent(gemini_api, ENTRY) == [1, 1]
    assert sent(gemini_api, "&lt;hippo-context&gt;") == [2, 1]
    assert sent(gemini_api, PROMPT) == [1, 0]  # Gemini CLI's own doing
    assert json.loads(record_path.read_text())["task"] == PROMPT
    assert hippo("ingest", cwd=ws).code == 0
    assert indexed_prompts() == [PROMPT, "HIPPO-PLAIN: and again"]
    assert not (Path(os.environ["HIPPO_HOME"]) / "hooks.log").exists()


def test_gemini_cli_calls_hippos_mcp_search_and_gets_a_result(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, gemini_api: GeminiServer, gemini_home
) -> None:
    """hippo's server registered by ``hippo mcp install gemini``; a scripted call to its
    search tool returns a turn of an earlier session, indexed by ``hippo ingest``."""
    ws = make_workspace(HIPPO_SETTINGS, NOTES)
    run = hippo("mcp", "install", "gemini", cwd=ws)
    assert run.code == 0, run.err
    gemini("-p", "HIPPO-PLAIN: the refunds queue stalls on weekends", ws=ws, server=gemini_api)
    assert hippo("ingest", cwd=ws).code == 0

    answer = gemini(
        "--approval-mode", "yolo", "-p", "HIPPO-SEARCH: refunds queue", ws=ws, server=gemini_api
    )
    *_, last = gemini_api.turns
    responses = [
        part["functionResponse"]
        for content in last["contents"]
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]
    assert responses and "error" not in json.dumps(responses).lower(), responses
    assert "stalls on weekends" in json.dumps(responses)
    assert "hippo said: " in answer and "stalls on weekends" in answer
