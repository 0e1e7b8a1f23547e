"""``hippo mcp``: every tool the plugins register, served over MCP on stdio by the SDK's own
low-level server (the optional extra ``mcp``: ``pip install -e '.[mcp]'`` in hippo's checkout).

The agent starts the server in its project; each call finds the workspace from there
again, so a note edited or a workspace made since the last call is what the next one sees.
Calls run one at a time in a worker thread, so the server keeps answering (pings, a list of
tools) while a tool works, and a call the client gives up on still finishes its writes.
Whatever a tool raises comes back as a tool error of one line (:func:`~.tool.call`); a
malformed message is answered with a JSON-RPC error by the SDK; a client that goes away
ends the server quietly. At the end of its input (a client that writes its requests and
closes stdin) the server answers every request it read before, then exits 0.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any

from hippo_core.base.distribution import install_hint
from hippo_core.base.errors import HippoError
from hippo_core.version import __version__

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp import types
    from mcp.server import ServerRequestContext
    from mcp.server.lowlevel import Server

    from hippo_core.plugins.tools import Tool

#: The SDK this server is written against: 2.0 replaced the decorators of 1.x with
#: handlers passed to ``Server``, and 2.3 is the release it was tested with.
SDK = (2, 3)
INSTALL = install_hint("mcp")
INSTRUCTIONS = (
    "hippo keeps this project's notes (Markdown, reviewed) and an index of what coding "
    "agents were asked and did. recall and read_note read the notes; search finds past "
    "turns; context gives the block a session starts with; end_session records the notes "
    "a session touched and its handoff; review_list, review_show and review_decide review "
    "proposed changes."
)


def require_sdk() -> None:
    """Refuse in one line when the MCP SDK is missing or too old to serve."""
    try:
        import mcp.server.lowlevel  # noqa: F401
    except ImportError:
        raise HippoError(
            f"hippo mcp needs the MCP SDK (the mcp package), which is not installed: {INSTALL}"
        ) from None
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("mcp")
    except PackageNotFoundError:
        return
    parts = [int(p) if p.isdigit() else 0 for p in found.split(".")[:2]]
    if tuple(parts) < SDK:
        wanted = ".".join(map(str, SDK))
        raise HippoError(f"hippo mcp needs mcp {wanted} or later, not {found}: {INSTALL}")


def serve(start: str) -> int:
    """Serve the tools on stdin and stdout until the client goes; the exit code."""
    require_sdk()
    import anyio

    from hippo_core.context.watch import keep_fresh
    from hippo_core.plugins.manager import load_plugins

    tools = load_plugins().tools()
    _one_line_logs()
    watching = keep_fresh(start)  # the hooks skip their scan of the notes while it serves
    try:
        anyio.run(_serve, tools, start)
    except Exception as exc:
        if _client_gone(exc):
            return 0
        from hippo_core.mcp.tool import Outcome

        line = " ".join(f"{type(exc).__name__}: {exc}".split())
        sys.stderr.write(f"hippo mcp: stopped: {Outcome(line).text}\n")
        return 1
    finally:
        if watching is not None:
            watching()
    return 0


def mcp_server(tools: Mapping[str, Tool], start: str) -> Server[Any]:
    """The SDK's server offering ``tools``, each call run in the workspace at or above
    ``start``: what ``hippo mcp`` serves on stdio, and ``hippo sleep serve`` at ``/mcp``."""
    import anyio
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import Server

    from hippo_core.mcp.tool import call

    listed = types.ListToolsResult(
        tools=[
            types.Tool(name=t.name, description=t.description, input_schema=t.input_schema())
            for t in tools.values()
        ]
    )
    one_at_a_time = anyio.Lock()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        caller = _caller(ctx)
        async with one_at_a_time:
            outcome = await anyio.to_thread.run_sync(
                call, tools, params.name, params.arguments, start, caller
            )
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.text)],
            structured_content=outcome.data,
            is_error=outcome.error,
        )

    return Server(
        "hippo",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _caller(ctx: ServerRequestContext[Any]) -> dict[str, str]:
    """Who calls: the client's name and version as its ``initialize`` gave them, and the
    transport (``http`` at the sleep service's ``/mcp``, ``mcp`` on stdio). On stdio the
    connection is this server's process, which one agent session started for itself. Over
    HTTP each request stands alone (no session is kept), so the client is named by its
    ``User-Agent`` there, and no connection is known."""
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    client = " ".join(
        str(part) for part in (getattr(info, "name", ""), getattr(info, "version", "")) if part
    )
    if ctx.request is None:
        return {"client": client, "transport": "mcp", "connection": connection_id()}
    agent = " ".join(str(getattr(ctx.request, "headers", {}).get("user-agent", "")).split())
    if not client and agent:
        client = f"User-Agent {agent[:200]}"
    return {"client": client, "transport": "http"}


_CONNECTION: list[str] = []


def connection_id() -> str:
    """This server process's connection, made once: its process id and a random part (a
    process id is used again once the process is gone)."""
    if not _CONNECTION:
        import secrets

        _CONNECTION.append(f"stdio {os.getpid()}-{secrets.token_hex(4)}")
    return _CONNECTION[0]


async def _serve(tools: Mapping[str, Tool], start: str) -> None:
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    server = mcp_server(tools, start)
    async with stdio_server() as (read, write):
        # The SDK's loop stops at the end of input, and the requests it was still working
        # on go unanswered. Between it and stdin, the end of input is passed on only once
        # every request read before it has been answered (or cancelled by the client).
        inbox, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outbound, outbox = anyio.create_memory_object_stream[SessionMessage](0)
        waiting = _Unanswered()

        async def take_in() -> None:
            async with inbox:
                async for message in read:
                    waiting.read(message)
                    await inbox.send(message)
                await waiting.none()

        async def give_out() -> None:
            async with write:
                async for message in outbox:
                    await write.send(message)
                    waiting.written(message)

        async with anyio.create_task_group() as group:
            group.start_soon(take_in)
            group.start_soon(give_out)
            await server.run(inbound, outbound, server.create_initialization_options())


class _Unanswered:
    """The ids of the client's requests read and not yet answered, each as often as it
    was read (a client may use an id twice)."""

    def __init__(self) -> None:
        import anyio

        self.ids: dict[str | int, int] = {}
        self.changed = anyio.Event()

    def read(self, message: object) -> None:
        """Note a request read from the client; a cancellation forgets the one it names
        (the server answers no cancelled request)."""
        from mcp_types import JSONRPCNotification, JSONRPCRequest

        inner = getattr(message, "message", None)
        if isinstance(inner, JSONRPCRequest):
            self.ids[inner.id] = self.ids.get(inner.id, 0) + 1
        elif isinstance(inner, JSONRPCNotification) and inner.method == "notifications/cancelled":
            named = (inner.params or {}).get("requestId")
            if isinstance(named, str | int):
                self._forget(named)

    def written(self, message: object) -> None:
        """Note an answer written to the client."""
        from mcp_types import JSONRPCError, JSONRPCResponse

        inner = getattr(message, "message", None)
        if isinstance(inner, JSONRPCResponse | JSONRPCError) and inner.id is not None:
            self._forget(inner.id)

    def _forget(self, request: str | int) -> None:
        import anyio

        left = self.ids.pop(request, 0) - 1
        if left > 0:
            self.ids[request] = left
        self.changed.set()
        self.changed = anyio.Event()

    async def none(self) -> None:
        """Return once every request read has been answered."""
        while self.ids:
            await self.changed.wait()


def _client_gone(exc: BaseException) -> bool:
    """True when ``exc`` is only the client closing the pipes under a write."""
    import anyio

    if isinstance(exc, BaseExceptionGroup):
        return all(_client_gone(inner) for inner in exc.exceptions)
    gone = (
        BrokenPipeError,
        ConnectionResetError,
        anyio.BrokenResourceError,
        anyio.ClosedResourceError,
        anyio.EndOfStream,
    )
    return isinstance(exc, gone)


class _OneLine(logging.Formatter):
    """The SDK's log records as one line each, without tracebacks: a person reads the
    server's stderr in the agent's log, and the server goes on."""

    def format(self, record: logging.LogRecord) -> str:
        detail = ""
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            detail = f" ({type(error).__name__}: {error})"
        message = f"hippo mcp: {record.getMessage()}{detail}"
        return " ".join(message.split())


def _one_line_logs() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    logger = logging.getLogger("mcp")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
