"""``hippo hook``: what an agent's session hooks run (Claude Code, and Codex's same schema).

The hook's JSON arrives on stdin. Whatever goes wrong, a hook prints nothing harmful and
exits 0, so the agent is never blocked; the problem goes to ``$HIPPO_HOME/hooks.log``.
This path imports neither SQLAlchemy nor pydantic: it runs before every session and prompt.

The budget is split as the spec says: ``session-start`` prints the required parts (warnings,
entry section, required notes, session line) and records their size; ``prompt`` prints the
optional parts (relevant notes for the prompt, linter counts) on the session's first prompt
only, within what is left of the budget.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, TextIO

from hippo_core import sessions
from hippo_core.home import hippo_home
from hippo_core.transcripts.privacy import is_private_session, redact

#: Hook names as the CLI spells them.
EVENTS = ("session-start", "prompt", "session-end")
#: A second session-start for the same session and source within this many seconds is the
#: same event delivered twice (the hook configured at two levels), not a new start.
DUPLICATE_SECONDS = 30.0


class HookProblem(Exception):
    """Something a hook cannot work with; logged, never shown to the agent."""


def log_problem(event: str, message: str) -> None:
    """Append one line to ``$HIPPO_HOME/hooks.log`` (best effort)."""
    try:
        home = hippo_home()
        home.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with (home / "hooks.log").open("a", encoding="utf-8") as handle:
            handle.write(f"{stamp} hook {event}: {message}\n")
    except OSError:
        pass


def run_hook(event: str, tool: str, stdin: str, out: TextIO) -> None:
    """Run hook ``event`` for ``tool`` on the payload text; never raises."""
    from hippo_core.errors import HippoError

    try:
        payload = _payload(stdin)
        workspace = _workspace(payload)
        if workspace is None:
            return
        raw_id = _raw_id(payload, tool)
        handler = {"session-start": _session_start, "prompt": _prompt, "session-end": _end}
        text = handler[event](workspace, raw_id, tool, payload)
        if text:
            out.write(text)
            out.flush()
    except (HookProblem, HippoError) as exc:
        log_problem(event, str(exc))
    except Exception as exc:  # the agent must never be blocked by hippo
        log_problem(event, f"{type(exc).__name__}: {exc}")


def _payload(stdin: str) -> dict[str, Any]:
    if not stdin.strip():
        raise HookProblem("empty stdin (expected the agent's hook JSON)")
    try:
        payload = json.loads(stdin)
    except ValueError as exc:
        raise HookProblem(f"stdin is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookProblem("stdin is not a JSON object")
    if not isinstance(payload.get("session_id"), str) or not payload["session_id"]:
        raise HookProblem("the payload has no session_id")
    return payload


def _workspace(payload: dict[str, Any]) -> Any:
    from hippo_core.workspace import Workspace, find_root

    cwd = payload.get("cwd")
    start = Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd()
    root = find_root(start) if start.is_dir() else None
    if root is None:
        project = os.environ.get("CLAUDE_PROJECT_DIR")
        root = find_root(Path(project)) if project and Path(project).is_dir() else None
    return Workspace.open(root) if root is not None else None


def _raw_id(payload: dict[str, Any], tool: str) -> str:
    # Codex's derived records are named codex-<thread id>; declaring under the same name
    # lets the declared record replace the derived one, as the spec asks.
    raw = str(payload["session_id"])
    return f"codex-{raw}" if tool == "codex" else raw


def _cwd(payload: dict[str, Any]) -> str | None:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) else None


def _session_start(workspace: Any, raw_id: str, tool: str, payload: dict[str, Any]) -> str:
    from hippo_core.budget import fit
    from hippo_core.plugins import load_plugins

    source = str(payload.get("source") or "startup")
    with sessions.records_lock(workspace):
        record = sessions.declare(workspace, raw_id, tool, cwd=_cwd(payload))
        last = record.get("last_start") or {}
        if last.get("source") == source and time.time() - last.get("at", 0) < DUPLICATE_SECONDS:
            return ""
        parts = load_plugins().context_parts(workspace, raw_id, None)
        block = fit([p for p in parts if p.required], workspace.settings.budget_bytes)
        record["context_bytes"] = block.size
        record["last_start"] = {"source": source, "at": time.time()}
        sessions.write_record(workspace, record)
    return block.text


def _prompt(workspace: Any, raw_id: str, tool: str, payload: dict[str, Any]) -> str:
    from hippo_core.budget import fit
    from hippo_core.plugins import load_plugins

    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise HookProblem("the payload has no prompt")
    with sessions.records_lock(workspace):
        record = sessions.load_record(workspace, raw_id)
        if record is None or record.get("kind") != sessions.DECLARED:
            record = sessions.declare(workspace, raw_id, tool, cwd=_cwd(payload))
        if record.get("first_prompt"):
            return ""
        marker = payload.get("prompt_id") or hashlib.sha256(prompt.encode()).hexdigest()[:16]
        record["first_prompt"] = str(marker)
        if is_private_session(prompt):
            record["private"] = True  # ingest leaves the session out; keep no task either
        elif not record.get("task"):
            record["task"] = redact(prompt).text
        sessions.write_record(workspace, record)
    left = workspace.settings.budget_bytes - int(record.get("context_bytes") or 0)
    parts = [p for p in load_plugins().context_parts(workspace, None, prompt) if not p.required]
    if left <= 0:
        for part in parts:
            log_problem("prompt", f"omitted: {part.name} ({part.size}): no budget left")
        return ""
    block = fit(parts, left)
    for omission in block.omitted:
        log_problem("prompt", omission.render())
    return block.text


def _end(workspace: Any, raw_id: str, tool: str, payload: dict[str, Any]) -> str:
    with sessions.records_lock(workspace):
        record = sessions.declare(workspace, raw_id, tool, cwd=_cwd(payload))
        reason = payload.get("reason")
        if isinstance(reason, str):
            record["exit_reason"] = reason
        sessions.end(workspace, record)
    return ""
