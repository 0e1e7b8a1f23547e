"""What each real agent puts in the environment of the commands it runs and of the MCP
servers it starts: the facts hippo's person check and its session matching rest on
(:mod:`hippo_core.agents.env`, docs/security.md's table), re-checked against the programs.

Each agent runs against its scripted model on 127.0.0.1, which asks it (``HIPPO-SHELL``) to
run ``env; tty`` through its own shell tool; hippo's MCP server is registered by ``hippo mcp
install`` and started through ``sh``, which first writes the environment the agent gave it.
.ci/agents.sh installs the programs; without them these skip (under CI they fail).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomlkit

from hippo_core.agents.env import agent_in
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.models.anthropic_server import AnthropicServer
from tests.models.chat_server import Call, ChatServer
from tests.models.gemini_server import GeminiServer
from tests.models.responses_server import ResponsesServer
from tests.test_real_agents import NOTES, OPENCODE, SETTINGS, claude, claude_installed  # noqa: F401
from tests.test_real_codex import codex, codex_config, project  # noqa: F401
from tests.test_real_gemini import gemini, gemini_home  # noqa: F401

pytestmark = pytest.mark.slow
COMMAND = "env; tty"


def parsed(text: str) -> dict[str, str]:
    """``NAME=value`` lines as a mapping (a value's own line breaks are not expected)."""
    found = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.replace("_", "").isalnum():
            found[name] = value
    return found


def dumped(path: Path) -> dict[str, str]:
    for _ in range(100):  # the server may start a moment after the agent answers
        if path.exists() and path.read_text():
            return parsed(path.read_text())
        time.sleep(0.1)
    raise AssertionError(f"{path}: the MCP server was never started")


def wrapped(command: list[str], dump: Path) -> list[str]:
    """``command`` started by ``sh``, which writes its environment to ``dump`` first."""
    return ["sh", "-c", f'env > "{dump}"; exec "$0" "$@"', *command]


@pytest.mark.usefixtures("claude_installed")
def test_claude_code_marks_its_shell_and_its_mcp_servers_with_its_session(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, anthropic: AnthropicServer, tmp_path: Path
) -> None:
    ws = make_workspace(SETTINGS, NOTES)
    assert hippo("mcp", "install", "claude-code", "--user", cwd=ws).code == 0
    config = Path(os.environ["HOME"]) / ".claude.json"
    servers = json.loads(config.read_text())
    entry = servers["mcpServers"]["hippo"]
    dump = tmp_path / "mcp.env"
    command = wrapped([entry["command"], *entry.get("args", [])], dump)
    entry["command"], entry["args"] = command[0], command[1:]
    config.write_text(json.dumps(servers))

    answer = claude(f"HIPPO-SHELL: {COMMAND}", "--allowedTools", "Bash", ws=ws, server=anthropic)
    session = answer["session_id"]
    shell = parsed(answer["result"].removeprefix("shell said: "))
    assert shell["CLAUDECODE"] == "1" and shell["CLAUDE_CODE_SESSION_ID"] == session
    assert shell["CLAUDE_CODE_ENTRYPOINT"] == "sdk-cli"  # claude -p; "cli" on a terminal
    assert shell["AI_AGENT"].startswith("claude-code_")
    assert "not a tty" in answer["result"]
    assert agent_in(shell) == {"agent": "claude-code", "variable": "CLAUDECODE", "session": session}

    server = dumped(dump)
    assert server["CLAUDECODE"] == "1" and server["CLAUDE_CODE_SESSION_ID"] == session
    assert agent_in(server) == {
        "agent": "claude-code",
        "variable": "CLAUDECODE",
        "session": session,
    }


def test_codex_marks_its_shell_with_its_thread_and_tells_its_mcp_servers_nothing(
    hippo: HippoRunner,
    make_workspace: WorkspaceMaker,
    responses_api: ResponsesServer,
    codex_config: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    ws = project(make_workspace)
    assert hippo("mcp", "install", "codex", "--user", cwd=ws).code == 0
    config = tomlkit.parse(codex_config.read_text())
    entry = config["mcp_servers"]["hippo"]  # type: ignore[index]
    dump = tmp_path / "mcp.env"
    command = wrapped([str(entry["command"]), *entry.get("args", [])], dump)  # type: ignore[union-attr]
    entry["command"], entry["args"] = command[0], command[1:]  # type: ignore[index]
    codex_config.write_text(tomlkit.dumps(config))

    said = codex("--trust", f"HIPPO-SHELL: {COMMAND}", ws=ws)
    shell = parsed(said)
    thread = shell["CODEX_THREAD_ID"]
    assert thread and shell["CODEX_SESSION_ID"] == thread and shell["CODEX_CI"] == "1"
    assert "not a tty" in said
    assert agent_in(shell) == {
        "agent": "codex",
        "variable": "CODEX_THREAD_ID",
        "session": f"codex-{thread}",
    }
    # Its shell tool can ask for a pseudo-terminal (the model sets tty: true).
    [first, *_] = responses_api.turns
    [run] = [t for t in first["tools"] if t.get("name") == "exec_command"]
    assert "tty" in run["parameters"]["properties"]

    server = dumped(dump)
    assert not any(name.startswith("CODEX") for name in server), server
    assert agent_in(server) is None  # only HOME, PATH and what env_vars names


def test_gemini_cli_marks_its_shell_and_its_mcp_servers_without_a_session(
    hippo: HippoRunner,
    make_workspace: WorkspaceMaker,
    gemini_api: GeminiServer,
    gemini_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    ws = make_workspace(SETTINGS, NOTES)
    assert hippo("mcp", "install", "gemini", cwd=ws).code == 0
    dump = tmp_path / "mcp.env"
    [config] = [p for p in ws.rglob("settings.json") if "hippo" in p.read_text()]
    servers = json.loads(config.read_text())
    entry = servers["mcpServers"]["hippo"]
    command = wrapped([entry["command"], *entry.get("args", [])], dump)
    entry["command"], entry["args"] = command[0], command[1:]
    config.write_text(json.dumps(servers))

    said = gemini(
        "--approval-mode", "yolo", "-p", f"HIPPO-SHELL: {COMMAND}", ws=ws, server=gemini_api
    )
    # The tool's output comes back as JSON: its line breaks are escaped.
    shell = parsed(said.split("shell said: ", 1)[1].replace("\\n", "\n"))
    assert shell["GEMINI_CLI"] == "1"
    assert not any("SESSION_ID" in name or "THREAD" in name for name in shell), shell
    assert "not a tty" in said
    assert agent_in(shell) == {"agent": "gemini", "variable": "GEMINI_CLI"}

    server = dumped(dump)
    assert server["GEMINI_CLI"] == "1"
    assert agent_in(server) == {"agent": "gemini", "variable": "GEMINI_CLI"}


@pytest.fixture
def opencode_installed() -> None:
    from tests.requires import missing

    if not OPENCODE or not Path(OPENCODE).exists():
        missing("no OpenCode: .ci/agents.sh installs it with npm and sets HIPPO_TEST_OPENCODE")


@pytest.mark.usefixtures("opencode_installed")
def test_opencode_marks_its_shell_and_its_mcp_servers_with_its_process(
    hippo: HippoRunner,
    make_workspace: WorkspaceMaker,
    chat: ChatServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = make_workspace(SETTINGS, NOTES)
    monkeypatch.setattr(sys, "argv", ["python"])  # the entry names this interpreter's hippo
    assert hippo("mcp", "install", "opencode", cwd=ws).code == 0
    dump = tmp_path / "mcp.env"
    config = ws / "opencode.json"
    servers = json.loads(config.read_text())
    servers["mcp"]["hippo"]["command"] = wrapped(servers["mcp"]["hippo"]["command"], dump)
    config.write_text(json.dumps(servers))
    home = Path(os.environ["HOME"])
    user = home / ".config" / "opencode" / "opencode.json"
    user.parent.mkdir(parents=True)
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "scripted",
        "options": {"baseURL": chat.url, "apiKey": "dummy"},
        "models": {"scripted": {"name": "Scripted", "tool_call": True}},
    }
    settings = {"provider": {"scripted": provider}, "model": "scripted/scripted"}
    settings |= {"small_model": "scripted/scripted", "autoupdate": False, "share": "disabled"}
    user.write_text(json.dumps(settings | {"permission": {"bash": "allow"}}))
    chat.add(
        lambda r: "shell said: " + r["messages"][-1]["content"], "HIPPO-SHELL", after_tool=True
    )
    chat.add(
        Call("bash", {"command": COMMAND, "description": "env"}), "HIPPO-SHELL", after_tool=False
    )
    chat.add("Scripted title")
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
        [OPENCODE, "run", f"HIPPO-SHELL: {COMMAND}"],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, (run.stdout, run.stderr)
    shell = parsed(run.stdout.split("shell said: ", 1)[1])
    assert shell["OPENCODE"] == "1" and shell["AGENT"] == "1" and shell["OPENCODE_PID"].isdigit()
    assert not any("SESSION_ID" in name or "THREAD" in name for name in shell), shell
    assert "not a tty" in run.stdout
    assert agent_in(shell) == {"agent": "opencode", "variable": "OPENCODE"}

    server = dumped(dump)
    assert server["OPENCODE"] == "1" and server["OPENCODE_PID"] == shell["OPENCODE_PID"]
    assert agent_in(server) == {"agent": "opencode", "variable": "OPENCODE"}
