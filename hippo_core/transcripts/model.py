"""What a transcript source produces: sessions and turns, and where to resume reading.

Plain dataclasses, JSON-friendly: the ingest stores them in the index and keeps
:class:`Resume` between runs, so a source reads each byte of an append-only file about once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar


@dataclass
class SessionInfo:
    """One agent session as a transcript shows it.

    ``id`` is hippo's id for it (``codex-<id>``, ``<sessionId>-agent-<x>`` ...), already
    valid as a file name (see :func:`hippo_core.sessions.session_id`). ``handoff`` is the
    last assistant message, for the agents whose derived records carry one.
    """

    id: str
    tool: str
    native_id: str
    parent: str | None = None
    cwd: str | None = None
    branch: str | None = None
    started: str | None = None
    ended: str | None = None
    title: str | None = None
    handoff: str | None = None


@dataclass
class Turn:
    """One human prompt and everything the agent did until the next one.

    ``key`` identifies the turn across files (the prompt record's own id where the format
    has one), so a record copied into a fork or a resumed file is indexed once. Paths are
    absolute, resolved against the turn's cwd. ``start``/``end`` are the byte range of the
    turn's records in ``source`` (for formats that are not read by offset, the whole file).
    Times are ISO 8601 UTC strings.
    """

    session: str
    ordinal: int
    key: str
    prompt: str
    answer: str = ""
    tools: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    files_edited: list[str] = field(default_factory=list)
    files_cited: list[str] = field(default_factory=list)
    started: str | None = None
    ended: str | None = None
    cwd: str | None = None
    branch: str | None = None
    source: str = ""
    start: int = 0
    end: int = 0


@dataclass
class Resume:
    """Where to start the next read of a file, and the state the reader had there.

    ``offset`` is a byte offset at a record boundary (the start of the last turn, which may
    still grow); ``state`` is the source's own JSON-able state at that offset (session id,
    cwd, the next ordinal ...). ``seen`` is how far earlier reads got, so a corrupt line
    between ``offset`` and ``seen`` is not counted twice.
    """

    offset: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    seen: int = 0


@dataclass
class Parsed:
    """The result of reading one file from a :class:`Resume` point.

    ``turns`` are those starting at or after the resume offset, every one of them complete
    as far as the file goes (the ingest replaces what it had from that offset on).
    ``committed`` is the offset just past the last complete line; an unterminated tail is
    read again next time. ``problems`` are records the source could not read, said plainly.
    """

    sessions: list[SessionInfo] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    resume: Resume = field(default_factory=Resume)
    committed: int = 0
    corrupt: int = 0
    problems: list[str] = field(default_factory=list)


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

    def discover(self, root: Path) -> Iterator[Path]:
        """Every transcript file below ``root``, in a stable order."""
        raise NotImplementedError

    def parse(self, path: Path, resume: Resume) -> Parsed:
        """Read ``path`` from ``resume``; see :class:`Parsed`."""
        raise NotImplementedError
