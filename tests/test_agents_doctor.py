"""``hippo doctor`` on the agents: the model program, the hooks installed, what stops Codex
running them, and the hooks' recent failures."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.conftest import HippoRunner, WorkspaceMaker


def test_a_model_program_that_cannot_run_is_an_error_on_its_line(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace('budget_bytes = 9000\nmodel_command = ["no-such-model-program", "-p"]\n')
    run = hippo("doctor", cwd=ws)
    line = (
        ".hippo/settings.toml:2: error: model: model_command runs 'no-such-model-program',"
        " which is not on PATH: install it, or give its full path"
    )
    assert run.code == 1 and line in run.out.splitlines()

    (ws / ".hippo" / "settings.toml").write_text('model_command = ["./.hippo/model.sh"]\n')
    run = hippo("doctor", cwd=ws)
    assert "'./.hippo/model.sh', which does not exist" in run.out and run.code == 1
    script = ws / ".hippo" / "model.sh"
    script.write_text("#!/bin/sh\ncat\n")
    assert "which is not executable" in hippo("doctor", cwd=ws).out
    script.chmod(0o755)
    run = hippo("doctor", cwd=ws)
    assert "model_command runs" not in run.out
    assert "info: model: dreaming runs ./.hippo/model.sh" in run.out


def test_doctor_names_the_hooks_installed_and_what_codex_will_not_run(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    ws = make_workspace()
    assert "info: hooks: no agent has hippo's hooks here" in hippo("doctor", cwd=ws).out
    for agent in ("claude-code", "codex", "gemini"):
        assert hippo("hooks", "install", agent, cwd=ws).code == 0
    out = hippo("doctor", cwd=ws).out.splitlines()
    assert (
        "info: hooks: claude-code: SessionEnd, SessionStart, UserPromptSubmit in"
        " .claude/settings.json" in out
    )
    assert (
        "info: hooks: gemini: BeforeAgent, SessionEnd, SessionStart in .gemini/settings.json" in out
    )
    [codex] = [line for line in out if line.startswith("warning: hooks: codex:")]
    assert codex.startswith("warning: hooks: codex: .codex/hooks.json: Codex loads a project's")
    assert "no agent has hippo's hooks" not in "\n".join(out)


def test_doctor_shows_each_hooks_last_failure_of_the_week(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    log = Path(os.environ["HIPPO_HOME"]) / "hooks.log"
    log.parent.mkdir(parents=True, exist_ok=True)

    def stamp(ago: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - ago))

    here, there = f" (workspace {ws})", f" (workspace {ws}-other)"
    log.write_text(
        f"{stamp(10 * 86400)} hook prompt: the payload has no session_id{here}\n"
        f"{stamp(3600)} hook session-start: context over budget: 298 > 100{here}\n"
        f"{stamp(60)} hook session-start: empty stdin (expected the agent's hook JSON){here}\n"
        f"{stamp(30)} hook prompt: omitted: relevant notes (182){here}\n"
        f"{stamp(20)} hook prompt: stdin is not JSON (Expecting value){there}\n"
        f"{stamp(20)} hook session-end: stdin is not JSON (Expecting value)\n"
        "a line that is no hook's\n"
    )
    out = hippo("doctor", cwd=ws).out.splitlines()
    # Old, omitted, another workspace's and no workspace's: not this one's failures.
    [failure] = [line for line in out if "failed lately" in line]
    assert failure.startswith("warning: hooks: the session-start hook failed lately: ")
    assert failure.endswith(
        f" hook session-start: empty stdin (expected the agent's hook JSON) (in {log})"
    )


def test_a_hooks_failure_is_logged_with_its_workspace(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path
) -> None:
    """The log is the machine's; doctor shows a workspace the failures of its own hooks
    only (newcomer defect 34)."""
    import subprocess
    import sys

    ws, other = make_workspace(), make_workspace()
    for folder, stdin in ((other, "not json"), (ws, "")):
        subprocess.run(
            [sys.executable, "-m", "hippo_core", "hook", "session-start"],
            cwd=folder,
            input=stdin,
            text=True,
            check=True,
            capture_output=True,
        )
    log = (Path(os.environ["HIPPO_HOME"]) / "hooks.log").read_text().splitlines()
    assert [line.split(" hook ", 1)[1] for line in log] == [
        f"session-start: stdin is not JSON (Expecting value: line 1 column 1 (char 0)) "
        f"(workspace {other})",
        f"session-start: empty stdin (expected the agent's hook JSON) (workspace {ws})",
    ]
    [failure] = [line for line in hippo("doctor", cwd=ws).out.splitlines() if "lately" in line]
    assert "empty stdin" in failure
    log_path = Path(os.environ["HIPPO_HOME"]) / "hooks.log"
    [elsewhere] = [line for line in hippo("doctor", cwd=other).out.splitlines() if "lately" in line]
    assert elsewhere.endswith(f"(char 0)) (in {log_path})")


def test_doctor_says_where_the_mcp_server_is_registered(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    assert "info: mcp: no agent has hippo's MCP server" in hippo("doctor", cwd=ws).out
    assert hippo("mcp", "install", "gemini", cwd=ws).code == 0
    out = hippo("doctor", cwd=ws).out.splitlines()
    assert "info: mcp: gemini: hippo's server is registered in .gemini/settings.json" in out
    (ws / "opencode.json").write_text("{ not json")
    out = hippo("doctor", cwd=ws).out.splitlines()
    assert any(line.startswith("warning: mcp: opencode: ") for line in out)


def test_a_fresh_clone_is_told_what_to_run(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    first = "info: setup: this machine has no sessions of this workspace yet"
    assert first in hippo("doctor", cwd=ws).out
    assert hippo("session", "start", "--id", "s1", cwd=ws).code == 0
    assert first not in hippo("doctor", cwd=ws).out
