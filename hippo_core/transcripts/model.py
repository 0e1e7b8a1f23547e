"""What a transcript source produces: sessions and turns, and where to resume reading.

Plain, JSON-friendly values (:class:`~hippo_core.base.records.Struct`: fields in ``__slots__``,
``as_dict()``): the ingest stores them in the index and keeps :class:`Resume` between
runs, so a source reads each byte of an append-only file about once.
"""

from __future__ import annotations

from hippo_core.base.records import Struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path
    from typing import Any, ClassVar


class SessionInfo(Struct):
    """One agent session as a transcript shows it.

    ``id`` is hippo's id for it (``codex-<id>``, ``<sessionId>-agent-<x>`` ...), already
    valid as a file name (see :func:`hippo_core.agents.sessions.session_id`). ``handoff`` is the
    last assistant message, for the agents whose derived records carry one.
    """

    __slots__ = (
        "id",
        "tool",
        "native_id",
        "parent",
        "cwd",
        "branch",
        "started",
        "ended",
        "title",
        "handoff",
    )
    id: str
    tool: str
    native_id: str
    parent: str | None
    cwd: str | None
    branch: str | None
    started: str | None
    ended: str | None
    title: str | None
    handoff: str | None

    def __init__(
        self,
        id: str,
        tool: str,
        native_id: str,
        parent: str | None = None,
        cwd: str | None = None,
        branch: str | None = None,
        started: str | None = None,
        ended: str | None = None,
        title: str | None = None,
        handoff: str | None = None,
    ) -> None:
        self._set(
            id=id,
            tool=tool,
            native_id=native_id,
            parent=parent,
            cwd=cwd,
            branch=branch,
            started=started,
            ended=ended,
            title=title,
            handoff=handoff,
        )


class Turn(Struct):
    """One human prompt and everything the agent did until the next one.

    ``key`` identifies the turn across files (the prompt record's own id where the format
    has one), so a record copied into a fork or a resumed file is indexed once. Paths are
    absolute, resolved against the turn's cwd. ``start``/``end`` are the byte range of the
    turn's records in ``source`` (for formats that are not read by offset, the whole file).
    Times are ISO 8601 UTC strings.

    ``external`` is what the agent read from outside the project during the turn, in order:
    one short description per page fetched, search made, MCP tool called, file read outside
    the turn's git work trees, or sub-agent that did one of these, built with the helpers
    of :mod:`hippo_core.transcripts.external` (``web: WebFetch https://...``,
    ``MCP: github get_issue``, ``file outside the project: ~/Downloads/README.md``). An
    empty list says the turn read nothing from outside; None (the default) that the source
    does not tell. The ingest cleans, bounds and redacts it.
    """

    __slots__ = (
        "session",
        "ordinal",
        "key",
        "prompt",
        "answer",
        "tools",
        "files_read",
        "files_edited",
        "files_cited",
        "external",
        "started",
        "ended",
        "cwd",
        "branch",
        "source",
        "start",
        "end",
    )
    session: str
    ordinal: int
    key: str
    prompt: str
    answer: str
    tools: list[str]
    files_read: list[str]
    files_edited: list[str]
    files_cited: list[str]
    external: list[str] | None
    started: str | None
    ended: str | None
    cwd: str | None
    branch: str | None
    source: str
    start: int
    end: int

    def __init__(
        self,
        session: str,
        ordinal: int,
        key: str,
        prompt: str,
        answer: str = "",
        tools: list[str] | None = None,
        files_read: list[str] | None = None,
        files_edited: list[str] | None = None,
        files_cited: list[str] | None = None,
        external: list[str] | None = None,
        started: str | None = None,
        ended: str | None = None,
        cwd: str | None = None,
        branch: str | None = None,
        source: str = "",
        start: int = 0,
        end: int = 0,
    ) -> None:
        self._set(
            session=session,
            ordinal=ordinal,
            key=key,
            prompt=prompt,
            answer=answer,
            tools=[] if tools is None else tools,
            files_read=[] if files_read is None else files_read,
            files_edited=[] if files_edited is None else files_edited,
            files_cited=[] if files_cited is None else files_cited,
            external=external,
            started=started,
            ended=ended,
            cwd=cwd,
            branch=branch,
            source=source,
            start=start,
            end=end,
        )


class Resume(Struct):
    """Where to start the next read of a file, and the state the reader had there.

    ``offset`` is a byte offset at a record boundary (the start of the last turn, which may
    still grow); ``state`` is the source's own JSON-able state at that offset (session id,
    cwd, the next ordinal ...). ``seen`` is how far earlier reads got, so a corrupt line
    between ``offset`` and ``seen`` is not counted twice.
    """

    __slots__ = ("offset", "state", "seen")
    offset: int
    state: dict[str, Any]
    seen: int

    def __init__(self, offset: int = 0, state: dict[str, Any] | None = None, seen: int = 0) -> None:
        self._set(offset=offset, state={} if state is None else state, seen=seen)


class Parsed(Struct):
    """The result of reading one file from a :class:`Resume` point.

    ``turns`` are those starting at or after the resume offset, every one of them complete
    as far as the file goes (the ingest replaces what it had from that offset on).
    ``committed`` is the offset just past the last complete line; an unterminated tail is
    read again next time. ``problems`` are records the source could not read, said plainly.
    """

    __slots__ = ("sessions", "turns", "resume", "committed", "corrupt", "problems")
    sessions: list[SessionInfo]
    turns: list[Turn]
    resume: Resume
    committed: int
    corrupt: int
    problems: list[str]

    def __init__(
        self,
        sessions: list[SessionInfo] | None = None,
        turns: list[Turn] | None = None,
        resume: Resume | None = None,
        committed: int = 0,
        corrupt: int = 0,
        problems: list[str] | None = None,
    ) -> None:
        self._set(
            sessions=[] if sessions is None else sessions,
            turns=[] if turns is None else turns,
            resume=Resume() if resume is None else resume,
            committed=committed,
            corrupt=corrupt,
            problems=[] if problems is None else problems,
        )


class TranscriptSource:
    """Reads one agent's transcripts. Subclass it and register an instance.

    ``name`` is the tool name used in the index and the session records
    (``claude-code``, ``codex`` ...). ``roots`` gives the agent's default folders, honouring
    its own environment variable; ``discover`` lists the files (or databases) below one
    root; ``parse`` reads one of them from a resume point. A source never raises for bad
    content: a line it cannot read is counted in ``corrupt`` or described in ``problems``.
    """

    name: ClassVar[str] = ""

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """The agent's own folders on this machine (they need not exist)."""
        raise NotImplementedError

    def discover(self, root: Path) -> Iterator[Path | str]:
        """Every transcript file below ``root``, in a stable order, as a path or its string
        (a string costs an ingest with nothing new less: it visits every file)."""
        raise NotImplementedError

    def parse(self, path: Path, resume: Resume) -> Parsed:
        """Read ``path`` from ``resume``; see :class:`Parsed`."""
        raise NotImplementedError
