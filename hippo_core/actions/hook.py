"""``hippo hook``: what an agent's session hooks run, for every registered agent.

The hook's JSON arrives on stdin. Whatever goes wrong, a hook prints nothing harmful and
exits 0, so the agent is never blocked; the problem goes to ``$HIPPO_HOME/hooks.log``.

The budget is split as the spec says: ``session-start`` prints the required parts (warnings,
entry section, required notes, session line) and records their size; ``prompt`` prints the
optional parts (relevant notes for the prompt, linter counts) on the session's first prompt
only, within what is left of the budget.

Claude Code waits for the prompt hook on every prompt, and on every prompt but the first it
has nothing to print: that answer comes from one read of the session record, before the
workspace's settings, the plugins or anything else is loaded.
"""

from __future__ import annotations

import os
import time

from hippo_core.files import jsontext
from hippo_core.transcripts import handover
from hippo_core.transcripts.session_ids import DECLARED, session_id
from hippo_core.workspace.locate import HIPPO_DIR, find_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from hippo_core.plugins.agent import Agent
    from hippo_core.workspace.folder import Workspace

#: Hook names as the CLI spells them.
EVENTS = ("session-start", "prompt", "session-end", "compact")
#: A second session-start for the same session and source within this many seconds is the
#: same event delivered twice (the hook configured at two levels), not a new start.
DUPLICATE_SECONDS = 30.0
#: Starts after which the agent's context no longer holds what session-start printed, so
#: it prints again; any other start of a session it printed for (a resume) prints nothing.
FRESH_STARTS = ("compact", "clear")
#: What hippo's own agents with hooks put before their session ids in hippo's records, read
#: without loading plugins: a later prompt is answered before any plugin is loaded. Another
#: agent's comes from its registered :class:`~hippo_core.plugins.agent.Agent`
#: (``tests/test_agent_plugins.py`` holds this table to the registered agents).
SESSION_PREFIXES = {
    "claude-code": "",
    "codex": "codex-",
    "gemini": "gemini-",
    "opencode": "opencode-",
}
#: Those of them whose hooks print the block as it is and whose resumed sessions keep what
#: a start printed, as an agent no plugin registers is taken to: the hooks answer them
#: without loading the agents (the same test holds this to the registered agents).
PLAIN_AGENTS = ("claude-code", "codex", "opencode")


class HookProblem(Exception):
    """Something a hook cannot work with; logged, never shown to the agent."""


def log_problem(event: str, message: str, root: str | None = None) -> None:
    """Append one line to ``$HIPPO_HOME/hooks.log`` (best effort), ending with the workspace
    it happened in (``root``, else the one of the current folder) when there is one: the log
    is the machine's, and doctor shows a workspace its own lines only."""
    import contextlib  # here: a later prompt, which logs nothing, is spared its import

    from hippo_core.base.clock import stamp
    from hippo_core.files.home import home_folder
    from hippo_core.files.owner_only import owner_only_append

    with contextlib.suppress(OSError):
        root = root or find_root(os.getcwd())
    where = f" (workspace {root})" if root else ""
    line = f"{stamp()} hook {event}: {message}{where}\n".encode("utf-8", "backslashreplace")
    home = home_folder()
    with contextlib.suppress(OSError):
        owner_only_append(os.path.join(home, "hooks.log"), line, home)


def run_hook(event: str, tool: str, stdin: str, out: TextIO) -> None:
    """Run hook ``event`` for ``tool`` on the payload text; never raises."""
    from hippo_core.base.errors import HippoError

    root: str | None = None
    try:
        payload = _payload(stdin)
        root = _root(payload)
        if root is None:
            return
        raw_id = _raw_id(payload, tool)
        if event == "prompt" and _prompted(root, raw_id):
            return
        from hippo_core.workspace.folder import LOOKS, Workspace

        workspace = Workspace.open(root)
        workspace.looks = LOOKS
        handler = {
            "session-start": _session_start,
            "prompt": _prompt,
            "session-end": _end,
            "compact": _compact,
        }
        text = handler[event](workspace, raw_id, tool, payload)
        if text:
            out.write(_handed_over(event, tool, text))
            out.flush()
    except (HookProblem, HippoError) as exc:
        log_problem(event, str(exc), root)
    except Exception as exc:  # the agent must never be blocked by hippo
        log_problem(event, f"{type(exc).__name__}: {exc}", root)


def _handed_over(event: str, tool: str, text: str) -> str:
    """What the agent reads: the block between hippo's markers; for an agent whose hooks
    print JSON (Gemini CLI), inside the JSON it reads (plain text there would be an error),
    naming the agent's event."""
    agent = _agent(tool)
    if agent is None or agent.hook_output != "json":
        return handover.wrap(text)
    output = {"hookEventName": agent.agent_event(event), "additionalContext": handover.wrap(text)}
    return jsontext.dumps({"hookSpecificOutput": output}, indent=None) + "\n"


def _agent(tool: str) -> Agent | None:
    """The registered agent ``tool`` names, None for one no plugin registers (its hooks
    work as Claude Code's do) and for one of :data:`PLAIN_AGENTS`."""
    if tool in PLAIN_AGENTS:
        return None
    from hippo_core.plugins.manager import load_plugins

    return load_plugins(hot=True).agents().get(tool)


def _payload(stdin: str) -> dict[str, Any]:
    if not stdin.strip():
        raise HookProblem("empty stdin (expected the agent's hook JSON)")
    try:
        payload = jsontext.loads(stdin)
    except ValueError as exc:
        raise HookProblem(f"stdin is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookProblem("stdin is not a JSON object")
    if "\\ud" in stdin or "\\uD" in stdin:
        payload = {jsontext.well_formed(k): jsontext.well_formed(v) for k, v in payload.items()}
    if not isinstance(payload.get("session_id"), str) or not payload["session_id"]:
        raise HookProblem("the payload has no session_id")
    return payload


def _root(payload: dict[str, Any]) -> str | None:
    """The workspace of the session's folder, or of ``$CLAUDE_PROJECT_DIR``; None for a
    session in one of hippo's model folders (a dream's model run is no session of a
    workspace, whatever project its environment names)."""
    from hippo_core.files.model_folder import in_model_folder

    cwd = payload.get("cwd")
    start = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    if in_model_folder(start):
        return None
    root = find_root(start) if os.path.isdir(start) else None
    if root is None:
        project = os.environ.get("CLAUDE_PROJECT_DIR")
        root = find_root(project) if project and os.path.isdir(project) else None
    return root


def _raw_id(payload: dict[str, Any], tool: str) -> str:
    # Codex's derived records are named codex-<thread id> (Gemini CLI's and OpenCode's
    # likewise, and any agent's with its prefix); declaring under the same name lets the
    # declared record replace the derived one, as the spec asks.
    raw = str(payload["session_id"])
    prefix = SESSION_PREFIXES.get(tool)
    if prefix is None:
        agent = _agent(tool)
        prefix = agent.session_prefix if agent is not None else ""
    return prefix + raw


def _prompted(root: str, raw_id: str) -> bool:
    """True when the session's declared record says its first prompt was answered.

    Read without the records' lock: records are replaced whole (a rename), so this sees
    the old record or the new one; a record not yet there sends the hook the long way.
    """
    path = os.path.join(root, HIPPO_DIR, "sessions", f"{session_id(raw_id)}.json")
    try:
        with open(path, "rb") as handle:
            record = jsontext.loads(handle.read())
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("kind") == DECLARED
        and bool(record.get("first_prompt"))
    )


def _cwd(payload: dict[str, Any]) -> str | None:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) else None


def _session_start(workspace: Workspace, raw_id: str, tool: str, payload: dict[str, Any]) -> str:
    from hippo_core.agents import sessions
    from hippo_core.context.budget import fit
    from hippo_core.plugins.manager import load_plugins

    source = str(payload.get("source") or payload.get("trigger") or "startup")
    with sessions.records_lock(workspace):
        # Written now: the session line (a context part) reads the record.
        record = sessions.declare(workspace, raw_id, tool, cwd=_cwd(payload))
        last = record.get("last_start") or {}
        fresh = source in FRESH_STARTS or (source == "resume" and _fresh_resume(tool))
        if last and not fresh:
            return ""  # printed for this session already: a resume has it in its history
        if last.get("source") == source and time.time() - last.get("at", 0) < DUPLICATE_SECONDS:
            return ""
        parts = load_plugins(hot=True).context_parts(workspace, raw_id, None)
        block = fit([p for p in parts if p.required], workspace.settings.budget_bytes)
        record["context_bytes"] = block.size
        record["last_start"] = {"source": source, "at": time.time()}
        sessions.write_record(workspace, record)
    return block.text


def _fresh_resume(tool: str) -> bool:
    """Whether ``tool``'s resumed history drops what a start printed: Gemini CLI rebuilds a
    resumed session's history without every user message that begins with a hook's context
    (in ``gemini -p`` that is the first prompt, SessionStart's block folded into it)."""
    agent = _agent(tool)
    return agent is not None and agent.fresh_resume


def _prompt(workspace: Workspace, raw_id: str, tool: str, payload: dict[str, Any]) -> str:
    from hippo_core.agents import sessions
    from hippo_core.context.budget import fit
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.transcripts.privacy import is_private_session, redact

    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise HookProblem("the payload has no prompt")
    if handover.handed(prompt):
        # Gemini CLI hands BeforeAgent the prompt with SessionStart's context folded in.
        prompt = handover.strip(prompt).strip()
    with sessions.records_lock(workspace):
        record = sessions.load_record(workspace, raw_id)
        if record is None or record.get("kind") != sessions.DECLARED:
            record = sessions.declare(workspace, raw_id, tool, cwd=_cwd(payload), write=False)
        if record.get("first_prompt"):
            return ""
        record["first_prompt"] = str(payload.get("prompt_id") or _digest(prompt))
        if is_private_session(prompt):
            record["private"] = True  # ingest leaves the session out; keep no task either
        elif not record.get("task"):
            record["task"] = redact(prompt).text
        # The agent waits for this hook: no fsync. Still whole or absent; what a power cut
        # may lose (the task, the first prompt's mark), ingest derives from the transcript.
        sessions.write_record(workspace, record, durable=False)
    left = workspace.settings.budget_bytes - int(record.get("context_bytes") or 0)
    parts = load_plugins(hot=True).context_parts(workspace, None, prompt)
    parts = [p for p in parts if not p.required]
    if left <= 0:
        for part in parts:
            log_problem(
                "prompt", f"omitted: {part.name} ({part.size}): no budget left", workspace.folder
            )
        return ""
    block = fit(parts, left)
    for omission in block.omitted:
        log_problem("prompt", omission.render(), workspace.folder)
    return block.text


def _digest(prompt: str) -> str:
    """A marker for a first prompt that came without an id (Codex sends none)."""
    import zlib

    return f"crc32-{zlib.crc32(prompt.encode('utf-8', 'surrogatepass')):08x}"


def _end(workspace: Workspace, raw_id: str, tool: str, payload: dict[str, Any]) -> str:
    from hippo_core.agents import sessions

    with sessions.records_lock(workspace):
        record = sessions.declare(workspace, raw_id, tool, cwd=_cwd(payload), write=False)
        reason = payload.get("reason")
        if isinstance(reason, str):
            record["exit_reason"] = reason
        sessions.end(workspace, record)
    return ""


def _compact(workspace: Workspace, raw_id: str, tool: str, payload: dict[str, Any]) -> str:
    """PreCompact (Gemini CLI: PreCompress): the agent is about to compact its context. The
    plugins hear it (a trigger may start a dream, detached); the agent is told nothing."""
    from hippo_core.agents import sessions
    from hippo_core.transcripts.session_ids import session_id

    trigger = payload.get("trigger")
    data = {"session": session_id(raw_id), "tool": tool}
    if isinstance(trigger, str):
        data["trigger"] = trigger
    sessions.announce(workspace, "compacting", data)
    return ""
