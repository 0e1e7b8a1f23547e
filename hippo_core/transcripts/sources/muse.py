"""Muse Code durable session logs: ``<data>/muse/sessions/YYYY/MM/DD/<sessionId>/session.jsonl``.

No Muse Code host could be run, so this reader holds only to what public parsers of the
log agree on. Each line is a record envelope ``{id, sequence, stream, payload_type,
recorded_at (microseconds), payload}``; some tools see records batched in one line as
``{"children": [{"record_json": "<record>"}]}``, which is unpacked. A prompt is
``runtime.user_intent.accepted`` whose ``payload.semantic_kind.kind`` is ``chat``, its text
the ``text`` items of ``payload.model_messages[].content[]``. The conversation is in
``runtime.session`` records, ``payload.event.kind`` one of ``assistant_message_committed``
``{text}``, ``assistant_tool_calls_committed`` ``{tool_calls: [{name, args}]}`` and
``tool_result_batch_committed``. The workspace is ``payload.record.workspace_root`` of
``runtime.session.metadata``.

Other programs use ``~/.muse/sessions`` too (a pi-based agent, "nur"), so a file is taken
for a Muse log only when its first record looks like one; anything else is reported and
yields nothing. Files are read incrementally by byte offset.

What a turn read from outside the project, from the committed tool calls' names and
arguments (Muse Code's own tool names were not found; its protocol has ``webSearch``
items): web tools by the names agents give them (``web_fetch``, ``web_search``,
``webSearch`` ...), MCP tools (``mcp__<server>__<tool>``) and pages fetched by shell
commands (``curl``, ``gh issue view`` ...). The log does not say which files a call read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from hippo_core.files import jsontext
from hippo_core.transcripts import external
from hippo_core.transcripts.build import OpenTurn, TurnBuilder
from hippo_core.transcripts.lines import RECORD_ERRORS, JsonLines, loads
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource
from hippo_core.transcripts.session_ids import session_id
from hippo_core.transcripts.shell import fetches
from hippo_core.transcripts.values import as_dict, as_list, as_str, iso_from_epoch, json_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class MuseSource(TranscriptSource):
    """Reads Muse Code's top-level session logs (sub-agent logs are not read)."""

    name = "muse"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local/share"
        # The SDK's golden transcript names ~/.muse; the host's own default is the XDG folder.
        return [data / "muse", home / ".muse"]

    def discover(self, root: Path) -> Iterator[Path]:
        if not (root / "sessions").is_dir():  # a glob compiles its pattern even for no folder
            return
        pattern = "sessions/[0-9]*/[0-9]*/[0-9]*/*/session.jsonl"
        yield from sorted(path for path in root.glob(pattern) if path.is_file())

    def parse(self, path: Path, resume: Resume) -> Parsed:
        builder = TurnBuilder(str(path), resume)
        state = builder.state
        state.setdefault("native", path.parent.name)
        if not state.get("muse"):
            verdict = _first_line_verdict(path)
            if verdict is not True:
                problems = [f"not a Muse Code session log: {path}"] if verdict is False else []
                return Parsed(resume=Resume(0, {}, seen=resume.seen), problems=problems)
            state["muse"] = True
        lines = JsonLines(path, resume)
        for line in lines:
            try:
                for record in _records(line.data):
                    at = iso_from_epoch(record.get("recorded_at"), 1_000_000)
                    if at and at > state.get("ended", ""):
                        state["ended"] = at
                    if at and not state.get("started"):
                        state["started"] = at
                    if self._record(builder, record, line.start, line.end, at):
                        continue
                    if builder.current is not None:
                        builder.current.reach(line.end, at)
            except RECORD_ERRORS:
                lines.misshapen(line)
        builder.session(
            SessionInfo(
                id=_session(state),
                tool=self.name,
                native_id=str(state["native"]),
                cwd=state.get("cwd"),
                started=state.get("started"),
                ended=state.get("ended") or None,
                handoff=state.get("handoff"),
            )
        )
        return builder.result(lines.committed, lines.corrupt)

    @staticmethod
    def _record(
        builder: TurnBuilder, record: dict[str, Any], start: int, end: int, at: str | None
    ) -> bool:
        """Feed one record to the builder; true when it opened a turn."""
        state = builder.state
        kind = record.get("payload_type")
        payload = as_dict(record.get("payload"))
        if kind == "runtime.session.metadata":
            root = as_str(as_dict(payload.get("record")).get("workspace_root"))
            if root:
                state["cwd"] = root
        elif kind == "runtime.user_intent.accepted":
            text = _prompt(payload)
            if as_dict(payload.get("semantic_kind")).get("kind") == "chat" and text:
                key = (
                    as_str(record.get("id")) or f"{state['native']}:{record.get('sequence', start)}"
                )
                builder.open(
                    _session(state),
                    text,
                    key=key,
                    start=start,
                    end=end,
                    at=at,
                    cwd=state.get("cwd"),
                )
                return True
        elif kind == "runtime.session":
            answer = _event(builder.current, as_dict(payload.get("event")))
            if answer:
                state["handoff"] = answer
        return False


def _first_line_verdict(path: Path) -> bool | None:
    """Whether the file's first record is a Muse record; ``None`` while it is unwritten."""
    try:
        with path.open("rb") as file:
            first = file.readline()
            while first and not first.strip():
                first = file.readline()
    except OSError:
        return None
    try:
        data = loads(first)
    except ValueError:
        # A complete first line that is not JSON (a pretty-printed JSON file) is not a log.
        return False if first.endswith(b"\n") else None
    return _looks_like_muse(data)


def _looks_like_muse(data: Any) -> bool:
    """A Muse log's records carry ``payload_type`` and ``payload`` (pi and nur files do not)."""
    records = _records(data)
    return bool(records) and all(
        isinstance(r.get("payload_type"), str) and "payload" in r for r in records
    )


def _records(data: Any) -> list[dict[str, Any]]:
    """The records of one line: the line itself, or the batch it holds."""
    if not isinstance(data, dict):
        return []
    if "payload_type" in data or not isinstance(data.get("children"), list):
        return [data]
    found = []
    for child in data["children"]:
        raw = as_dict(child).get("record_json")
        try:
            record = jsontext.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            record = None
        if isinstance(record, dict):
            found.append(record)
    return found


def _event(turn: OpenTurn | None, event: dict[str, Any]) -> str:
    """Feed a ``runtime.session`` event to ``turn``; return the assistant text it commits."""
    kind = event.get("kind")
    if kind == "assistant_message_committed":
        text = as_str(event.get("text"))
        if turn is not None:
            turn.say(text)
        return text.strip()
    if kind == "assistant_tool_calls_committed" and turn is not None:
        for call in as_list(event.get("tool_calls")):
            name = as_str(as_dict(call).get("name"))
            turn.call(name)
            turn.external(*_external(name, json_object(as_dict(call).get("args"))))
    return ""


def _external(name: str, args: dict[str, Any]) -> list[str]:
    """What a call read from outside the project, by the names agents give such tools."""
    folded = name.lower().replace("_", "").replace("-", "")
    if folded in ("webfetch", "fetch", "fetchurl"):
        return [external.fetched(name, as_str(args.get("url")))]
    if folded == "websearch":
        return [external.searched(name, as_str(args.get("query")))]
    if folded in ("bash", "shell", "shellcommand", "runshellcommand", "exec", "execcommand"):
        return fetches(as_str(args.get("command")) or as_str(args.get("cmd")))
    found = external.mcp_name(name)
    return [found] if found else []


def _prompt(payload: dict[str, Any]) -> str:
    texts = [
        as_str(item.get("text"))
        for message in as_list(payload.get("model_messages"))
        for item in as_list(as_dict(message).get("content"))
        if isinstance(item, dict) and item.get("kind") == "text"
    ]
    return "\n\n".join(text for text in texts if text.strip())


def _session(state: dict[str, Any]) -> str:
    return session_id(f"muse-{state['native']}")
