"""``/mcp``: every MCP tool the plugins register, served over the SDK's streamable HTTP
transport beside the routes, with ``nudge`` the service's own (it wakes the heartbeat)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import Field

from hippo_core import HippoError, Tool, ToolArguments
from hippo_packs.sleep.service.heartbeat import PID_MAX

if TYPE_CHECKING:
    from hippo_packs.sleep.service.heartbeat import Service

#: Where MCP is served, and more Host headers the service answers to (beside
#: ``[sleep.serve] allowed_hosts``, on every route).
MCP_MOUNT, MCP_HOSTS = "HIPPO_SLEEP_MCP_MOUNT", "HIPPO_SLEEP_MCP_ALLOWED_HOSTS"


class Refused(HippoError):
    """The service will not start: said in one line."""


class NudgeArguments(ToolArguments):
    """The service's ``nudge`` tool: who nudged, so the tick waits for it."""

    pid: int | None = Field(
        None,
        ge=1,
        le=PID_MAX,
        description="Your session's process id: the tick waits for it to end.",
    )


def more_hosts() -> list[str]:
    """The Host values ``$HIPPO_SLEEP_MCP_ALLOWED_HOSTS`` adds (comma-separated)."""
    from hippo_packs.sleep.config import host_entry

    hosts = [h.strip() for h in os.environ.get(MCP_HOSTS, "").split(",") if h.strip()]
    for host in hosts:
        if not host_entry(host):
            raise Refused(
                f"{MCP_HOSTS}: {host!r} is not a Host; give name:port values, comma-separated"
            )
    return [host.lower() for host in hosts]


def mcp_mount(taken: set[str]) -> str:
    """The path of the MCP endpoint: ``/mcp``, or ``$HIPPO_SLEEP_MCP_MOUNT``; one of the
    ``taken`` paths (the other routes') is refused."""
    mount = os.environ.get(MCP_MOUNT, "/mcp") or "/mcp"
    if not mount.startswith("/") or mount in taken or " " in mount:
        raise Refused(
            f"{MCP_MOUNT}={mount!r}: give a path that starts with / and is no other route"
        )
    return mount


def mcp_manager(service: Service) -> Any:
    """The MCP endpoint's session manager, when the SDK is installed; None without it, and
    ``/mcp`` is then no route."""
    try:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings
    except ImportError:
        return None
    from hippo_core import load_plugins, mcp_server

    def nudge(workspace: Any, given: NudgeArguments) -> dict[str, Any]:
        return service.nudge(given.pid)

    tools = dict(load_plugins().tools())
    tools["nudge"] = Tool(
        "nudge",
        "Your turn is done: wake the sleep service, which runs a tick (after your session ends).",
        NudgeArguments,
        nudge,
    )
    # The service's guard checks the Host and the Origin of every request, /mcp's too,
    # before the SDK sees it; the SDK's own check would know fewer of the names.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # Stateless: every request is whole, as every route's is.
    return StreamableHTTPSessionManager(
        app=mcp_server(tools, service.root),
        stateless=True,
        json_response=True,
        security_settings=security,
    )
