"""Which coding agent runs this process, by the variables agents set for what they run.

Each agent marks the commands its shell tool runs, and the MCP servers it starts, with
variables of its own; some name the session too. What each of the four agents hippo knows
sets was read from the real programs (``tests/test_agent_environments.py`` runs each against
a scripted model and asks it to run ``env``, and re-checks it in CI) and from their
documentation and issue trackers; docs/security.md has the table.

A variable is only a sign: a process can remove it from its children's environment. So on
Linux the environments of this process's ancestors are read too (``/proc/<pid>/environ``,
readable by the same account), which a child cannot change: an agent that runs
``env -u CLAUDECODE hippo ...`` is still found, in the shell its tool started. A process
that left the agent's tree (a daemon, a terminal multiplexer's server started earlier) is
not. Imports ``os`` only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: ``(agent, variable, values)``: ``variable`` set to one of ``values`` (any non-empty value
#: when ``values`` is empty) says that ``agent`` runs the process. hippo's own agents' marks
#: are their registered :class:`~hippo_core.plugins.agent.Agent`'s ``env_marks``, kept here
#: so that a process tells them without loading plugins (``tests/test_agent_plugins.py``
#: holds the two together); another plugin's agents are read from it (:func:`marks`).
MARKS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("claude-code", "CLAUDECODE", ("1",)),
    ("claude-code", "CLAUDE_CODE_SESSION_ID", ()),
    ("codex", "CODEX_THREAD_ID", ()),
    ("codex", "CODEX_SESSION_ID", ()),
    ("codex", "CODEX_CI", ("1",)),
    ("codex", "CODEX_SANDBOX", ()),
    ("codex", "CODEX_SANDBOX_NETWORK_DISABLED", ()),
    ("gemini", "GEMINI_CLI", ("1",)),
    ("opencode", "OPENCODE", ("1",)),
    ("opencode", "OPENCODE_PID", ()),
    # The conventions a few agents share, for one hippo does not know by name.
    ("an agent", "AI_AGENT", ()),
    ("an agent", "AGENT", ("1", "true")),
)
#: The variable that names the agent's session, and how hippo names that session's record
#: (the hooks' ``codex-<thread id>``, :func:`hippo_core.actions.hook._raw_id`): the agents'
#: ``session_variable`` and ``session_prefix``.
SESSIONS = {
    "claude-code": ("CLAUDE_CODE_SESSION_ID", ""),
    "codex": ("CODEX_THREAD_ID", "codex-"),
}
#: How far up the process tree to look: past a few shells and wrappers, never forever.
MAX_ANCESTORS = 64


def agent_in(env: Mapping[str, str]) -> dict[str, str] | None:
    """The agent ``env`` says runs the process: ``agent`` (``claude-code``, ``codex``,
    ``gemini``, ``opencode``, or ``an agent``), ``variable`` (the one that said so) and,
    when the agent names it, ``session`` (as hippo's session records name it)."""
    known, sessions = marks()
    for agent, variable, values in known:
        value = env.get(variable, "")
        if value and (not values or value.strip().lower() in values):
            found = {"agent": agent, "variable": variable}
            if agent == "an agent" and variable == "AI_AGENT":
                found["agent"] = _named(value)
            name, prefix = sessions.get(found["agent"], ("", ""))
            session = env.get(name, "").strip() if name else ""
            if session and len(session) <= 200 and session.isprintable():
                found["session"] = prefix + session
            return found
    return None


def without_agent(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without any variable that names an agent or its session: for a command
    started as a session of its own (the sleep pack's ripple wakes a fresh one)."""
    marked = {variable for _agent, variable, _values in marks()[0]}
    return {name: value for name, value in env.items() if name not in marked}


def marks() -> tuple[tuple[tuple[str, str, tuple[str, ...]], ...], dict[str, tuple[str, str]]]:
    """:data:`MARKS` and :data:`SESSIONS` with the agents other plugins register: their
    marks go before the conventions agents share. Plugins are loaded only when a third
    party's are installed (``HIPPO_LOAD_PLUGINS`` empty loads none)."""
    if os.environ.get("HIPPO_LOAD_PLUGINS", None) == "":
        return MARKS, SESSIONS
    from hippo_core.plugins.manager import load_plugins

    try:
        plugins = load_plugins()
        agents = [a for a in plugins.agents().values() if not plugins.is_builtin_agent(a.name)]
    except Exception:  # a broken plugin is doctor's to name; the marks hippo knows still hold
        return MARKS, SESSIONS
    own = tuple(mark for mark in MARKS if mark[0] != "an agent")
    extra = tuple((a.name, var, values) for a in agents for var, values in a.env_marks)
    sessions = dict(SESSIONS)
    for agent in agents:
        if agent.session_variable:
            sessions[agent.name] = (agent.session_variable, agent.session_prefix)
    return own + extra + MARKS[len(own) :], sessions


def _named(value: str) -> str:
    """An agent's name from ``AI_AGENT`` (``claude-code_2-1-332_agent``: ``claude-code``)."""
    name = value.split("_", 1)[0].strip()
    return name if name and len(name) <= 40 and name.isprintable() else "an agent"


def running_agent() -> dict[str, str] | None:
    """The agent this process runs under: its own environment first, then (on Linux) its
    ancestors', nearest first. ``ancestor`` is the process id whose environment said so,
    when it was not this process's."""
    own = agent_in(os.environ)
    if own is not None:
        return own
    pid = os.getppid()
    for _ in range(MAX_ANCESTORS):
        if pid <= 1:
            return None
        env, parent = _environ(pid), _parent(pid)
        if env is None or parent is None:
            return None  # no /proc here, or the process is gone or another account's
        found = agent_in(env)
        if found is not None:
            return {**found, "ancestor": str(pid)}
        pid = parent
    return None


def _environ(pid: int) -> dict[str, str] | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    found = {}
    for entry in raw.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep:
            found[name.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return found


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # "pid (command) state ppid ...": the command may hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None
