"""Command Code transcripts: ``~/.commandcode/projects/<slug>/<sessionId>.jsonl``.

Format version 3 (Command Code 1.64): a ``session`` header, the only record with the cwd,
then ``message`` records ``{id, parentId, timestamp, message: {role, content, meta}}``. A
human prompt is a user message whose ``meta.source`` is ``user``; tool results are user
messages with ``meta.source == "tool"`` and carry no error flag. ``-c``/``--resume`` append
to the same file. ``--fork-session`` writes a new file whose header keeps the parent's
``id`` and adds ``sessionId`` (the new id); the copied records keep their ids, so their
turns keep their keys and the index holds each once. The older AI-SDK shape
(``{role, sessionId, timestamp, content}`` with ``tool-call`` parts) is read too.
Command Code writes no sub-agent transcript. Files are read incrementally by byte offset.

What a turn read from outside the project: web tools by the names agents give them
(``web_fetch``, ``web_search``, ``webfetch``, ``websearch``: Command Code 1.64 offered none
in the captured runs), MCP tools (``mcp__<server>__<tool>``), pages fetched by
``shell_command`` (``curl``, ``gh issue view`` ...) and files read outside the project
(those in ``~/.commandcode`` aside). Tool results carry no error flag, so every call counts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from hippo_core.transcripts import external
from hippo_core.transcripts.build import OpenTurn, TurnBuilder
from hippo_core.transcripts.lines import RECORD_ERRORS, JsonLines
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource
from hippo_core.transcripts.project import agent_folder
from hippo_core.transcripts.session_ids import session_id
from hippo_core.transcripts.shell import fetches
from hippo_core.transcripts.values import as_dict, as_list, as_str

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_READ = frozenset({"read_file", "read"})
_EDIT = frozenset({"write_file", "edit_file", "write", "edit"})
_PATH_KEYS = ("file_path", "path", "filePath", "absolute_path")
_FETCH = frozenset({"web_fetch", "webfetch", "fetch"})
_SEARCH = frozenset({"web_search", "websearch"})
_SHELL = frozenset({"shell_command", "bash", "shell"})


class CommandCodeSource(TranscriptSource):
    """Reads Command Code's JSONL transcripts (the ``.checkpoints.jsonl`` snapshots are skipped)."""

    name = "command-code"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        # Command Code knows no variable for its folder; HOME is the only way to move it.
        return [home / ".commandcode"]

    def discover(self, root: Path) -> Iterator[Path]:
        if not (root / "projects").is_dir():  # a glob compiles its pattern even for no folder
            return
        for path in sorted((root / "projects").glob("*/*.jsonl")):
            if not path.name.endswith(".checkpoints.jsonl") and path.is_file():
                yield path

    def parse(self, path: Path, resume: Resume) -> Parsed:
        own = agent_folder(str(path), "projects")
        builder = TurnBuilder(str(path), resume, own=(own,) if own else ())
        state = builder.state
        state.setdefault("native", path.stem)
        lines = JsonLines(path, resume)
        for record in lines:
            try:
                data = record.data
                if not isinstance(data, dict):
                    continue
                kind = data.get("type")
                if kind == "session":
                    _header(state, data)
                    continue
                if kind == "message":
                    message = as_dict(data.get("message"))
                    line_id = as_str(data.get("id"))
                elif kind is None and isinstance(data.get("role"), str):
                    message = data  # the older shape: the message is the line itself
                    line_id = ""
                    if not state.get("header") and as_str(data.get("sessionId")):
                        state["native"] = data["sessionId"]
                else:
                    continue  # a record type this reader does not know
                state["known"] = True
                at = as_str(data.get("timestamp")) or None
                if at and at > state.get("ended", ""):
                    state["ended"] = at
                role = message.get("role")
                content = message.get("content")
                meta = as_dict(message.get("meta"))
                if role == "user" and meta.get("source", "user") == "user":
                    text = _text(content)
                    if text and not _has_results(content):
                        key = as_str(meta.get("messageId"))
                        if not key:
                            anchor = line_id or str(record.start)
                            key = f"{state.get('root') or state['native']}:{anchor}"
                        builder.open(
                            _session(state),
                            text,
                            key=key,
                            start=record.start,
                            end=record.end,
                            at=at,
                            cwd=state.get("cwd"),
                        )
                        continue
                if role == "assistant":
                    answer = _assistant(builder.current, content)
                    if answer:
                        state["handoff"] = answer
                if builder.current is not None:
                    builder.current.reach(record.end, at)
            except RECORD_ERRORS:
                lines.misshapen(record)
        if state.get("known") or builder.turns:
            native = str(state["native"])
            builder.session(
                SessionInfo(
                    id=_session(state),
                    tool=self.name,
                    native_id=native,
                    cwd=state.get("cwd"),
                    started=state.get("started"),
                    ended=state.get("ended") or None,
                    handoff=state.get("handoff"),
                )
            )
        return builder.result(lines.committed, lines.corrupt)


def _header(state: dict[str, Any], data: dict[str, Any]) -> None:
    """Take the session, its cwd and start from the ``session`` header."""
    root = as_str(data.get("id"))
    # A fork's header keeps the parent's id and names its own session in ``sessionId``.
    native = as_str(data.get("sessionId")) or root
    if native:
        state["native"] = native
    if root:
        state["root"] = root
    if as_str(data.get("cwd")):
        state["cwd"] = data["cwd"]
    if as_str(data.get("timestamp")):
        state.setdefault("started", data["timestamp"])
    state["header"] = True
    state["known"] = True


def _session(state: dict[str, Any]) -> str:
    return session_id(f"command-code-{state['native']}")


def _assistant(turn: OpenTurn | None, content: Any) -> str:
    """Feed an assistant message's text and tool calls to ``turn``; return its text."""
    texts: list[str] = []
    for item in as_list(content):
        block = as_dict(item)
        kind = block.get("type")
        if kind == "text":
            text = as_str(block.get("text"))
            if text.strip():
                texts.append(text.strip())
                if turn is not None:
                    turn.say(text)
        elif kind in ("tool_use", "tool-call") and turn is not None:
            name = as_str(block.get("name")) or as_str(block.get("toolName"))
            args = as_dict(block.get("input") if "input" in block else block.get("args"))
            path = next((args[k] for k in _PATH_KEYS if as_str(args.get(k))), "")
            turn.call(
                name,
                read=[path] if name in _READ else [],
                edited=[path] if name in _EDIT else [],
            )
            turn.external(*_external(name, args))
    if isinstance(content, str) and content.strip():
        texts.append(content.strip())
        if turn is not None:
            turn.say(content)
    return "\n\n".join(texts)


def _external(name: str, args: dict[str, Any]) -> list[str]:
    """What a call read from outside the project."""
    if name in _FETCH:
        return [external.fetched(name, as_str(args.get("url")))]
    if name in _SEARCH:
        return [external.searched(name, as_str(args.get("query")))]
    if name in _SHELL:
        return fetches(as_str(args.get("command")))
    found = external.mcp_name(name)
    return [found] if found else []


def _text(content: Any) -> str:
    """The text of a message's content (a string or a list of text parts)."""
    if isinstance(content, str):
        return content
    parts = [as_str(as_dict(part).get("text")) for part in as_list(content)]
    return "\n\n".join(part for part in parts if part.strip())


def _has_results(content: Any) -> bool:
    return any(
        as_dict(part).get("type") in ("tool_result", "tool-result") for part in as_list(content)
    )
