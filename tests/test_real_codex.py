"""The real Codex CLI from npm (``codex exec``), driven against a scripted Responses API on
127.0.0.1 (tests/models/responses_server.py), with hippo's hooks and MCP server installed
by hippo's own commands.

Codex hands each hook's output to the model as a developer message of its own, keeps every
one in the thread, and runs a hook only once a person trusted it: these tests go the way
``hippo doctor`` explains (``codex`` on a terminal, "Trust all and continue"), and use
``--dangerously-bypass-hook-trust`` where trust is not what they check. .ci/agents.sh
installs the program and sets ``HIPPO_TEST_CODEX``; without it they skip (under CI they
fail: tests/requires.py).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.responses_server import ResponsesServer
from tests.pty_run import Terminal
from tests.requires import missing
from tests.test_real_agents import ENTRY, NOTES, SETTINGS

pytestmark = pytest.mark.slow
CODEX = os.environ.get("HIPPO_TEST_CODEX", "")
BYPASS = "--dangerously-bypass-hook-trust"
PROMPT = "HIPPO-PLAIN: how do refunds work?"
RELEVANT = "- Refunds: Refunds go through the nightly queue."


@pytest.fixture
def codex_config(responses_api: ResponsesServer) -> Path:
    """``~/.codex/config.toml`` as the research captures had it: the scripted provider (a
    known model slug), no approvals, no sandbox, nothing sent anywhere else."""
    if not CODEX or not Path(CODEX).exists():
        missing("no Codex: .ci/agents.sh installs it with npm and sets HIPPO_TEST_CODEX")
    config = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        'model = "gpt-5.5"\nmodel_provider = "scripted"\napproval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\ncheck_for_update_on_startup = false\n\n'
        f'[model_providers.scripted]\nname = "Scripted"\nbase_url = "{responses_api.url}"\n'
        'env_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n\n'
        '[analytics]\nenabled = false\n\n[otel]\nexporter = "none"\n'
    )
    return config


def project(make_workspace: WorkspaceMaker) -> Path:
    """A workspace that is a git repository, as Codex wants the folder it works in."""
    ws = make_workspace(SETTINGS, NOTES)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def env() -> dict[str, str]:
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": os.environ["HOME"],
        "HIPPO_HOME": os.environ["HIPPO_HOME"],
        "HIPPO_LOAD_PLUGINS": os.environ.get("HIPPO_LOAD_PLUGINS", ""),
        "SCRIPTED_API_KEY": "dummy",
    }


def codex(*args: str, ws: Path) -> str:
    """``codex exec ARGS`` in ``ws`` (stdin closed, or it waits on it); its stdout."""
    run = subprocess.run(
        [CODEX, "exec", *args],
        cwd=ws,
        env=env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, (run.stdout, run.stderr)
    return run.stdout


def sent(server: ResponsesServer, text: str) -> list[int]:
    """How many times each turn's input held ``text``."""
    return [json.dumps(body.get("input", [])).count(text) for body in server.turns]


def handed(body: dict) -> list[str]:
    """The roles of the input items that hold hippo's block."""
    return [item.get("role", "") for item in body["input"] if "<hippo-context>" in json.dumps(item)]


def indexed_prompts() -> list[str]:
    index = sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite")
    with index:
        rows = index.execute("SELECT prompt FROM turns WHERE tool = 'codex' ORDER BY rowid")
        prompts = [row[0] for row in rows]
    index.close()
    return prompts


def test_codex_gets_the_block_once_per_session_and_a_resume_adds_nothing(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, responses_api, codex_config: Path
) -> None:
    ws = project(make_workspace)
    installed = hippo("hooks", "install", "codex", cwd=ws)
    assert f"does not trust {ws}" in installed.out  # no `codex` has run in it yet
    # --trust records the project's trust as the first interactive run would.
    assert "Hello from the scripted model." in codex("--trust", BYPASS, PROMPT, ws=ws)
    assert tomllib.loads(codex_config.read_text())["projects"][str(ws)]["trust_level"] == "trusted"

    assert sent(responses_api, ENTRY) == [1]
    assert sent(responses_api, RELEVANT) == [1]
    assert sent(responses_api, "- Home:") == [0]
    [first] = responses_api.turns
    assert handed(first) == ["developer", "developer"]  # never the person's message
    [record_path] = (ws / ".hippo" / "sessions").glob("codex-*.json")
    record = json.loads(record_path.read_text())
    thread = record["id"].removeprefix("codex-")
    assert record["kind"] == "declared" and record["tool"] == "codex"
    assert record["task"] == PROMPT and record["cwd"] == str(ws)
    assert record["context_bytes"] > 0 and record["ended"] and record["exit_reason"] == "other"

    # The thread keeps both blocks: a resume hands over nothing new.
    codex(BYPASS, "resume", thread, "HIPPO-PLAIN: and again", ws=ws)
    assert sent(responses_api, ENTRY) == [1, 1]
    assert sent(responses_api, "<hippo-context>") == [2, 2]
    again = json.loads(record_path.read_text())
    assert again["task"] == PROMPT and again["context_bytes"] == record["context_bytes"]
    assert [p.name for p in (ws / ".hippo" / "sessions").glob("*.json")] == [record_path.name]

    assert hippo("ingest", cwd=ws).code == 0
    assert indexed_prompts() == [PROMPT, "HIPPO-PLAIN: and again"]
    assert json.loads(record_path.read_text())["kind"] == "declared"
    assert not (Path(os.environ["HIPPO_HOME"]) / "hooks.log").exists()


def test_codex_runs_hippos_hooks_once_trusted_the_way_hippo_doctor_says(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, responses_api, codex_config: Path
) -> None:
    ws = project(make_workspace)
    hippo("hooks", "install", "codex", cwd=ws)
    assert f"does not trust {ws}" in hippo("doctor", cwd=ws).out
    # Untrusted, the hooks are skipped without a word, as doctor says.
    codex("--skip-git-repo-check", PROMPT, ws=ws)
    assert sent(responses_api, "<hippo-context>") == [0]
    assert not (ws / ".hippo" / "sessions").exists()

    # `codex` on a terminal: trust the folder, then "Trust all and continue".
    argv = [CODEX, "--disable", "daemon_auto_start"]  # no app-server left running after
    terminal = Terminal(argv, ws, env())
    try:
        terminal.wait_for("Trust this folder?")
        terminal.press("enter")
        terminal.wait_for("Trust all and continue")
        terminal.press("2", "enter")
        for _ in range(300):
            if "trusted_hash" in codex_config.read_text():
                break
            time.sleep(0.1)
        time.sleep(0.5)  # the last of the hashes
    finally:
        terminal.close()
    states = tomllib.loads(codex_config.read_text())["hooks"]["state"]
    assert len([key for key in states if key.startswith(str(ws))]) == 3, states
    doctor = hippo("doctor", cwd=ws).out
    assert "Codex has not trusted" not in doctor and "does not trust" not in doctor, doctor

    codex(PROMPT, ws=ws)  # no bypass: the hooks Codex trusts run
    assert sent(responses_api, ENTRY)[-1] == 1
    assert sent(responses_api, RELEVANT)[-1] == 1
    [record_path] = (ws / ".hippo" / "sessions").glob("codex-*.json")
    assert json.loads(record_path.read_text())["task"] == PROMPT


def test_codex_calls_hippos_mcp_search_and_gets_a_result(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, responses_api, codex_config: Path
) -> None:
    """hippo's server registered by ``hippo mcp install codex --user``: Codex finds it with
    its tool search, calls ``search``, and gets back a turn of an earlier session indexed
    by ``hippo ingest``, from the index ``HIPPO_HOME`` names (Codex passes the server
    only the variables its entry lists)."""
    ws = project(make_workspace)
    assert hippo("mcp", "install", "codex", "--user", cwd=ws).code == 0
    codex("--trust", "HIPPO-PLAIN: the refunds queue stalls on weekends", ws=ws)
    assert hippo("ingest", cwd=ws).code == 0

    answer = codex("HIPPO-SEARCH: refunds queue", ws=ws)
    *_, last = responses_api.turns
    outputs = [item for item in last["input"] if item.get("type") == "function_call_output"]
    assert outputs and "stalls on weekends" in json.dumps(outputs), last["input"][-3:]
    assert "hippo said: " in answer and "stalls on weekends" in answer
