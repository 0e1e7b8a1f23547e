"""OpenCode sessions: the SQLite database ``$XDG_DATA_HOME/opencode/opencode.db`` (v1.2+),
or the JSON file tree ``storage/`` of older versions.

Both hold the same records: a session (``parent_id`` set for a sub-agent's), its messages
(JSON ``{role, parentID, time, path.cwd ...}``) and their parts (``text``, ``reasoning``,
``tool`` with ``state{status, input, output|error}``, ``patch{files}`` ...). A turn is a user
message with non-synthetic text, and the assistant messages whose ``parentID`` names it.

A database is read whole, in one read transaction, every time it changed: its rows are
updated in place, so no byte offset marks what is new. Its turns therefore span bytes 0 to 0
of the database file, and the resume point is always the start. v1.2 copies the JSON tree
into the database and leaves it in place, so the tree is read only where no database exists:
one unit per session file, read whole too.

What a turn read from outside the project: ``webfetch``, ``websearch`` and ``codesearch``
(OpenCode's web tools), any tool OpenCode does not have itself (an MCP server's, named
``<server>_<tool>``, or a plugin's), pages fetched by ``bash`` commands (``curl``,
``gh issue view`` ...), files read outside the project, and, in a database, what a sub-agent
session started by ``task`` read, which the parent's turn gets too. Failed calls read nothing.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from hippo_core.base.patterns import Lazy
from hippo_core.files import jsontext
from hippo_core.transcripts import external, handover
from hippo_core.transcripts.build import OpenTurn, TurnBuilder
from hippo_core.transcripts.lines import RECORD_ERRORS
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource
from hippo_core.transcripts.project import agent_folder
from hippo_core.transcripts.session_ids import session_id
from hippo_core.transcripts.shell import fetches
from hippo_core.transcripts.values import as_dict, as_str, iso_from_epoch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Message = tuple[str, dict[str, Any], list[dict[str, Any]]]

#: Seconds to wait for a writer's lock before the database counts as unreadable this time.
BUSY_TIMEOUT = 2.0
_READ_TOOLS = frozenset({"read", "view"})
_EDIT_TOOLS = frozenset({"edit", "write", "multiedit", "patch", "apply_patch"})
#: OpenCode's own tools (its documentation's list, and those of earlier versions): any
#: other name is an MCP server's tool (``<server>_<tool>``) or a plugin's.
_OWN_TOOLS = frozenset(
    {
        *_READ_TOOLS,
        *_EDIT_TOOLS,
        "bash",
        "glob",
        "grep",
        "list",
        "ls",
        "lsp",
        "lsp_diagnostics",
        "lsp_hover",
        "skill",
        "todowrite",
        "todoread",
        "task",
        "question",
        "batch",
        "invalid",
        "plan_enter",
        "plan_exit",
        "webfetch",
        "websearch",
        "codesearch",
    }
)
_PATCH_HEADER = Lazy(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$", re.M)

#: One message: its id, its JSON data, and its parts' JSON data in order.


class OpenCodeSource(TranscriptSource):
    """Reads OpenCode's database, or the JSON session files of versions before 1.2."""

    name = "opencode"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local/share"
        return [data / "opencode"]

    def discover(self, root: Path) -> Iterator[Path]:
        database = root / "opencode.db"
        if database.is_file():
            yield database
            return
        legacy = root / "storage/session"
        if legacy.is_dir():  # a glob compiles its pattern even for no folder
            yield from sorted(p for p in legacy.glob("*/*.json") if p.is_file())

    def parse(self, path: Path, resume: Resume) -> Parsed:
        # Whole-unit formats: ``resume`` is ignored and the result always resumes at 0.
        reader = _Legacy(path) if path.suffix == ".json" else _Database(path)
        return reader.read()


class _Reader:
    """Turns of sessions, however their rows are stored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        own = str(path.parent) if path.suffix == ".db" else agent_folder(str(path), "storage")
        self.builder = TurnBuilder(str(path), Resume(), own=(own,) if own else ())
        self.corrupt = 0
        self.problems: list[str] = []
        #: The turns of each session read, by OpenCode's id, and the turns that started a
        #: sub-agent session (``task``): what the sub-agent read, the parent's turn read too.
        self.turns_of: dict[str, list[OpenTurn]] = {}
        self.spawned: list[tuple[OpenTurn, str, str]] = []

    def read(self) -> Parsed:
        self.load()
        for parent, child, tool in reversed(self.spawned):  # a sub-agent's own first
            for turn in self.turns_of.get(child, []):
                parent.external(*(external.subagent(tool, t) for t in turn.turn.external or []))
        parsed = self.builder.result(0, self.corrupt, self.problems)
        parsed.resume = Resume()
        return parsed

    def load(self) -> None:
        raise NotImplementedError

    def data(self, raw: Any) -> dict[str, Any] | None:
        """A row's JSON object, or None (counted corrupt) when it is not one."""
        try:
            value = jsontext.loads(raw)
        except (TypeError, ValueError):
            value = None
        if not isinstance(value, dict):
            self.corrupt += 1
            return None
        return value

    def session(
        self,
        row: dict[str, Any],
        messages: Iterable[Message],
        parent_of: Callable[[str], str | None],
    ) -> None:
        """Read one session: ``row`` has ``id, parent, directory, title, created, updated``."""
        native = str(row["id"])
        hippo_id, parent = _ids(native, parent_of)
        info = self.builder.session(
            SessionInfo(
                id=hippo_id,
                tool=OpenCodeSource.name,
                native_id=native,
                parent=parent,
                cwd=as_str(row.get("directory")) or None,
                started=iso_from_epoch(row.get("created")),
                ended=iso_from_epoch(row.get("updated")),
                title=as_str(row.get("title")) or None,
            )
        )
        self.builder.close()
        turns: dict[str, OpenTurn] = {}
        for message_id, message, parts in messages:
            try:
                times = as_dict(message.get("time"))
                at = iso_from_epoch(times.get("created"))
                if message.get("role") == "user":
                    texts = [as_str(p.get("text")) for p in parts if _said(p)]
                    if any(t.strip() for t in texts):
                        # The block hippo's plugin sends goes first: off before the quotes.
                        said = handover.strip("\n\n".join(t for t in texts if t.strip()))
                        prompt = _unquote(said.strip())
                        turns[message_id] = self.builder.open(
                            hippo_id, prompt, key=message_id, start=0, end=0, at=at, cwd=info.cwd
                        )
                        self.turns_of.setdefault(native, []).append(turns[message_id])
                    continue
                parent_id = message.get("parentID")
                turn = turns.get(parent_id) if parent_id else self.builder.current
                if message.get("role") != "assistant" or turn is None:
                    continue  # an answer to no prompt (a compaction summary, say)
                if info.cwd is None:
                    info.cwd = as_str(as_dict(message.get("path")).get("cwd")) or None
                    turn.turn.cwd = turn.turn.cwd or info.cwd
                turn.reach(0, at)
                turn.reach(0, iso_from_epoch(times.get("completed")))
                for part in parts:
                    if _said(part):
                        turn.say(as_str(part.get("text")))
                        info.handoff = as_str(part.get("text")).strip() or info.handoff
                    elif part.get("type") == "tool":
                        child = _tool(turn, part)
                        if child:
                            self.spawned.append((turn, child, as_str(part.get("tool"))))
                    elif part.get("type") == "patch":
                        files = part.get("files")
                        turn.files(edited=[f for f in files or [] if isinstance(f, str)])
            except RECORD_ERRORS:
                self.corrupt += 1  # a message or part of the wrong shape: passed over


class _Database(_Reader):
    """The SQLite database of OpenCode 1.2 and later (WAL mode)."""

    def load(self) -> None:
        import sqlite3

        if not self.path.is_file():
            self.problems.append("the OpenCode database is gone")
            return
        # Read-only through SQLite itself, so a WAL the agent has not checkpointed yet is
        # applied (a copy of the main file alone would miss it); one transaction, one snapshot.
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
        except sqlite3.Error as exc:
            self.problems.append(f"the OpenCode database cannot be opened ({exc})")
            return
        try:
            conn.execute("BEGIN")
            self.rows(conn)
        except sqlite3.Error as exc:
            self.problems.append(f"the OpenCode database cannot be read ({exc})")
        finally:
            conn.close()

    def rows(self, conn: Any) -> None:
        query = (
            "SELECT id, parent_id, directory, title, time_created, time_updated"
            " FROM session ORDER BY time_created, id"
        )
        names = ("id", "parent", "directory", "title", "created", "updated")
        rows = [dict(zip(names, row, strict=True)) for row in conn.execute(query).fetchall()]
        parents = {row["id"]: row["parent"] for row in rows}
        for row in rows:
            self.session(row, self.messages(conn, row["id"]), parents.get)

    def messages(self, conn: Any, native: str) -> list[Message]:
        parts: dict[str, list[dict[str, Any]]] = {}
        query = "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id"
        for message_id, raw in conn.execute(query, (native,)):
            part = self.data(raw)
            if part is not None:
                parts.setdefault(message_id, []).append(part)
        query = "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id"
        found = []
        for message_id, raw in conn.execute(query, (native,)).fetchall():
            message = self.data(raw)
            if message is not None:
                found.append((message_id, message, parts.get(message_id, [])))
        return found


class _Legacy(_Reader):
    """One session of the JSON tree (``storage/session/<project>/<id>.json``) before 1.2."""

    def load(self) -> None:
        storage = self.path.parents[2]
        session = self.file(self.path)
        if session is None:
            self.problems.append("the session file is not a JSON object")
            return
        native = _component(as_str(session.get("id"))) or self.path.stem
        times = as_dict(session.get("time"))
        row = {
            "id": native,
            "directory": session.get("directory"),
            "title": session.get("title"),
            "created": times.get("created"),
            "updated": times.get("updated"),
        }

        def parent_of(sid: str) -> str | None:
            if sid == native:
                return as_str(session.get("parentID")) or None
            if not _component(sid):
                return None
            found = sorted((storage / "session").glob(f"*/{glob.escape(sid)}.json"))
            other = (self.file(found[0], count=False) if found else None) or {}
            return as_str(other.get("parentID")) or None

        messages = []
        for path in sorted((storage / "message" / native).glob("*.json")):
            message = self.file(path)
            if message is not None:
                message_id = _component(as_str(message.get("id"))) or path.stem
                parts = [
                    self.file(p) for p in sorted((storage / "part" / message_id).glob("*.json"))
                ]
                ordered = sorted((p for p in parts if p), key=lambda p: as_str(p.get("id")))
                messages.append((message_id, message, ordered))
        messages.sort(key=lambda m: (_number(as_dict(m[1].get("time")).get("created")), m[0]))
        self.session(row, messages, parent_of)

    def file(self, path: Path, *, count: bool = True) -> dict[str, Any] | None:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            if count:
                self.problems.append(f"{path.name}: cannot be read ({exc.strerror or exc})")
            return None
        return self.data(raw) if count else _object(raw)


def _component(name: str) -> str:
    """``name`` when it is one plain file name (an id read from a file never walks the tree)."""
    return name if name not in ("", ".", "..") and "/" not in name and "\0" not in name else ""


def _ids(native: str, parent_of: Callable[[str], str | None]) -> tuple[str, str | None]:
    """Hippo's id for a session and its parent's: sub-agents hang off the top session."""
    top, seen = native, {native}
    while (parent := parent_of(top)) and parent not in seen:
        top = parent
        seen.add(parent)
    if top == native:
        return session_id(f"opencode-{native}"), None
    return session_id(f"opencode-{top}-agent-{native}"), session_id(f"opencode-{top}")


def _tool(turn: OpenTurn, part: dict[str, Any]) -> str:
    """A tool call; a failed one (``state.status == "error"``) touched no file and read
    nothing. The OpenCode id of the sub-agent session a ``task`` call started, or ``""``."""
    name = as_str(part.get("tool"))
    state = as_dict(part.get("state"))
    args = as_dict(state.get("input"))
    if state.get("status") == "error":
        turn.call(name)
        return ""
    path = as_str(args.get("filePath") or args.get("path"))
    edited = [path] if name in _EDIT_TOOLS else []
    patch = as_str(args.get("patchText") or args.get("patch"))
    edited += [m.group(1) for m in _PATCH_HEADER.finditer(patch)]
    turn.call(name, read=[path] if name in _READ_TOOLS else [], edited=edited)
    turn.external(*_external(name, args))
    if name == "task":
        return as_str(as_dict(state.get("metadata")).get("sessionId"))
    return ""


def _external(name: str, args: dict[str, Any]) -> list[str]:
    """What a call that did not fail read from outside the project, by OpenCode's names."""
    if name == "webfetch":
        return [external.fetched(name, as_str(args.get("url")))]
    if name in ("websearch", "codesearch"):
        return [external.searched(name, as_str(args.get("query")))]
    if name == "bash":
        return fetches(as_str(args.get("command")))
    if name and name not in _OWN_TOOLS:
        return [f"MCP or plugin tool: {name}"]
    return []


def _said(part: dict[str, Any]) -> bool:
    """Whether a part is text someone wrote (not text OpenCode injected)."""
    return part.get("type") == "text" and not part.get("synthetic") and not part.get("ignored")


def _unquote(text: str) -> str:
    """A prompt without the quotes ``opencode run`` adds.

    ``opencode run`` joins its arguments into one message, wrapping each one that holds a
    space in double quotes and escaping its quotes; a prompt given as one argument is stored
    (and sent to the model) as ``"..."``. The quotes are taken off so the prompt reads, and
    is found, the same as one typed in the TUI.
    """
    inner = text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in inner.replace('\\"', ""):
        return inner.replace('\\"', '"')
    return text


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = jsontext.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
