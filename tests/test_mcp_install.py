"""`hippo mcp install|uninstall AGENT [--user]`: hippo's server in each agent's own config,
merged into what is there, idempotent, and never written over a file it cannot read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
import tomlkit
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from hippo_core.mcp.install import entry, registrations, server_argv
from tests.conftest import HippoRunner, WorkspaceMaker

#: Each agent's project file, one existing config of a person's with another server, and
#: where hippo's entry is found in it once parsed.
PROJECT = {
    "claude-code": ".mcp.json",
    "codex": ".codex/config.toml",
    "gemini": ".gemini/settings.json",
    "opencode": "opencode.json",
}
EXISTING = {
    "claude-code": '{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}\n',
    "codex": (
        "# my Codex settings\n"
        'model = "o3"  # the one I like\n\n'
        "[mcp_servers.git]\n"
        'command = "uvx"  # from PyPI\n'
        'args = ["mcp-server-git"]\n'
    ),
    "gemini": '{"theme": "Dracula", "mcpServers": {"git": {"command": "uvx"}}}',
    "opencode": (
        '{"$schema": "https://opencode.ai/config.json", '
        '"mcp": {"git": {"type": "local", "command": ["uvx", "mcp-server-git"]}}}'
    ),
}
KEY = {
    "claude-code": "mcpServers",
    "codex": "mcp_servers",
    "gemini": "mcpServers",
    "opencode": "mcp",
}


def servers(agent: str, path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    data = tomlkit.parse(text).unwrap() if agent == "codex" else json.loads(text)
    return data.get(KEY[agent], {})


@pytest.mark.parametrize("agent", list(PROJECT))
def test_install_merges_is_idempotent_and_uninstall_removes_only_hippo(
    agent: str, hippo: HippoRunner, make_workspace: WorkspaceMaker
):
    root = make_workspace()
    path = root / PROJECT[agent]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EXISTING[agent], encoding="utf-8")
    sub = root / "src" / "deep"
    sub.mkdir(parents=True)

    run = hippo("mcp", "install", agent, cwd=sub)  # the workspace's root, from below it
    assert run.code == 0 and run.out.startswith(f"added hippo's MCP server in {path}\n")
    found = servers(agent, path)
    assert found["hippo"] == entry(agent) and "git" in found
    assert found["hippo"]["command" if agent == "opencode" else "args"][-1] == "mcp"
    if agent == "codex":
        text = path.read_text()
        assert "# my Codex settings" in text and 'model = "o3"  # the one I like' in text
        assert 'command = "uvx"  # from PyPI' in text
    if agent == "gemini":
        assert json.loads(path.read_text())["theme"] == "Dracula"
    once = path.read_bytes()

    again = hippo("mcp", "install", agent, cwd=root)
    assert again.code == 0 and again.out.startswith(f"{path} already has hippo's MCP server")
    assert path.read_bytes() == once

    gone = hippo("mcp", "uninstall", agent, cwd=root)
    assert gone.code == 0 and gone.out == f"removed hippo's MCP server from {path}\n"
    assert list(servers(agent, path)) == ["git"]
    if agent == "codex":  # TOML keeps the person's text: as it was, byte for byte
        assert path.read_text() == EXISTING[agent]
    twice = hippo("mcp", "uninstall", agent, cwd=root)
    assert twice.code == 0 and twice.out == f"{path} has no hippo MCP server\n"


@pytest.mark.parametrize("agent", list(PROJECT))
def test_install_into_a_missing_file_writes_just_hippo(
    agent: str, hippo: HippoRunner, make_workspace: WorkspaceMaker
):
    root = make_workspace()
    assert hippo("mcp", "install", agent, cwd=root).code == 0
    path = root / PROJECT[agent]
    assert servers(agent, path) == {"hippo": entry(agent)}
    assert hippo("mcp", "uninstall", agent, cwd=root).code == 0
    assert servers(agent, path) == {}


BROKEN = {"json": '{"mcpServers": {"git": ', "toml": "[mcp_servers.git\ncommand = 'x'\n"}


@pytest.mark.parametrize("agent", list(PROJECT))
def test_a_config_that_does_not_parse_is_refused_and_left_as_it_was(
    agent: str, hippo: HippoRunner, make_workspace: WorkspaceMaker
):
    root = make_workspace()
    path = root / PROJECT[agent]
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = "toml" if agent == "codex" else "json"
    path.write_bytes(BROKEN[kind].encode())
    listing = sorted(path.parent.iterdir())
    for verb in ("install", "uninstall"):
        run = hippo("mcp", verb, agent, cwd=root)
        assert run.code == 1 and run.out == ""
        [line] = run.err.splitlines()
        assert line.startswith(f"error: {path}: not valid {kind.upper()} (")
        assert line.endswith("nothing was changed: fix it, then run this again")
        assert path.read_bytes() == BROKEN[kind].encode()
    assert sorted(path.parent.iterdir()) == listing  # no stray temp file either


def test_servers_that_are_not_an_object_are_refused(hippo: HippoRunner, tmp_path: Path):
    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": ["git"]}')
    run = hippo("mcp", "install", "claude-code", cwd=tmp_path)
    assert run.code == 1
    assert run.err == f'error: {path}: "mcpServers" is not a JSON object; nothing was changed\n'
    top = tmp_path / "opencode.json"
    top.write_text("[]")
    listed = hippo("mcp", "install", "opencode", cwd=tmp_path)
    assert listed.err == f"error: {top}: expected a JSON object; nothing was changed\n"
    toml = tmp_path / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text('mcp_servers = "none"\n')
    codex = hippo("mcp", "install", "codex", cwd=tmp_path)
    assert codex.err == f"error: {toml}: mcp_servers is not a table; nothing was changed\n"
    assert path.read_text() == '{"mcpServers": ["git"]}' and top.read_text() == "[]"


def test_an_entry_a_person_changed_is_brought_up_to_date_keeping_their_keys(
    hippo: HippoRunner, tmp_path: Path
):
    path = tmp_path / ".mcp.json"
    mine = {"command": "/old/hippo", "args": ["mcp"], "env": {"HIPPO_HOME": "/data/hippo"}}
    path.write_text(json.dumps({"mcpServers": {"hippo": mine}}))
    run = hippo("mcp", "install", "claude-code", cwd=tmp_path)
    assert run.out.startswith(f"updated hippo's MCP server in {path}")
    assert servers("claude-code", path)["hippo"] == {**mine, **entry("claude-code")}
    toml = tmp_path / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text(
        '[mcp_servers.hippo]\ncommand = "/old/hippo"  # mine\nstartup_timeout_sec = 20\n'
    )
    assert hippo("mcp", "install", "codex", cwd=tmp_path).out.startswith("updated")
    kept = servers("codex", toml)["hippo"]
    assert kept == {**entry("codex"), "startup_timeout_sec": 20}


def test_user_configs_are_where_each_agent_reads_them(
    hippo: HippoRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = Path(os.environ["HOME"])
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    default = {
        "claude-code": home / ".claude.json",
        "codex": home / ".codex" / "config.toml",
        "gemini": home / ".gemini" / "settings.json",
        "opencode": home / ".config" / "opencode" / "opencode.json",
    }
    for agent, path in default.items():
        run = hippo("mcp", "install", agent, "--user", cwd=tmp_path)
        assert run.out == f"added hippo's MCP server in {path}\n"  # no project note for --user
        assert "hippo" in servers(agent, path)
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(elsewhere / "codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(elsewhere / "gemini"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(elsewhere / "xdg"))
    moved = {
        "claude-code": elsewhere / "claude" / ".claude.json",
        "codex": elsewhere / "codex" / "config.toml",
        "gemini": elsewhere / "gemini" / ".gemini" / "settings.json",
        "opencode": elsewhere / "xdg" / "opencode" / "opencode.json",
    }
    for agent, path in moved.items():
        assert hippo("mcp", "install", agent, "--user", cwd=tmp_path).code == 0
        assert "hippo" in servers(agent, path)
        assert hippo("mcp", "uninstall", agent, "--user", cwd=tmp_path).code == 0
        assert "hippo" not in servers(agent, path)


def test_registrations_say_where_hippo_is_registered(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
):
    root = make_workspace()
    before = registrations(root)
    assert [(r.agent, r.scope) for r in before] == [
        (agent, scope) for agent in PROJECT for scope in ("project", "user")
    ]
    assert not any(r.registered for r in before) and not any(r.problem for r in before)
    hippo("mcp", "install", "claude-code", cwd=root)
    hippo("mcp", "install", "codex", "--user", cwd=root)
    (root / "opencode.json").write_text("{oops")
    found = {(r.agent, r.scope): r for r in registrations(root)}
    assert [key for key, r in found.items() if r.registered] == [
        ("claude-code", "project"),
        ("codex", "user"),
    ]
    assert found[("claude-code", "project")].path == root / ".mcp.json"
    broken = found[("opencode", "project")]
    assert not broken.registered and broken.problem.startswith(f"{root / 'opencode.json'}: not")


def test_an_unknown_agent_is_a_usage_error(hippo: HippoRunner, tmp_path: Path):
    folder = tmp_path / "project"
    folder.mkdir()
    run = hippo("mcp", "install", "cursor", cwd=folder)
    assert run.code == 2
    assert run.err == (
        "error: hippo mcp installs for claude-code, codex, gemini, opencode, not 'cursor'\n"
    )
    assert hippo("mcp", "uninstall", "cursor", cwd=folder).code == 2
    assert list(folder.iterdir()) == []


def test_the_registered_command_starts_the_server(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path
):
    root = make_workspace()
    hippo("mcp", "install", "claude-code", cwd=root)
    registered = servers("claude-code", root / ".mcp.json")["hippo"]
    assert [registered["command"], *registered["args"]] == server_argv()
    keep = ("HOME", "HIPPO_HOME", "HIPPO_LOAD_PLUGINS", "PATH")
    params = StdioServerParameters(
        command=registered["command"],
        args=registered["args"],
        cwd=root,
        env={key: os.environ[key] for key in keep if key in os.environ},
    )
    names: list[str] = []

    async def main() -> None:
        with (tmp_path / "stderr.txt").open("w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                names.extend(t.name for t in (await session.list_tools()).tools)
                home = await session.call_tool("read_note", {"path": "Home.md"})
                assert not home.is_error and "# Home" in home.content[0].text

    anyio.run(main)
    assert names[:3] == ["search", "recall", "read_note"] and "nudge" in names
