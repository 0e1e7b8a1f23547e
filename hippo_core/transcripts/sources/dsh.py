"""dsh (DeepSeek Harness) logs: ``$DSH_HOME/sessions/<slug>/<sessionId>/session.v4.jsonl.zstd``.

The log is multi-frame zstd (one frame per flush), decoded as one stream across frames; a
single-frame decode would return only the header line. Turn ``start``/``end`` and
``committed`` are offsets into the **decompressed** stream. A compressed log is read whole
each time it changes (resume offset 0); a plain ``.jsonl`` log is read on from the offset.

Records: a ``session`` header (id, cwd, ``parentSession`` for a sub-agent, ``isSeeded`` /
``seedLength`` for a forked child), then events ``{type, seq, time (ms), data}``. A prompt
is a ``user/message`` whose ``source.kind`` is ``user`` (runtime context, settled
sub-agents and plugin notices are ``user/message`` too). ``--session-id`` resumes by
appending ``session/end-seed`` and the new turn to the same file.

What a turn read from outside the project: ``web_fetch`` and ``web_search`` (dsh's web
tools), MCP tools (``mcp__<server>__<tool>``), pages fetched by ``bash`` (``curl``,
``gh issue view`` ...) and files read outside the project (those in ``$DSH_HOME`` aside),
each once its result came back without an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from hippo_core.base.patterns import Lazy
from hippo_core.transcripts import external
from hippo_core.transcripts.build import OpenTurn, TurnBuilder
from hippo_core.transcripts.lines import RECORD_ERRORS, JsonLines, loads
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource
from hippo_core.transcripts.project import agent_folder
from hippo_core.transcripts.session_ids import session_id
from hippo_core.transcripts.shell import fetches
from hippo_core.transcripts.values import as_dict, as_list, as_str, iso_from_epoch, json_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LOG = Lazy(r"session(?:\.v(\d+))?\.jsonl(\.zstd)?")
_READ = frozenset({"read", "read_image"})
_EDIT = frozenset({"write", "edit"})
_PATH_KEYS = ("path", "file_path", "filePath")
_HUMAN = frozenset({"user", ""})
# Large records this reader never looks at: passed over without being parsed.
_SKIP = tuple(
    b'{"type":"' + kind.encode()
    for kind in ("request/header", "system/message", "session/title-llm-request")
)
# Events whose time is the agent's activity (not the idle gap before the next prompt).
_ACTIVE = ("assistant/", "tool/", "step/end", "turn/end", "user/")


class DshSource(TranscriptSource):
    """Reads dsh session logs, compressed or plain, and their sub-agents' logs."""

    name = "dsh"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env["DSH_HOME"]) if env.get("DSH_HOME") else home / ".dsh"]

    def discover(self, root: Path) -> Iterator[Path]:
        if not (root / "sessions").is_dir():  # a glob compiles its pattern even for no folder
            return
        for folder in sorted((root / "sessions").glob("*/*")):
            log = _newest_log(folder)
            if log is not None:
                yield log

    def parse(self, path: Path, resume: Resume) -> Parsed:
        compressed = path.name.endswith(".zstd")
        if compressed:
            # The whole stream is decoded again: zstd offers no seek into the decompressed text.
            resume = Resume(0, {}, seen=resume.seen)
            try:
                import zstandard  # noqa: F401  (optional at import time, needed here)
            except ImportError:
                return Parsed(
                    resume=resume,
                    problems=[f"{path}: cannot read a zstd dsh log: zstandard is not installed"],
                )
        problems: list[str] = []
        stream = _decompressed(path, problems) if compressed else None
        lines = JsonLines(path, resume, wanted=_wanted, lines=stream)
        builder = self._read(path, resume, lines)
        parsed = builder.result(lines.committed, lines.corrupt, problems)
        if compressed:
            parsed.resume = Resume(0, {}, seen=lines.committed)
        return parsed

    def _read(self, path: Path, resume: Resume, lines: JsonLines) -> TurnBuilder:
        own = agent_folder(str(path), "sessions")
        builder = TurnBuilder(str(path), resume, own=(own,) if own else ())
        state = builder.state
        state.setdefault("native", path.parent.name)
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        for record in lines:
            try:
                data = record.data
                if not isinstance(data, dict):
                    continue
                kind = as_str(data.get("type"))
                if kind == "session" and "seq" not in data:
                    self._header(path, state, data)
                    continue
                event = as_dict(data.get("data"))
                seq = data.get("seq")
                if state.get("seed") and isinstance(seq, int) and seq < state["seed"]:
                    continue  # copied from the parent when this child was forked
                if kind == "session/end-seed" and event.get("inherited") is True:
                    # Everything so far was the parent's history: start this session afresh.
                    builder = _restart(builder, state)
                    state = builder.state
                    continue
                at = iso_from_epoch(data.get("time"))
                if at and kind.startswith(_ACTIVE) and at > state.get("ended", ""):
                    state["ended"] = at
                if kind == "session/title" and as_str(event.get("title")):
                    state["title"] = event["title"]
                elif kind == "user/message":
                    source = as_dict(event.get("source"))
                    text = _text(event.get("content"))
                    if as_str(source.get("kind")) in _HUMAN and text:
                        key = as_str(event.get("id")) or f"{state['native']}:{seq}"
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
                elif kind == "assistant/message":
                    answer = _assistant(builder.current, as_dict(event.get("message")), calls)
                    if answer:
                        state["handoff"] = answer
                elif kind == "tool/result" and builder.current is not None:
                    _result(builder.current, event, calls)
                if builder.current is not None:
                    builder.current.reach(record.end, at if kind.startswith(_ACTIVE) else None)
            except RECORD_ERRORS:
                lines.misshapen(record)
        if state.get("known") or builder.turns:
            builder.session(
                SessionInfo(
                    id=_session(state),
                    tool=self.name,
                    native_id=str(state["native"]),
                    parent=state.get("parent"),
                    cwd=state.get("cwd"),
                    started=state.get("started"),
                    ended=state.get("ended") or None,
                    title=state.get("title"),
                    handoff=state.get("handoff"),
                )
            )
        return builder

    @staticmethod
    def _header(path: Path, state: dict[str, Any], data: dict[str, Any]) -> None:
        """Take the session, cwd, start, parent and seed length from the header."""
        state["known"] = True
        if as_str(data.get("id")):
            state["native"] = data["id"]
        if as_str(data.get("cwd")):
            state["cwd"] = data["cwd"]
        state["started"] = iso_from_epoch(data.get("createdAt"))
        if data.get("isSeeded") is True and isinstance(data.get("seedLength"), int):
            state["seed"] = data["seedLength"]
        parent = as_str(data.get("parentSession"))
        if parent:
            chain = _ancestors(path.parent.parent, parent)
            state["top"] = chain[-1]
            state["parent"] = _hippo_id(chain[-1], chain[0] if len(chain) > 1 else None)


def _newest_log(folder: Path) -> Path | None:
    """The log of the highest generation in a session folder (compressed before plain)."""
    best: tuple[int, int, str] | None = None
    found: Path | None = None
    for path in folder.glob("session*.jsonl*"):
        match = _LOG.fullmatch(path.name)
        if match and path.is_file():
            rank = (int(match.group(1) or 0), 1 if match.group(2) else 0, path.name)
            if best is None or rank > best:
                best, found = rank, path
    return found


def _decompressed(path: Path, problems: list[str]) -> Iterator[bytes]:
    """The lines of a multi-frame zstd file; a truncated last frame ends the stream quietly."""
    import zstandard

    def chunks() -> Iterator[bytes]:
        with path.open("rb") as file:
            reader = zstandard.ZstdDecompressor().stream_reader(file, read_across_frames=True)
            produced = False
            while True:
                try:
                    chunk = reader.read(1 << 16)
                except zstandard.ZstdError as exc:
                    # A frame still being written decodes to nothing more; a file that
                    # is not zstd at all decodes to nothing.
                    if not produced:
                        problems.append(f"{path}: not a readable zstd stream ({exc})")
                    return
                if not chunk:
                    return
                produced = True
                yield chunk

    return _split(chunks())


def _split(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Lines (each with its ``\\n``) from a stream of byte chunks, split on ``\\n`` only."""
    buffer = bytearray()
    scanned = 0
    for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", scanned)) >= 0:
            yield bytes(buffer[start : end + 1])
            start = scanned = end + 1
        del buffer[:start]
        scanned = len(buffer)
    if buffer:
        yield bytes(buffer)


def _ancestors(project: Path, parent: str) -> list[str]:
    """``[parent, grandparent, ..., top]``, following ``parentSession`` in sibling folders."""
    chain = [parent]
    while len(chain) < 16:
        header = _first_record(project / chain[-1])
        above = as_str(header.get("parentSession"))
        if not above or above in chain:
            break
        chain.append(above)
    return chain


def _first_record(folder: Path) -> dict[str, Any]:
    """The header of the log in ``folder`` (an empty dict when it cannot be read)."""
    log = _newest_log(folder) if folder.is_dir() else None
    if log is None:
        return {}
    first = b""
    try:
        if log.name.endswith(".zstd"):
            first = next(_decompressed(log, []), b"")
        else:
            with log.open("rb") as file:
                first = file.readline()
        return as_dict(loads(first))
    except (OSError, ValueError, ImportError):
        return {}


def _restart(builder: TurnBuilder, state: dict[str, Any]) -> TurnBuilder:
    """A fresh builder keeping only the header's state (drops inherited turns)."""
    header = ("native", "cwd", "started", "parent", "top", "known")
    kept: dict[str, Any] = {key: state[key] for key in header if key in state}
    return TurnBuilder(builder.source, Resume(0, kept), own=builder.scope.own)


def _assistant(
    turn: OpenTurn | None, message: dict[str, Any], calls: dict[str, tuple[str, dict[str, Any]]]
) -> str:
    """Feed an assistant message to ``turn``: text, and tool calls kept by id for results."""
    texts: list[str] = []
    for item in as_list(message.get("content")):
        block = as_dict(item)
        kind = block.get("type")
        if kind == "text" and as_str(block.get("text")).strip():
            texts.append(block["text"].strip())
            if turn is not None:
                turn.say(block["text"])
        elif kind == "tool-call" and turn is not None:
            name = as_str(block.get("name"))
            turn.call(name)
            calls[as_str(block.get("id"))] = (name, json_object(block.get("arguments")))
    return "\n\n".join(texts)


def _result(
    turn: OpenTurn, event: dict[str, Any], calls: dict[str, tuple[str, dict[str, Any]]]
) -> None:
    """Record the files a successful read, write or edit touched (from its meta, else its call)."""
    message = as_dict(event.get("message"))
    if message.get("isError") is True or event.get("error"):
        return
    call_id = as_str(message.get("toolCallId")) or as_str(
        as_dict(message.get("source")).get("callId")
    )
    name, arguments = calls.get(call_id, ("", {}))
    turn.external(*_external(name, arguments))
    meta = as_dict(event.get("meta"))
    paths = [as_str(meta.get("path"))]
    paths += [as_str(as_dict(diff).get("path")) for diff in as_list(meta.get("diffs"))]
    paths = [path for path in paths if path]
    if not paths:
        paths = [next((arguments[k] for k in _PATH_KEYS if as_str(arguments.get(k))), "")]
    if name in _READ:
        turn.files(read=paths)
    elif name in _EDIT:
        turn.files(edited=paths)


def _external(name: str, arguments: dict[str, Any]) -> list[str]:
    """What a call that came back without an error read from outside the project."""
    if name == "web_fetch":
        return [external.fetched(name, as_str(arguments.get("url")))]
    if name == "web_search":
        return [external.searched(name, as_str(arguments.get("query")))]
    if name == "bash":
        return fetches(as_str(arguments.get("command")))
    found = external.mcp_name(name)
    return [found] if found else []


def _wanted(line: bytes) -> bool:
    return not line.startswith(_SKIP)


def _session(state: dict[str, Any]) -> str:
    return _hippo_id(
        state.get("top") or state["native"], state["native"] if "top" in state else None
    )


def _hippo_id(top: str, agent: str | None) -> str:
    return session_id(f"dsh-{top}-agent-{agent}" if agent else f"dsh-{top}")


def _text(content: Any) -> str:
    parts = [as_str(as_dict(part).get("text")) for part in as_list(content)]
    return "\n\n".join(part for part in parts if part.strip())
