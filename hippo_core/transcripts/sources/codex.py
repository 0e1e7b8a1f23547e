"""Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (and archived ones).

Every line is ``{timestamp, type, payload}`` (0.171 adds ``ordinal``). A rollout records
each prompt and answer twice: as ``response_item`` messages, mixed with injected context
(``<environment_context>``, AGENTS.md text, developer and hook messages), and in the event
stream, which holds only what the human typed. Prompts and answers come from the event
stream: ``user_message``/``agent_message`` in older versions, ``item_completed``
``UserMessage``/``AgentMessage`` in 0.171; the first family a file shows is the only one
read, so a version writing both counts nothing twice. Tool calls come from
``response_item`` (present in every version); edited files from apply_patch headers and
``patch_apply_end``/``FileChange``; read files from ``cat``/``head``/``tail``/``sed``/``nl``
commands that exited 0 (a heuristic) and from Codex's own ``parsed_cmd``.

What a turn read from outside the project: the built-in web search (``web_search_call``
items, ``web_search_end`` events, ``WebSearch`` items: a query, a page opened or searched),
MCP tools (a ``function_call`` in an ``mcp__<server>`` namespace or named
``mcp__<server>__<tool>``, ``mcp_tool_call_end`` events, ``McpToolCall`` items), pages
fetched by shell commands that exited 0 (``curl``, ``gh issue view`` ...), and files read
outside the project (those in ``$CODEX_HOME`` aside).

A sub-agent rollout starts with its own ``session_meta`` (``parent_thread_id``), then a copy
of the parent's history behind the parent's ``session_meta``: skipped, up to the
``agent_message`` addressed to the child, which is the child's prompt. A resumed session
appends to its file. Envelope-less rollouts (early 2025) are read from their bare response
items. Files are read incrementally by byte offset.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from hippo_core.base.patterns import Lazy
from hippo_core.transcripts import external
from hippo_core.transcripts.build import OpenTurn, TurnBuilder, resolve
from hippo_core.transcripts.lines import RECORD_ERRORS, JsonLines, Record
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource
from hippo_core.transcripts.project import agent_folder
from hippo_core.transcripts.session_ids import session_id
from hippo_core.transcripts.shell import command_text, fetches, files_read, patched_files
from hippo_core.transcripts.values import as_dict, as_str, json_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Text Codex sends as a "user" message that no human typed.
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
)
#: Records never read, recognised in a line's first bytes so they are not even parsed.
_SKIPPED = Lazy(
    rb'"type":"(?:world_state|token_usage_record|compacted)"'
    rb'|"payload":\{"type":"(?:token_count|reasoning|agent_reasoning)'
)
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_EXIT = Lazy(r"(?:Process exited with code|^Exit code:) (-?\d+)", re.M)
_UUID = Lazy(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class CodexSource(TranscriptSource):
    """Reads Codex CLI rollout files, live and archived."""

    name = "codex"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        if env.get("CODEX_HOME"):
            return [Path(env["CODEX_HOME"])]
        return [home / ".codex"]

    def discover(self, root: Path) -> Iterator[Path]:
        for folder in ("sessions", "archived_sessions"):
            if (root / folder).is_dir():  # a glob compiles its pattern even for no folder
                yield from sorted(
                    p for p in (root / folder).glob("**/rollout-*.jsonl") if p.is_file()
                )

    def parse(self, path: Path, resume: Resume) -> Parsed:
        return _Reader(path, resume).read()


class _Reader:
    """One read of one rollout; ``state`` is what must survive to the next read.

    ``state["info"]`` holds the :class:`SessionInfo` fields; the rest is the reader's place:
    the cwd and turn id of the turn to come, the event family read, the sub-agent flags.
    """

    def __init__(self, path: Path, resume: Resume) -> None:
        self.path = path
        self.resume = resume
        own = agent_folder(str(path), "sessions") or agent_folder(str(path), "archived_sessions")
        self.builder = TurnBuilder(str(path), resume, own=(own,) if own else ())
        self.state = self.builder.state
        self.info: dict[str, Any] = self.state.setdefault("info", {})
        #: call id -> files its shell command reads, counted once its output shows exit 0
        self.pending: dict[str, list[str]] = {}
        #: call id -> what its shell command fetches, counted the same way
        self.fetching: dict[str, list[str]] = {}

    def read(self) -> Parsed:
        lines = JsonLines(self.path, self.resume, wanted=_wanted)
        for record in lines:
            if isinstance(record.data, dict):
                try:
                    self.record(record, record.data)
                except RECORD_ERRORS:
                    lines.misshapen(record)
        if self.info.get("id"):
            self.builder.session(SessionInfo(tool=CodexSource.name, **self.info))
        return self.builder.result(lines.committed, lines.corrupt)

    def record(self, record: Record, data: dict[str, Any]) -> None:
        at = as_str(data.get("timestamp")) or None
        if at and at > (self.info.get("ended") or ""):
            self.info["ended"] = at
        kind, payload = data.get("type"), data.get("payload")
        if not isinstance(payload, dict):
            self.bare(record, data)
        elif kind == "session_meta":
            self.meta(payload, at)
        elif kind == "turn_context" and not self.state.get("inherit"):
            self.state["cwd"] = as_str(payload.get("cwd")) or self.state.get("cwd")
            self.state["turn_id"] = as_str(payload.get("turn_id")) or self.state.get("turn_id")
        elif kind == "event_msg":
            self.event(record, payload, at)
        elif kind == "response_item":
            self.item(record, payload, at)

    def bare(self, record: Record, data: dict[str, Any]) -> None:
        """A line of an envelope-less rollout: a meta object first, then response items."""
        if record.start == 0 and "id" in data and "type" not in data:
            self.state["bare"] = True
            self.meta(data, as_str(data.get("timestamp")) or None)
        elif self.state.get("bare") and isinstance(data.get("type"), str):
            self.item(record, data, None)

    def meta(self, payload: dict[str, Any], at: str | None) -> None:
        native, info = as_str(payload.get("id")), self.info
        if native and "native_id" not in info:
            self.identify(native)
            info["cwd"] = self.state["cwd"] = as_str(payload.get("cwd")) or None
            info["branch"] = as_str(as_dict(payload.get("git")).get("branch")) or None
            info["started"] = as_str(payload.get("timestamp")) or at
            spawn = as_dict(
                as_dict(as_dict(payload.get("source")).get("subagent")).get("thread_spawn")
            )
            parent = as_str(payload.get("parent_thread_id")) or as_str(
                spawn.get("parent_thread_id")
            )
            if parent:
                info["parent"] = session_id(f"codex-{parent}")
                self.state["agent_path"] = as_str(spawn.get("agent_path")) or None
        elif native and native != info["native_id"] and info.get("parent"):
            # A copy of the parent's history follows: the parent's turns, not the child's.
            self.state["inherit"] = not self.state["ordinals"].get(info["id"])

    def identify(self, native: str) -> str:
        """The session's hippo id, fixed by the first ``session_meta`` (or the file name)."""
        if "native_id" not in self.info:
            self.info["native_id"] = native
            self.info["id"] = session_id(f"codex-{native}")
        return str(self.info["id"])

    def event(self, record: Record, payload: dict[str, Any], at: str | None) -> None:
        state, kind = self.state, payload.get("type")
        if state.get("inherit"):
            state["aborted"] = state.get("aborted") or kind == "turn_aborted"
        elif kind == "task_started":
            state["turn_id"] = as_str(payload.get("turn_id")) or state.get("turn_id")
        elif kind == "thread_name_updated":
            self.info["title"] = as_str(payload.get("thread_name")) or self.info.get("title")
        elif kind in ("user_message", "agent_message") and self.stream("legacy"):
            text = as_str(payload.get("message"))
            if kind == "agent_message":
                self.say(record, text, at)
            elif payload.get("kind") in (None, "plain") and (text.strip() or payload.get("images")):
                self.prompt(record, text, None, at)
        elif kind == "item_completed":
            item = as_dict(payload.get("item"))
            item_type = item.get("type")
            if item_type in ("UserMessage", "AgentMessage") and self.stream("items"):
                text = _text(item.get("content"))
                if item_type == "AgentMessage":
                    self.say(record, text, at)
                elif text.strip():
                    self.prompt(record, text, as_str(payload.get("turn_id")), at)
            elif item_type == "CommandExecution":
                self.executed(record, item, as_str(item.get("id")), item.get("exit_code"), at)
            elif item_type == "FileChange" and item.get("status") != "failed":
                self.edited(record, as_dict(item.get("changes")), at)
            elif item_type in ("McpToolCall", "WebSearch"):
                self.read_outside(record, _searched_or_called(item), at)
        elif kind == "mcp_tool_call_end":
            invocation = as_dict(payload.get("invocation"))
            call = external.mcp(as_str(invocation.get("server")), as_str(invocation.get("tool")))
            self.read_outside(record, [call], at)
        elif kind == "web_search_end":
            self.read_outside(record, _web_search(payload), at)
        elif kind == "exec_command_end":
            call_id = as_str(payload.get("call_id"))
            self.executed(record, payload, call_id, payload.get("exit_code"), at)
        elif kind == "patch_apply_end" and payload.get("success") is not False:
            self.edited(record, as_dict(payload.get("changes")), at)
        elif kind in ("task_complete", "turn_aborted"):
            self.turn(record, at)

    def stream(self, family: str) -> bool:
        """Whether prompt/answer events of ``family`` are read: the first family seen wins."""
        return bool(self.state.setdefault("stream", family) == family)

    def item(self, record: Record, payload: dict[str, Any], at: str | None) -> None:
        state, kind = self.state, payload.get("type")
        if kind == "agent_message" and self.addressed(payload):
            state["inherit"] = False
            task = state.pop("task", None)
            text = task or _text(payload.get("content") or payload.get("message"))
            self.prompt(record, text, None, at)
        elif state.get("inherit"):
            if kind == "function_call" and payload.get("name") == "spawn_agent":
                self.spawned(json_object(payload.get("arguments")))
        elif kind == "message" and state.get("bare"):
            text = _text(payload.get("content"))
            if payload.get("role") == "assistant":
                self.say(record, text, at)
            elif payload.get("role") == "user" and text.strip():
                self.prompt(record, text, None, at)
        elif kind in _CALLS + _OUTPUTS and self.builder.current is not None:
            self.tool(self.builder.current, kind, payload)
            self.builder.current.reach(record.end, at)
        elif kind == "web_search_call":
            self.read_outside(record, _web_search(payload), at)

    def addressed(self, payload: dict[str, Any]) -> bool:
        """Whether an inter-agent message is a task for this session (a sub-agent's)."""
        path = self.state.get("agent_path")
        if not self.info.get("parent"):
            return False
        if not path:
            return bool(self.state.get("inherit") and self.state.get("aborted"))
        author = payload.get("author")
        return bool(payload.get("recipient") == path and author in (None, path.rsplit("/", 1)[0]))

    def spawned(self, args: dict[str, Any]) -> None:
        """The parent's spawn call, in the copied history: its message is the child's task.

        The task also arrives as an ``agent_message``, whose text other providers encrypt.
        """
        path, name = self.state.get("agent_path") or "", as_str(args.get("task_name"))
        if as_str(args.get("message")) and (not name or path.endswith(f"/{name}")):
            self.state["task"] = args["message"]

    def tool(self, turn: OpenTurn, kind: Any, payload: dict[str, Any]) -> None:
        call_id = as_str(payload.get("call_id")) or as_str(payload.get("id"))
        if kind in _OUTPUTS:
            reads = self.pending.pop(call_id, [])
            fetched = self.fetching.pop(call_id, [])
            if (reads or fetched) and _succeeded(payload.get("output")):
                turn.files(read=reads)
                turn.external(*fetched)
            return
        name, args = as_str(payload.get("name")), json_object(payload.get("arguments"))
        namespace = as_str(payload.get("namespace"))
        if namespace.startswith("mcp__"):
            turn.external(external.mcp(namespace[len("mcp__") :].strip("_"), name))
        elif name.startswith("mcp__"):
            turn.external(external.mcp_name(name) or "")
        if kind == "local_shell_call":
            name, args = "local_shell", as_dict(payload.get("action"))
        workdir = as_str(args.get("workdir") or args.get("working_directory")) or None
        if name == "apply_patch":
            patch = as_str(
                payload.get("input") if kind == "custom_tool_call" else args.get("input")
            )
            patch = patch or as_str(payload.get("arguments"))  # a raw patch, not JSON
            turn.call(name, edited=patched_files(patch, workdir))
            return
        command = command_text(args.get("command", args.get("cmd")))
        turn.call(name, edited=patched_files(command, workdir))
        if command:
            self.pending[call_id] = [resolve(p, workdir) for p in files_read(command)]
            self.fetching[call_id] = fetches(command)

    def prompt(
        self, record: Record, text: str, turn_id: str | None = None, at: str | None = None
    ) -> None:
        state = self.state
        if _injected(text):
            return
        sid = self.identify(_native_from_name(self.path))
        current = self.builder.current
        if current and current.turn.prompt == text.strip() and not _grown(current):
            return  # one prompt recorded twice (a task message, then a user message)
        turn_id = turn_id or state.get("turn_id")
        native = self.info["native_id"]
        if turn_id and turn_id != state.get("keyed"):
            key = f"{native}:{turn_id}"
        else:
            key = f"{native}:#{state['ordinals'].get(sid, 0)}"
        self.builder.open(
            sid,
            text,
            key=key,
            start=record.start,
            end=record.end,
            at=at or self.info.get("ended"),
            cwd=state.get("cwd"),
            branch=self.info.get("branch"),
        )
        state["keyed"] = turn_id
        self.pending.clear()
        self.fetching.clear()

    def turn(self, record: Record, at: str | None) -> OpenTurn | None:
        """The open turn, now reaching this record (None outside any turn)."""
        turn = self.builder.current
        if turn is not None:
            turn.reach(record.end, at)
        return turn

    def say(self, record: Record, text: str, at: str | None) -> None:
        turn = self.turn(record, at)
        if turn is not None and text.strip():
            turn.say(text)
            self.info["handoff"] = text.strip()

    def executed(
        self, record: Record, event: dict[str, Any], call_id: str, code: Any, at: str | None
    ) -> None:
        """A finished shell command: its reads and fetches count when it exited 0."""
        turn = self.turn(record, at)
        reads = self.pending.pop(call_id, [])
        fetched = self.fetching.pop(call_id, [])
        if turn is None or code not in (0, None):
            return
        turn.external(*fetched)
        cwd = resolve(as_str(event.get("cwd")), None) or None  # 0.171 writes a file:// URL
        for parsed in event.get("parsed_cmd") or []:
            path = as_str(as_dict(parsed).get("path")) or as_str(as_dict(parsed).get("name"))
            if as_dict(parsed).get("type") == "read" and path:
                reads.append(resolve(path, cwd))
        turn.files(read=reads)

    def read_outside(self, record: Record, found: list[str], at: str | None) -> None:
        """The open turn read ``found`` from outside the project (nothing outside a turn)."""
        turn = self.turn(record, at)
        if turn is not None:
            turn.external(*found)

    def edited(self, record: Record, changes: dict[str, Any], at: str | None) -> None:
        turn = self.turn(record, at)
        if turn is not None:
            turn.files(edited=changes)


def _web_search(payload: dict[str, Any]) -> list[str]:
    """A web search call (an item or an event): the query, or the page it opened."""
    action = as_dict(payload.get("action"))
    kind = as_str(action.get("type"))
    url = as_str(action.get("url"))
    if kind in ("open_page", "find_in_page") or (url and not kind):
        return [external.web(f"web_search {kind or 'open_page'}", external.link(url))]
    query = as_str(action.get("query")) or as_str(payload.get("query"))
    return [external.searched("web_search", query)]


def _searched_or_called(item: dict[str, Any]) -> list[str]:
    """An ``McpToolCall`` or ``WebSearch`` item of 0.171's event stream."""
    if item.get("type") == "WebSearch":
        return _web_search(item)
    return [external.mcp(as_str(item.get("server")), as_str(item.get("tool")))]


def _wanted(line: bytes) -> bool:
    return _SKIPPED.search(line, 0, 200) is None


def _text(value: Any) -> str:
    """The text of message content: a string, or text items (``input_text``, ``Text`` ...)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n\n".join(t for t in (_text(item) for item in value) if t.strip())
    for key in ("text", "encrypted_content", "content", "message"):
        if key in as_dict(value):
            return _text(value[key])
    return ""


def _injected(text: str) -> bool:
    return text.lstrip().startswith(_INJECTED)


def _grown(turn: OpenTurn) -> bool:
    return bool(turn.answers or turn.turn.tools or turn.turn.files_edited)


def _native_from_name(path: Path) -> str:
    """The session id in a rollout's name, for a file whose ``session_meta`` is unreadable."""
    found = _UUID.findall(path.stem)
    return found[-1] if found else path.stem


def _succeeded(output: Any) -> bool:
    """Whether a tool output shows exit code 0 (one that says nothing counts as success)."""
    text = _text(output)
    if text.startswith("{"):
        code = as_dict(json_object(text).get("metadata")).get("exit_code")
        if isinstance(code, int):
            return code == 0
    match = _EXIT.search(text[:500])
    return match is None or match.group(1) == "0"
