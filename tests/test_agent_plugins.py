"""An agent is a plugin: a fictional agent, "zed-agent", added as one module of a third
party's distribution, is what `hippo hooks install`, `hippo mcp install`, `hippo doctor`,
`hippo ingest` and `hippo hook` work with, as they do with hippo's own; and the tables the
hooks read without loading plugins agree with the agents hippo registers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hippo_core.actions.hook import PLAIN_AGENTS, SESSION_PREFIXES
from hippo_core.agents.env import MARKS, SESSIONS
from hippo_core.plugins.agent import Agent
from hippo_core.plugins.manager import load_plugins

from .plugin_site import make_distribution, run_hippo

#: The whole agent: its transcripts (one JSON line per turn in $ZED_HOME/sessions/), its
#: hooks file and events, its MCP config, what stops it running hooks, its variables.
ZED_AGENT = """
import json
import os
from pathlib import Path

from hippo_core import Agent, Parsed, Resume, SessionInfo, TranscriptSource, Turn, hookimpl


class ZedSource(TranscriptSource):
    name = "zed-agent"

    def roots(self, env, home):
        return [Path(env.get("ZED_HOME") or home / ".zed-agent")]

    def discover(self, root):
        yield from sorted((root / "sessions").glob("*.jsonl"))

    def parse(self, path, resume):
        data = path.read_bytes()
        turns, sessions, at = [], {}, resume.offset
        for ordinal, line in enumerate(data[resume.offset :].splitlines(keepends=True)):
            record = json.loads(line)
            native, cwd = record["session"], record["cwd"]
            session = "zed-agent-" + native
            sessions[session] = SessionInfo(session, self.name, native, cwd=cwd)
            turns.append(Turn(session, ordinal, f"{session}:{ordinal}", record["prompt"],
                              answer=record["answer"], cwd=cwd, source=str(path),
                              start=at, end=at + len(line)))
            at += len(line)
        return Parsed(list(sessions.values()), turns, Resume(at), committed=at)


def hooks_file(user, project):
    home = Path(os.environ["ZED_HOME"])
    return home / "hooks.json" if user else project / ".zed-agent" / "hooks.json"


def mcp_file(user, project):
    return (Path(os.environ["ZED_HOME"]) if user else project / ".zed-agent") / "mcp.json"


def not_trusted(path, project):
    if (path.parent / "trusted").exists():
        return None
    return "zed-agent runs hooks only in a folder it trusts: touch .zed-agent/trusted"


@hookimpl
def hippo_register_agents(register):
    register(
        Agent(
            "zed-agent",
            sources=lambda: [ZedSource()],
            hooks_file=hooks_file,
            hook_events={"Start": "session-start", "Ask": "prompt", "Stop": "session-end"},
            hook_timeout=12,
            hooks_problem=not_trusted,
            mcp_file=mcp_file,
            mcp_servers="servers",
            env_marks=(("ZED_AGENT", ("1",)),),
        )
    )
"""


@pytest.fixture
def zed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Run hippo in a workspace with zed-agent installed (and no other third party)."""
    site, ws, home = tmp_path / "site", tmp_path / "ws", tmp_path / "zed-home"
    site.mkdir()
    ws.mkdir()
    make_distribution(site, "zed-agent-hippo", "zed_agent", ZED_AGENT)
    env = {"ZED_HOME": str(home), "HIPPO_HOME": str(tmp_path / "hippo-home")}

    def run(*args: str, stdin: str = "") -> tuple[str, str]:
        import subprocess
        import sys

        if stdin:
            done = subprocess.run(
                [sys.executable, "-m", "hippo_core", *args],
                cwd=ws,
                env={**_env(site), **env},
                input=stdin,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        else:
            done = run_hippo(list(args), ws, site, "zed_agent", **env)
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr

    run("init")
    return run, ws, home


def _env(site: Path) -> dict[str, str]:
    import os

    found = dict(os.environ)
    found.update(PYTHONPATH=str(site), HIPPO_LOAD_PLUGINS="zed_agent")
    return found


def test_hooks_install_writes_the_agents_settings_file_and_events(zed):
    run, ws, _home = zed
    out, _ = run("hooks", "install", "zed-agent")
    path = ws / ".zed-agent" / "hooks.json"
    assert out.splitlines() == [
        f"added Start, Ask, Stop to {path}",
        "note: zed-agent runs hooks only in a folder it trusts: touch .zed-agent/trusted",
    ]
    hooks = json.loads(path.read_text())["hooks"]
    assert list(hooks) == ["Start", "Ask", "Stop"]
    [[handler]] = [group["hooks"] for group in hooks["Ask"]]
    assert handler["command"].endswith(" hook prompt --tool zed-agent")
    assert handler["timeout"] == 12
    assert run("hooks", "install", "zed-agent")[0].startswith(f"{path} already has hippo's hooks")
    assert run("hooks", "uninstall", "zed-agent")[0] == f"removed 3 hippo hooks from {path}\n"


def test_mcp_install_writes_the_agents_config(zed):
    run, ws, _home = zed
    out, _ = run("mcp", "install", "zed-agent")
    path = ws / ".zed-agent" / "mcp.json"
    assert out == f"added hippo's MCP server in {path}\n"
    server = json.loads(path.read_text())["servers"]["hippo"]
    assert server["args"][-1] == "mcp"


def test_doctor_reports_the_agents_hooks_its_problem_and_mcp(zed):
    run, ws, _home = zed
    run("hooks", "install", "zed-agent")
    run("mcp", "install", "zed-agent")
    out, _ = run("doctor")
    assert "info: hooks: zed-agent: Ask, Start, Stop in .zed-agent/hooks.json" in out
    assert (
        "warning: hooks: zed-agent: .zed-agent/hooks.json: zed-agent runs hooks only in a "
        "folder it trusts" in out
    )
    assert "info: mcp: zed-agent: hippo's server is registered in .zed-agent/mcp.json" in out
    (ws / ".zed-agent" / "trusted").touch()
    assert "zed-agent runs hooks only" not in run("doctor")[0]


def test_ingest_reads_the_agents_transcripts(zed):
    run, ws, home = zed
    (home / "sessions").mkdir(parents=True)
    turn = {"session": "s1", "cwd": str(ws), "prompt": "why does zed flake", "answer": "a race"}
    (home / "sessions" / "s1.jsonl").write_text(json.dumps(turn) + "\n")
    out, _ = run("ingest", "--json")
    assert json.loads(out)["turns"] == 1
    found, _ = run("search", "flake", "--json")
    [hit] = json.loads(found)
    assert hit["session"] == "zed-agent-s1"


def test_the_hooks_name_the_session_as_the_agents_source_does(zed):
    run, ws, _home = zed
    (ws / "notes" / "Zed.md").write_text("# Zed\n\nThe zed flake is a race in the runner.\n")
    start = {"session_id": "s1", "cwd": str(ws), "source": "startup"}
    out, _ = run("hook", "session-start", "--tool", "zed-agent", stdin=json.dumps(start))
    assert out.startswith("<hippo-context>")
    prompt = {"session_id": "s1", "cwd": str(ws), "prompt": "why does zed flake"}
    out, _ = run("hook", "prompt", "--tool", "zed-agent", stdin=json.dumps(prompt))
    assert "- Zed: The zed flake is a race" in out
    record = json.loads((ws / ".hippo" / "sessions" / "zed-agent-s1.json").read_text())
    assert record["tool"] == "zed-agent" and record["task"] == "why does zed flake"
    # The session's later prompts are answered from its record, as Claude Code's are.
    assert run("hook", "prompt", "--tool", "zed-agent", stdin=json.dumps(prompt))[0] == ""


def test_the_agents_variables_say_it_runs_the_process(zed, tmp_path: Path):
    """``ZED_AGENT=1``, the agent's mark, names it as the agent that runs a command."""
    import os
    import subprocess
    import sys

    code = "from hippo_core.agents.env import agent_in; import os; print(agent_in(os.environ))"
    env = {**_env(tmp_path / "site"), "ZED_AGENT": "1"}
    env = {k: v for k, v in env.items() if k not in {m[1] for m in MARKS} or k == "ZED_AGENT"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout == "{'agent': 'zed-agent', 'variable': 'ZED_AGENT'}\n"
    assert os.environ.get("ZED_AGENT") is None


def test_an_agent_registered_wrong_is_left_out_and_named():
    problems: list[str] = []
    assert "bad agent" not in load_plugins().agents(problems)
    assert Agent("Bad Agent").check().startswith("its name is lower-case")
    assert "none of session-start" in Agent("x", hook_events={"Go": "start"}).check()


def test_the_hot_tables_agree_with_the_registered_agents():
    """The hooks name a session before any plugin is loaded, and env.py tells the agent
    without loading them: their tables are the registered agents' own values."""
    agents = load_plugins().agents()
    assert {
        name: agent.session_prefix for name, agent in agents.items() if agent.has_hooks
    } == SESSION_PREFIXES
    plain = [
        name
        for name, agent in agents.items()
        if agent.has_hooks and agent.hook_output == "text" and not agent.fresh_resume
    ]
    assert tuple(plain) == PLAIN_AGENTS
    own = tuple(
        (name, variable, values)
        for name, agent in agents.items()
        for variable, values in agent.env_marks
    )
    assert MARKS[: len(own)] == own
    assert {
        name: (agent.session_variable, agent.session_prefix)
        for name, agent in agents.items()
        if agent.session_variable
    } == SESSIONS
