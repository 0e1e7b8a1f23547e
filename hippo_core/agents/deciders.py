"""Who acts: a person at a terminal, a command run without one, an agent's shell, or an
agent's tool call over MCP (on stdio, or at the sleep service's HTTP routes and ``/mcp``).

Every way of writing to memory and of deciding a review says who it was, as a small
mapping (:data:`Decider`), and hands it on: the applier keeps it in the receipt's
``invocation.by``, the queue of a plugin gets it as ``by`` (the sleep pack keeps it on each
operation, and on each fragment, brief and voice card as who wrote it).

``person`` is True only for ``hippo review`` (or another decision a command asks of a
person) run with a terminal for its input and output, under no agent (:mod:`.agent_env`:
neither its environment nor, on Linux, its ancestors' names one), where the person typed
back a short code hippo showed (:func:`confirm_person`). A program that opens a
pseudo-terminal, reads the code and types it back can still pass, if it runs outside an
agent's process tree with none of an agent's variables: docs/security.md says what this
proves and what it does not.

:func:`same_author` tells whether a decider is the session (or the client) that wrote
something, so that no session approves what it wrote.
"""

from __future__ import annotations

import contextvars
import os
import sys
from typing import TYPE_CHECKING, Any

from hippo_core.base.errors import HippoError

if TYPE_CHECKING:
    from collections.abc import Callable

    from hippo_core.workspace.folder import Workspace

#: Who makes the MCP tool call running now: the client as it named itself, the transport
#: and, on stdio, the connection (set by :func:`hippo_core.mcp.tool.call`; :func:`tool_call`
#: reads it). The sleep service's HTTP routes set it too, for what they write.
CALLER: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "hippo_mcp_caller", default=None
)

#: ``way`` (``terminal``, ``command``, ``mcp`` or ``http``), ``person`` (bool), and what is
#: known of who: ``user`` (a login); ``agent`` (the agent the environment names:
#: ``claude-code``, ``codex``, ``gemini``, ``opencode``); ``session`` (the agent's session,
#: as hippo's session records name it, when the environment names it); and for a tool
#: call, ``client`` (as it named itself), ``tool``, ``connection`` (one ``hippo mcp``
#: process: one agent session on stdio) and ``open_session`` (the newest declared session
#: open in the workspace, a guess shown for a person, never compared).
Decider = dict[str, Any]
#: The code a person types back: letters and digits nobody confuses (no O/0, I/1, S/5).
CODE_LETTERS = "ACDEFHJKLMNPRTUVWXY34679"
CODE_LENGTH = 4


def at_terminal(*, confirm: bool = True) -> Decider:
    """This command as it runs now: a person when its input and output are a terminal, no
    agent runs it, and (with ``confirm``) the person typed back the code it showed.

    Raises :class:`~hippo_core.base.errors.HippoError` when the code typed is not the one shown,
    so that nothing is decided in a person's name that they did not confirm."""
    from hippo_core.agents.env import running_agent

    terminal = _isatty(sys.stdin) and _isatty(sys.stdout)
    by: Decider = {"way": "terminal" if terminal else "command", "person": False, "user": _user()}
    agent = running_agent()
    if agent is not None:
        by["agent"] = agent["agent"]
        if agent.get("session"):
            by["session"] = agent["session"]
        return by
    if terminal and confirm:
        confirm_person()
    by["person"] = terminal
    return by


def confirm_person(
    ask: Callable[[str], str] | None = None, code: Callable[[], str] | None = None
) -> None:
    """Show a short code on the terminal and read it back; raise
    :class:`~hippo_core.base.errors.HippoError` when what was typed is not it."""
    shown = (code or new_code)()
    prompt = f"To decide this as a person, type the code {shown} and press Enter: "
    try:
        typed = (ask or _ask)(prompt)
    except (EOFError, KeyboardInterrupt, OSError):
        typed = ""
    if typed.strip().upper() != shown:
        raise HippoError(
            f"the code {shown} was not typed back: nothing was decided "
            "(a person at a terminal types the code hippo shows)"
        )


def new_code() -> str:
    import secrets

    return "".join(secrets.choice(CODE_LETTERS) for _ in range(CODE_LENGTH))


def _ask(prompt: str) -> str:
    # On standard error when that is the terminal too: standard output may be --json.
    shown = sys.stderr if _isatty(sys.stderr) else sys.stdout
    shown.write(prompt)
    shown.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def tool_call(workspace: Workspace, tool: str) -> Decider:
    """The MCP tool call running now: the client as it named itself, over which transport
    and connection, the agent the server's environment names (and its session), and the
    agent session open in the workspace (the newest declared one), if any."""
    from hippo_core.agents.env import agent_in
    from hippo_core.agents.sessions import latest_open

    caller = CALLER.get() or {}
    by: Decider = {
        "way": caller.get("transport", "mcp"),
        "person": False,
        "client": caller.get("client", "") or "an MCP client that did not say its name",
        "tool": tool,
    }
    if caller.get("connection"):
        by["connection"] = caller["connection"]
    # Over HTTP the server's environment is the service's own, not the caller's.
    agent = agent_in(os.environ) if by["way"] == "mcp" else None
    if agent is not None:
        by["agent"] = agent["agent"]
        if agent.get("session"):
            by["session"] = agent["session"]
    session = latest_open(workspace)
    if session:
        by["open_session"] = str(session["id"])
    return by


def acting_now(workspace: Workspace, what: str, *, http_client: str | None = None) -> Decider:
    """Who does ``what`` (``remember``, ``submit_brief`` ...) now: the MCP tool call
    running, the HTTP request a route serves (``http_client``: its ``User-Agent``), or else
    this command, with what its environment says. No code is asked: this is a write, not a
    decision, and ``person`` here only says a terminal and no agent."""

    if http_client is not None:
        agent = " ".join(http_client.split())[:200]
        client = f"User-Agent {agent}" if agent else "an HTTP client that did not say its name"
        return {"way": "http", "person": False, "client": client, "tool": what}
    if CALLER.get() is not None:
        return tool_call(workspace, what)
    return at_terminal(confirm=False)


def same_author(writer: Decider, decider: Decider) -> str | None:
    """Why ``decider`` is the one that wrote (``writer``): the same agent session, the same
    MCP connection, or (where neither names a session or a connection both can compare)
    the same agent or client; None when it is someone else. A person's decision is never
    the author's: the rule keeps agents from approving what they wrote, and a person may
    approve what they remembered themselves."""
    if decider.get("person"):
        return None
    for key, said in (("session", "the same session"), ("connection", "the same connection")):
        if writer.get(key) and decider.get(key) and writer[key] == decider[key]:
            return f"{said} ({writer[key]})"
    if (writer.get("session") and decider.get("session")) or (
        writer.get("connection") and decider.get("connection")
    ):
        return None  # both named, and told apart
    mine, theirs = _who(writer), _who(decider)
    if mine and mine == theirs:
        kind = "agent" if writer.get("agent") else "client"
        return f"the same {kind} ({mine}), whose sessions hippo cannot tell apart there"
    return None


def _who(by: Decider) -> str:
    """What an author is known as when no session tells it apart: its agent, else its MCP
    client's name (without a version: a client updated between two calls is the same)."""
    if by.get("agent"):
        return str(by["agent"])
    if by.get("way") in ("mcp", "http") and by.get("client"):
        return str(by["client"]).split(" ", 1)[0]
    return ""


def describe_decider(by: Decider) -> str:
    """``by`` in words, as a receipt's reviewer and ``hippo sleep audit`` name it."""
    if by.get("person"):
        return f"{by.get('user') or 'a person'} at a terminal"
    session = f", session {by['session']}" if by.get("session") else ""
    if by.get("way") in ("terminal", "command"):
        if by.get("agent"):
            return f"{by['agent']} through its shell ({by.get('user') or 'someone'}{session})"
        return f"{by.get('user') or 'someone'} (a command with no terminal)"
    if not session and by.get("open_session"):
        session = f", session {by['open_session']}"
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
