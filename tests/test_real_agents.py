"""Real agent programs from npm, driven against scripted models on 127.0.0.1.

Claude Code runs ``claude -p`` and OpenCode ``opencode run`` in a workspace with hippo's hooks,
plugin and MCP server installed by hippo's own commands; the scripted servers
(tests/models/anthropic_server.py, tests/models/chat_server.py) keep every request, so these
tests read what the model was actually sent. .ci/agents.sh installs the programs and sets
``HIPPO_TEST_CLAUDE`` and ``HIPPO_TEST_OPENCODE``; without them they skip (under CI they fail:
tests/requires.py).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.anthropic_server import AnthropicServer
from tests.requires import missing

pytestmark = pytest.mark.slow
CLAUDE = os.environ.get("HIPPO_TEST_CLAUDE", "")


@pytest.fixture
def claude_installed() -> None:
    if not CLAUDE or not Path(CLAUDE).exists():
        missing("no Claude Code: .ci/agents.sh installs it with npm and sets HIPPO_TEST_CLAUDE")


needs_claude = pytest.mark.usefixtures("claude_installed")
ENTRY = "The ledger team's notes: read [[Refunds]] before touching money."
#: What `hippo init` writes: under it the entry note, whose words match the task, was
#: listed as relevant too, and each agent got the entry text twice (issue 36).
SETTINGS = 'relevance = "history"\n'
NOTES = {
    "Home.md": f"# Home\n\n{ENTRY}\n",
    "Refunds.md": "# Refunds\n\nRefunds go through the nightly queue.\n",
}


def claude(prompt: str, *args: str, ws: Path, server: AnthropicServer) -> dict:
    """``claude -p PROMPT ARGS`` in ``ws``, as a person runs it, with only the model faked."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": os.environ["HOME"],
        "HIPPO_HOME": os.environ["HIPPO_HOME"],
        "HIPPO_LOAD_PLUGINS": os.environ.get("HIPPO_LOAD_PLUGINS", ""),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    command = [CLAUDE, "-p", prompt, "--output-format", "json", *args]
    run = subprocess.run(
        command, cwd=ws, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, (run.stdout, run.stderr)
    return json.loads(run.stdout)


def times_sent(server: AnthropicServer, text: str) -> list[int]:
    """How many times each request's messages held ``text``."""
    return [json.dumps(request.get("messages", [])).count(text) for request in server.requests]


@needs_claude
def test_claude_code_gets_the_block_once_and_resume_does_not_double_it(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, anthropic: AnthropicServer
) -> None:
    ws = make_workspace(SETTINGS, NOTES)
    assert hippo("hooks", "install", "claude-code", cwd=ws).code == 0
    first = claude("HIPPO-PLAIN: how do refunds work?", ws=ws, server=anthropic)
    assert first["result"] == "Hello from the scripted model."
    sid = first["session_id"]
    # session-start's block and the first prompt's relevant notes, each once.
    assert times_sent(anthropic, ENTRY) == [1]
    assert times_sent(anthropic, "- Refunds: Refunds go through the nightly queue.") == [1]
    assert times_sent(anthropic, "<hippo-context>") == [2]
    record = json.loads((ws / ".hippo" / "sessions" / f"{sid}.json").read_text())
    assert record["kind"] == "declared" and record["task"] == "HIPPO-PLAIN: how do refunds work?"
    assert record["context_bytes"] > 0 and record["exit_reason"]

    claude("HIPPO-PLAIN: and again", "--resume", sid, ws=ws, server=anthropic)
    assert times_sent(anthropic, ENTRY) == [1, 1]  # the resumed history has it; no new copy
    assert not (Path(os.environ["HIPPO_HOME"]) / "hooks.log").exists()


@needs_claude
def test_claude_code_calls_hippos_mcp_search_and_gets_a_result(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, anthropic: AnthropicServer
) -> None:
    """hippo's server registered by ``hippo mcp install``; a scripted call to its search
    tool returns a turn from an earlier session, indexed by ``hippo ingest``."""
    ws = make_workspace(SETTINGS, NOTES)
    run = hippo("mcp", "install", "claude-code", "--user", cwd=ws)
    assert run.code == 0, run.err
    claude("HIPPO-PLAIN: the refunds queue stalls on weekends", ws=ws, server=anthropic)
    assert hippo("ingest", cwd=ws).code == 0

    answer = claude(
        "HIPPO-SEARCH: refunds queue",
        "--allowedTools",
        "mcp__hippo__search",
        ws=ws,
        server=anthropic,
    )
    # The model was offered the tool, called it, and got the earlier turn back.
    *_, last = anthropic.requests
    results = [
        block
        for message in last["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert results and not any(result.get("is_error") for result in results), results
    assert "[refunds] [queue] stalls on weekends" in json.dumps(results)  # search's snippet
    assert answer["result"].startswith("hippo said: ")
    assert "stalls on weekends" in answer["result"]


OPENCODE = os.environ.get("HIPPO_TEST_OPENCODE", "")


@pytest.fixture
def opencode_installed() -> None:
    if not OPENCODE or not Path(OPENCODE).exists():
        missing("no OpenCode: .ci/agents.sh installs it with npm and sets HIPPO_TEST_OPENCODE")


needs_opencode = pytest.mark.usefixtures("opencode_installed")


@needs_opencode
def test_opencode_gets_the_block_from_hippos_plugin_and_indexes_only_the_prompt(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, chat, monkeypatch
) -> None:
    """``opencode run`` with the plugin ``hippo hooks install opencode`` wrote: the model's
    request holds the block once, before the person's words; ingest indexes the words."""
    ws = make_workspace(SETTINGS, NOTES)
    monkeypatch.setattr(sys, "argv", ["python"])  # the plugin calls this interpreter's hippo
    assert hippo("hooks", "install", "opencode", cwd=ws).code == 0
    home = Path(os.environ["HOME"])
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "scripted",
        "options": {"baseURL": chat.url, "apiKey": "dummy"},
        "models": {"scripted": {"name": "Scripted", "tool_call": False}},
    }
    settings = {"provider": {"scripted": provider}, "model": "scripted/scripted"}
    settings |= {"small_model": "scripted/scripted", "autoupdate": False, "share": "disabled"}
    config.write_text(json.dumps(settings))
    chat.add("Hello from the scripted model.", "HIPPO-PLAIN")
    chat.add("Scripted title")  # the title OpenCode asks for each new session
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "HIPPO_HOME": os.environ["HIPPO_HOME"],
        "HIPPO_LOAD_PLUGINS": os.environ.get("HIPPO_LOAD_PLUGINS", ""),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    }
    run = subprocess.run(
        [OPENCODE, "run", "HIPPO-PLAIN: how do refunds work?"],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, (run.stdout, run.stderr)
    assert "Hello from the scripted model." in run.stdout
    asked = [r for r in chat.requests if "HIPPO-PLAIN" in json.dumps(r["messages"])]
    assert asked and all(json.dumps(r["messages"]).count(ENTRY) == 1 for r in asked)
    [native] = {p.stem for p in (ws / ".hippo" / "sessions").glob("opencode-*.json")}
    assert json.loads((ws / ".hippo" / "sessions" / f"{native}.json").read_text())["task"]

    assert hippo("ingest", cwd=ws).code == 0
    index = sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite")
    with index:
        prompts = [
            row[0]
            for row in index.execute("SELECT prompt FROM turns WHERE tool = ?", ("opencode",))
        ]
    index.close()
    assert prompts == ["HIPPO-PLAIN: how do refunds work?"]


@needs_claude
def test_claude_code_compacting_starts_a_dream_and_waits_for_nothing(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, anthropic: AnthropicServer
) -> None:
    """``/compact`` in a resumed session runs the PreCompact hook ``hippo hooks install``
    added for ``[triggers] on_compact``; the dream it starts runs on after the hook."""
    ws = make_workspace(SETTINGS + "[triggers]\non_compact = true\n", NOTES)
    installed = hippo("hooks", "install", "claude-code", cwd=ws)
    assert "PreCompact" in installed.out, installed.out
    first = claude("HIPPO-PLAIN: how do refunds work?", ws=ws, server=anthropic)
    claude("/compact", "--resume", first["session_id"], ws=ws, server=anthropic)
    log = ws / ".hippo" / "reports" / "triggers.log"
    assert log.exists(), list((ws / ".hippo").rglob("*"))
    assert "starting hippo dream: session " in log.read_text()
    state = ws / ".hippo" / "dream-state.json"
    for _ in range(300):  # the detached dream writes it when it is done
        if state.exists():
            break
        time.sleep(0.1)
    assert json.loads(state.read_text())["last_run"]["status"] == "failed"  # no model here
    assert not (Path(os.environ["HIPPO_HOME"]) / "hooks.log").exists()
