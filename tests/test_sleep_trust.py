"""Who let a memory in: an agent's approval through its MCP tools is named on the draft, in
the receipt, on the core and in ``hippo sleep audit``; with ``[sleep] review = "person"``
only ``hippo review`` in a terminal approves (a real pseudo-terminal, a real MCP client)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.sleep_scene import Sleepy, make_sleepy
from tests.terminal import in_a_terminal
from tests.test_mcp import SERVER, Agent, server_env

FRAGMENTS = (
    "Deploys run from main after CI passes",
    "we deploy from main now, never from release branches",
    "deploy only when CI is green on main",
)


def as_agent(root: Path, errlog: Path, body: Any, env: dict[str, str] | None = None) -> None:
    """``body(agent)`` against ``hippo mcp`` in ``root``, as a client that says its name;
    ``env`` adds to the server's environment (what an agent sets for the servers it starts)."""

    @contextlib.asynccontextmanager
    async def connect() -> AsyncIterator[Agent]:
        params = StdioServerParameters(
            command=SERVER[0], args=SERVER[1:], cwd=root, env={**server_env(), **(env or {})}
        )
        me = types.Implementation(name="test-agent", version="7.1")
        with errlog.open("w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write, client_info=me) as session,
            ):
                await session.initialize()
                yield Agent(session)

    async def main() -> None:
        async with connect() as agent:
            await body(agent)

    anyio.run(main)
    assert "Traceback" not in errlog.read_text()


def drafted_by_the_agent(night: Sleepy, tmp_path: Path) -> str:
    """Three fragments, a brief and a nudge, all through the agent's tools: the draft."""
    found: dict[str, str] = {}

    async def body(agent: Agent) -> None:
        for text in FRAGMENTS:
            await agent.ok("remember", text=text, topic="deploy")
        await agent.ok("submit_brief", summary="deploys", promote_hints=["deploy"])
        found["draft"] = (await agent.ok("nudge"))["check"]["slept"]["draft"]

    as_agent(night.root, tmp_path / "drafting.txt", body)
    return found["draft"]


def receipt(root: Path, draft: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((root / f".hippo/receipts/{draft}-op0.json").read_text())
    return found


def test_an_agents_approval_is_named_on_the_draft_the_receipt_the_core_and_the_audit(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path
) -> None:
    night = make_sleepy(make_workspace(), hippo)  # mechanical mode: a core of each cluster
    night.ok("session", "start", "--id", "agent-7", "--task", "tidy the deploy notes")
    draft = drafted_by_the_agent(night, tmp_path)

    async def approve(agent: Agent) -> None:
        landed = await agent.ok(
            "review_decide", id=draft, decisions=[{"op": 0, "verdict": "approve"}]
        )
        assert landed["approved"] == 1

    # Another connection than the one that wrote the fragments: another session (issue 37).
    as_agent(night.root, tmp_path / "review.txt", approve)
    op = night.draft()["operations"][0]
    by = op["decided_by"]
    assert by["connection"].startswith("stdio ")
    assert by == {
        "way": "mcp",
        "person": False,
        "client": "test-agent 7.1",
        "tool": "review_decide",
        "connection": by["connection"],
        "open_session": "agent-7",
    }
    landed = receipt(night.root, draft)
    assert landed["invocation"]["by"] == by and landed["invocation"]["command"] == "mcp"
    assert (
        landed["reviewer"]["name"] == "test-agent 7.1 through review_decide (mcp, session agent-7)"
    )
    [core] = night.cores().values()
    assert '\napproved_by: "agent"\n' in core
    audit = night.ok("sleep", "audit").out.splitlines()
    assert "landed 1 (by a person 0, by an agent 1), 1 attempt(s)" in audit[0]
    assert audit[1] == "  approved by test-agent 7.1 through review_decide (mcp, session agent-7)"


def test_when_a_person_must_approve_an_agent_and_a_pipe_cannot(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path
) -> None:
    night = make_sleepy(make_workspace(), hippo, '[sleep]\nreview = "person"\n')
    draft = drafted_by_the_agent(night, tmp_path)
    before = json.dumps(night.draft()), night.cores()
    refusal = (
        'a person must approve drafts in this workspace ([sleep] review = "person"), and this '
        "is test-agent 7.1 through review_decide (mcp): run `hippo review "
        f"{draft}` in a terminal (denials may come from anyone)"
    )

    async def approve(agent: Agent) -> None:
        said = await agent.error(
            "review_decide", id=draft, decisions=[{"op": 0, "verdict": "approve"}]
        )
        assert said == refusal

    as_agent(night.root, tmp_path / "review.txt", approve)
    assert (json.dumps(night.draft()), night.cores()) == before  # nothing landed
    piped = subprocess.run(
        [sys.executable, "-m", "hippo_core", "review", draft, "--approve", "0"],
        cwd=night.root,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        check=False,
    )
    assert piped.returncode == 1 and "a person must approve drafts" in piped.stderr
    assert "(a command with no terminal)" in piped.stderr
    assert (json.dumps(night.draft()), night.cores()) == before

    code, said = in_a_terminal(night.root, "review", draft, "--approve", "0")
    assert code == 0 and "operation 0: landed in notes/cores/" in said, said
    assert night.draft()["operations"][0]["decided_by"]["person"] is True
    assert receipt(night.root, draft)["reviewer"]["name"].endswith(" at a terminal")
    [core] = night.cores().values()
    assert '\napproved_by: "person"\n' in core
    assert "landed 1 (by a person 1, by an agent 0)" in night.ok("sleep", "audit").out


def test_an_approval_at_the_services_mcp_is_named_http_and_a_person_rule_holds_there(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """The same tool at ``hippo sleep serve``'s ``/mcp`` (the SDK's HTTP client): named
    ``http``, the client by its User-Agent (each request stands alone there); with
    ``review = "person"`` it is refused there too, and nothing lands."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.test_sleep_service import serving, stop

    def drafted(settings: str) -> tuple[Sleepy, str]:
        night = make_sleepy(make_workspace(), hippo, settings)
        for text in FRAGMENTS:
            night.remember(text, "deploy")
        night.ok("brief", "--summary", "deploys", "--promote", "deploy")
        return night, night.json("sleep", "now")["sleep"]["draft"]

    def decide(night: Sleepy, draft: str) -> types.CallToolResult:
        served = serving(night.root)
        url = f"http://{served.host}:{served.port}/mcp"

        headers = {"Authorization": f"Bearer {served.token}", "User-Agent": "web-agent/2"}

        async def call() -> types.CallToolResult:
            me = types.Implementation(name="web-agent", version="2")
            async with (
                httpx2.AsyncClient(headers=headers) as web,
                streamable_http_client(url, http_client=web) as (read, write, *_),
                ClientSession(read, write, client_info=me) as mcp,
            ):
                await mcp.initialize()
                decisions = [{"op": 0, "verdict": "approve"}]
                return await mcp.call_tool("review_decide", {"id": draft, "decisions": decisions})

        try:
            return anyio.run(call)
        finally:
            assert "Traceback" not in stop(served)

    night, draft = drafted("")
    assert not decide(night, draft).is_error
    by = night.draft()["operations"][0]["decided_by"]
    assert (by["way"], by["person"], by["client"]) == ("http", False, "User-Agent web-agent/2")
    assert receipt(night.root, draft)["invocation"]["by"] == by

    night, draft = drafted('[sleep]\nreview = "person"\n')
    before = json.dumps(night.draft()), night.cores()
    said = decide(night, draft)
    assert said.is_error and "a person must approve drafts in this workspace" in str(said.content)
    assert "(http)" in str(said.content)
    assert (json.dumps(night.draft()), night.cores()) == before
