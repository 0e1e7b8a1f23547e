"""Gemini CLI chats: ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (and legacy ``.json``).

The JSONL file is an upsert log: a header ``{sessionId, projectHash, startTime, kind}``, then
message records ``{id, timestamp, type, content, ...}`` where a later record with the same
``id`` replaces the earlier one (a ``gemini`` message is written again once its tool calls
ran), ``{"$set": {...}}`` metadata patches and ``{"$rewindTo": id}``, which drops that
message and every later one. ``$set.messages`` is the model's context (the injected
``<session_context>``, the whole history again after ``--resume``, compression summaries),
not the conversation, so turns come from the message records alone, keyed by message id.
Because of replacement and rewinds, a file is read whole each time it changes.

The session's folder is not in the file: it is ``tmp/<project>/.project_root`` or the
project's entry in ``projects.json``. A sub-agent's chat is ``chats/<parent id>/<id>.jsonl``.

What a turn read from outside the project: ``web_fetch`` and ``google_web_search`` (Gemini
CLI's web tools), MCP tools (named ``mcp_<server>_<tool>``, or ``<server>__<tool>`` in
older versions), pages fetched by ``run_shell_command`` (``curl``, ``gh issue view`` ...),
files read outside the project (those in ``~/.gemini`` aside), and a sub-agent
(``invoke_agent``) whose recent activity shows one of these tools. Failed or cancelled
calls read nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from hippo_core.files import jsontext
from hippo_core.transcripts import external, handover
from hippo_core.transcripts.build import OpenTurn, TurnBuilder
from hippo_core.transcripts.lines import RECORD_ERRORS, JsonLines, loads
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource
from hippo_core.transcripts.project import agent_folder
from hippo_core.transcripts.session_ids import session_id
from hippo_core.transcripts.shell import fetches
from hippo_core.transcripts.values import as_dict, as_list, as_str, json_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    _Message = tuple[dict[str, Any], int, int]

_READ = frozenset({"read_file"})
_EDIT = frozenset({"write_file", "replace", "edit"})
_PATH_KEYS = ("file_path", "absolute_path", "path")
_CONTEXT = "<session_context>"

#: One message as last written, with the byte range of the record that wrote it.


class GeminiSource(TranscriptSource):
    """Reads Gemini CLI's chat recordings, main sessions and sub-agents."""

    name = "gemini"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        # Gemini CLI's homedir() is $GEMINI_CLI_HOME when set; its folder is .gemini below it.
        base = Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home
        return [base / ".gemini"]

    def discover(self, root: Path) -> Iterator[Path]:
        if not (root / "tmp").is_dir():  # a glob compiles its pattern even for no folder
            return
        for chats in sorted((root / "tmp").glob("*/chats")):
            found = [*chats.glob("session-*.json"), *chats.glob("session-*.jsonl")]
            found += chats.glob("*/*.jsonl")
            yield from sorted(path for path in found if path.is_file())

    def parse(self, path: Path, resume: Resume) -> Parsed:
        resume = Resume(0, {}, seen=resume.seen)
        if path.suffix == ".json":
            return self._legacy(path, resume)
        header: dict[str, Any] = {}
        messages: dict[str, _Message] = {}
        lines = JsonLines(path, resume)
        for record in lines:
            data = record.data
            if not isinstance(data, dict):
                continue
            if isinstance(data.get("$rewindTo"), str):
                _rewind(messages, data["$rewindTo"])
            elif isinstance(data.get("id"), str):
                messages[data["id"]] = (data, record.start, record.end)
            elif isinstance(data.get("$set"), dict):
                patch = {k: v for k, v in data["$set"].items() if k != "messages"}
                header.update(patch)
            elif isinstance(data.get("sessionId"), str):
                header.setdefault("startTime", data.get("startTime"))
                header.update({k: v for k, v in data.items() if k != "startTime"})
        found = list(messages.values())
        return self._build(path, resume, header, found, (lines.committed, lines.corrupt))

    def _legacy(self, path: Path, resume: Resume) -> Parsed:
        """A legacy chat: one JSON object, rewritten whole as the session grows."""
        try:
            raw = path.read_bytes()
            data = loads(raw)
        except (OSError, ValueError) as exc:
            return Parsed(resume=resume, problems=[f"{path}: not a readable Gemini chat ({exc})"])
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            return Parsed(resume=resume, problems=[f"{path}: not a Gemini chat (no messages)"])
        found = [(m, 0, len(raw)) for m in data["messages"] if isinstance(m, dict)]
        return self._build(path, resume, data, found, (len(raw), 0))

    def _build(
        self,
        path: Path,
        resume: Resume,
        header: dict[str, Any],
        messages: list[_Message],
        read: tuple[int, int],
    ) -> Parsed:
        """Turns and the session from the conversation's final messages; ``read`` is
        ``(committed, corrupt)``."""
        native = as_str(header.get("sessionId")) or path.stem
        chats = next((p for p in path.parents if p.name == "chats"), path.parent)
        nested = path.parent != chats
        subagent = nested or header.get("kind") == "subagent"
        sid, parent = _ids(chats, native, path.parent.name if nested else None)
        cwd = _project_root(chats.parent, header)
        own = agent_folder(str(chats), "tmp")
        builder = TurnBuilder(str(path), resume, own=(own,) if own else ())
        prompted = False
        misshapen = 0
        ended = as_str(header.get("lastUpdated"))
        for index, (message, start, end) in enumerate(messages):
            try:
                kind = message.get("type")
                at = as_str(message.get("timestamp")) or None
                if at and at > ended:
                    ended = at
                if kind == "user":
                    # Hooks' context (hippo's block among it) is folded into the message.
                    text = handover.strip(_text(message.get("content")))
                    # A sub-agent gets one prompt; later user text is the runtime's nudge.
                    nudge = subagent and prompted
                    if text.strip() and not text.lstrip().startswith(_CONTEXT) and not nudge:
                        key = as_str(message.get("id")) or f"{native}:{index}"
                        builder.open(sid, text, key=key, start=start, end=end, at=at, cwd=cwd)
                        prompted = True
                        continue
                elif kind == "gemini" and builder.current is not None:
                    _gemini(builder.current, message)
                if builder.current is not None:
                    builder.current.reach(end, at)
                    for call in as_list(message.get("toolCalls")):
                        builder.current.reach(end, as_str(as_dict(call).get("timestamp")) or None)
            except RECORD_ERRORS:  # a message of the wrong shape: corrupt, passed over
                misshapen += start >= resume.seen
        parsed = builder.result(read[0], read[1] + misshapen)
        parsed.resume = Resume(0, {}, seen=read[0])
        if not header and not messages:
            return parsed  # nothing written yet: not even the session's id
        parsed.sessions = [
            SessionInfo(
                id=sid,
                tool=self.name,
                native_id=native,
                parent=parent,
                cwd=cwd,
                started=as_str(header.get("startTime")) or None,
                ended=ended or None,
                title=None if subagent else (as_str(header.get("summary")) or None),
            )
        ]
        return parsed


def _rewind(messages: dict[str, _Message], target: str) -> None:
    """Drop ``target`` and every later message (all of them when it is unknown)."""
    ids = list(messages)
    cut = ids.index(target) if target in messages else 0
    for key in ids[cut:]:
        del messages[key]


def _gemini(turn: OpenTurn, message: dict[str, Any]) -> None:
    """Feed a model message to ``turn``: its text and the tool calls that did not fail."""
    turn.say(_text(message.get("content")))
    for item in as_list(message.get("toolCalls")):
        call = as_dict(item)
        name = as_str(call.get("name"))
        args = as_dict(call.get("args"))
        path = next((args[k] for k in _PATH_KEYS if as_str(args.get(k))), "")
        failed = call.get("status") in ("error", "cancelled")
        turn.call(
            name,
            read=[path] if name in _READ and not failed else [],
            edited=[path] if name in _EDIT and not failed else [],
        )
        if not failed:
            turn.external(*_external(name, args))
            if name == "invoke_agent":
                turn.external(*_delegated(call, args))


def _external(name: str, args: dict[str, Any]) -> list[str]:
    """What a call read from outside the project, by Gemini CLI's tool names."""
    if name == "web_fetch":
        urls = [as_str(args.get("url"))] if as_str(args.get("url")) else []
        urls += external.links(as_str(args.get("prompt")))  # older: URLs in the prompt
        return [external.fetched(name, url) for url in urls or [""]]
    if name == "google_web_search":
        return [external.searched(name, as_str(args.get("query")))]
    if name == "run_shell_command":
        return fetches(as_str(args.get("command")))
    if name.startswith("mcp_"):  # mcp_<server>_<tool>: server and tool may hold "_" too
        return [external.mcp(name[len("mcp_") :])]
    server, separator, tool = name.partition("__")
    if separator and server and tool:
        return [external.mcp(server, tool)]
    return []


def _delegated(call: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """What a sub-agent read, from the activity ``invoke_agent`` shows of it."""
    agent = f"invoke_agent {as_str(args.get('agent_name'))}".strip()
    found = []
    for item in as_list(as_dict(call.get("resultDisplay")).get("recentActivity")):
        step = as_dict(item)
        if step.get("type") == "tool_call" and step.get("status") != "error":
            used = _external(as_str(step.get("content")), json_object(step.get("args")))
            found += [external.subagent(agent, text) for text in used]
    return found


def _ids(chats: Path, native: str, parent: str | None) -> tuple[str, str | None]:
    """hippo's id for the session and for its parent, following nested sub-agents up."""
    if parent is None:
        return session_id(f"gemini-{native}"), None
    chain = [parent]
    while len(chain) < 16:
        above = next((p.parent.name for p in chats.glob(f"*/{chain[-1]}.jsonl")), "")
        if not above or above in chain:
            break
        chain.append(above)
    top = chain[-1]
    own = session_id(f"gemini-{top}-agent-{native}")
    if len(chain) == 1:
        return own, session_id(f"gemini-{top}")
    return own, session_id(f"gemini-{top}-agent-{chain[0]}")


def _project_root(project: Path, header: dict[str, Any]) -> str | None:
    """The project folder: ``.project_root``, else ``projects.json``, else the header's list."""
    try:
        root = (project / ".project_root").read_text(encoding="utf-8").strip()
        if root:
            return root
    except (OSError, UnicodeDecodeError):
        pass
    wanted = {project.name, as_str(header.get("projectHash"))} - {""}
    try:
        known = jsontext.loads((project.parent.parent / "projects.json").read_bytes())
    except (OSError, ValueError):
        known = {}
    for folder, name in as_dict(as_dict(known).get("projects")).items():
        import hashlib

        digest = hashlib.sha256(folder.encode("utf-8", "surrogatepass")).hexdigest()
        if name in wanted or digest in wanted or digest[:16] in wanted:
            return str(folder)
    directories = [d for d in as_list(header.get("directories")) if as_str(d)]
    return str(directories[0]) if directories else None


def _text(content: Any) -> str:
    """Text of a message: a string, or its text parts (thought parts left out)."""
    if isinstance(content, str):
        return content
    parts = [
        as_str(part.get("text"))
        for part in as_list(content)
        if isinstance(part, dict) and not part.get("thought")
    ]
    return "\n\n".join(part for part in parts if part.strip())
