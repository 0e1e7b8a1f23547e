"""Who decided a review: a person at a terminal, a command run without one, or an agent's
tool call over MCP (on stdio, or at the sleep service's ``/mcp``).

Every way of deciding (``hippo review``, the MCP tool ``review_decide``) says who it was,
as a small mapping (:data:`Decider`), and hands it on: the applier keeps it in the
receipt's ``invocation.by``, the queue of a plugin gets it as ``by`` (the sleep pack keeps
it on each operation, and can ask for a person). hippo cannot prove that a person typed a
command: a terminal is the sign it goes by, and what an agent runs through its shell tool
has none.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo_core.workspace import Workspace

#: ``way`` (``terminal``, ``command``, ``mcp`` or ``http``), ``person`` (bool), and what is
#: known of who: ``user`` (a login), or ``client``, ``tool`` and ``session`` for an agent.
Decider = dict[str, Any]


def at_terminal() -> Decider:
    """``hippo review`` run here: a person when its input and output are a terminal."""
    person = _isatty(sys.stdin) and _isatty(sys.stdout)
    return {"way": "terminal" if person else "command", "person": person, "user": _user()}


def tool_call(workspace: Workspace, tool: str) -> Decider:
    """The MCP tool call running now: the client as it named itself, over which transport,
    and the agent session open in the workspace (the newest declared one), if any."""
    from hippo_core.mcp.tool import CALLER
    from hippo_core.sessions import latest_open

    caller = CALLER.get() or {}
    session = latest_open(workspace)
    return {
        "way": caller.get("transport", "mcp"),
        "person": False,
        "client": caller.get("client", "") or "an MCP client that did not say its name",
        "tool": tool,
        "session": str(session["id"]) if session else None,
    }


def describe_decider(by: Decider) -> str:
    """``by`` in words, as a receipt's reviewer and ``hippo sleep audit`` name it."""
    if by.get("person"):
        return f"{by.get('user') or 'a person'} at a terminal"
    if by.get("way") == "command":
        return f"{by.get('user') or 'someone'} (hippo review, no terminal)"
    session = f", session {by['session']}" if by.get("session") else ""
    return f"{by.get('client')} through {by.get('tool')} ({by.get('way')}{session})"


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed, or replaced by something with no fd
        return False


def _user() -> str:
    try:
        import getpass

        return getpass.getuser()
    except (ImportError, KeyError, OSError):
        return os.environ.get("USER", "")
