"""Building turns while reading records in file order, shared by every source.

A source opens a turn at each human prompt and feeds it what follows: answer text, tool
calls with the files they read or edited, what they read from outside the project, and the
records' byte ends and times. The builder resolves paths against the turn's cwd, notes the
files read outside the project (:mod:`hippo_core.transcripts.project`), picks out the files
the text cites, and remembers the state the source had when the last turn opened, which is
where the next read resumes (that turn may still grow).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from hippo_core.base.patterns import Lazy
from hippo_core.files import jsontext
from hippo_core.transcripts import handover
from hippo_core.transcripts.external import clean, outside_file
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, Turn
from hippo_core.transcripts.project import Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: A path-like word in prose: absolute, ``./``/``../``-relative, or with a folder and a
#: file extension (``docs/Pricing.md``), or a bare file name with a Markdown extension.
_CITED = Lazy(
    r"(?<![\w/.~-])"
    r"((?:/|\.{1,2}/|~/)?(?:[\w.@+-]+/)*[\w.@+-]+\.(?:md|markdown|txt|py|toml|json|yaml|yml|"
    r"rs|ts|js|go|rb|java|c|h|cpp|sh|sql|html|css|cfg|ini)"
    r"|/(?:[\w.@+-]+/)+[\w.@+-]+)"
    r"(?![\w/])"
)


def resolve(path: str, cwd: str | None) -> str:
    """``path`` made absolute against ``cwd`` and normalised; ``file://`` is dropped."""
    if path.startswith("file://"):
        path = path[len("file://") :]
    if path.startswith("~/"):
        path = os.path.join(os.path.expanduser("~"), path[2:])
    if not os.path.isabs(path) and cwd:
        path = os.path.join(cwd, path)
    return os.path.normpath(path) if path else path


def cited_paths(text: str, cwd: str | None) -> list[str]:
    """Paths a piece of prose names, resolved against ``cwd``, in order, each once."""
    if "." not in text and "/" not in text:
        return []
    found = dict.fromkeys(resolve(m.group(1), cwd) for m in _CITED.finditer(text))
    return list(found)


class OpenTurn:
    """A turn being read: mutable until the next prompt closes it."""

    __slots__ = ("answers", "scope", "seen", "state", "turn")

    def __init__(
        self, turn: Turn, state: dict[str, Any] | None = None, scope: Scope | None = None
    ) -> None:
        self.turn = turn
        self.answers: list[str] = []
        self.state: dict[str, Any] = {} if state is None else state
        self.scope = Scope() if scope is None else scope
        if turn.external is None:
            turn.external = []
        self.seen: set[str] | None = None  # made when the turn first reads from outside

    def say(self, text: str) -> None:
        """Add assistant text (blocks of one answer are joined by blank lines)."""
        if text and text.strip():
            self.answers.append(text.strip())

    def call(self, name: str, *, read: Iterable[str] = (), edited: Iterable[str] = ()) -> None:
        """Record a tool call and the files it read or edited (relative to the turn's cwd)."""
        if name:
            self.turn.tools.append(name)
        self.files(read=read, edited=edited)

    def files(self, *, read: Iterable[str] = (), edited: Iterable[str] = ()) -> None:
        """Record files the turn read or edited, learnt apart from the call (from its result).

        A file read outside the project is also something the turn read from outside,
        unless the turn wrote it itself first."""
        turn = self.turn
        cwd = turn.cwd
        inside = f"{cwd}/" if cwd else None
        for path in read:
            if path:
                full = resolve(path, cwd)
                _add(turn.files_read, full)
                if inside is not None and full.startswith(inside):
                    continue  # the turn's own folder: most reads, decided at once
                if full not in turn.files_edited and self.scope.outside(full, cwd):
                    self.external(outside_file(full))
        for path in edited:
            if path:
                _add(turn.files_edited, resolve(path, cwd))

    def external(self, *descriptions: str) -> None:
        """Record what the turn read from outside the project, described with
        :mod:`hippo_core.transcripts.external`, each once."""
        found = self.turn.external
        if found is None:
            found = self.turn.external = []
        if self.seen is None:
            self.seen = set(found)
        for description in descriptions:
            text = clean(description)
            if text and text not in self.seen:
                self.seen.add(text)
                found.append(text)

    def reach(self, end: int, at: str | None = None) -> None:
        """The turn now runs to byte ``end`` (and time ``at``, when given)."""
        self.turn.end = max(self.turn.end, end)
        if at:
            if not self.turn.started:
                self.turn.started = at
            if not self.turn.ended or at > self.turn.ended:
                self.turn.ended = at


def _snapshot(state: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of JSON-able state (a JSON round trip: several times faster than
    ``copy.deepcopy``, and it proves the state can be stored)."""
    copied: dict[str, Any] = jsontext.loads(jsontext.dumps(state, indent=None))
    return copied


def _add(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)


class TurnBuilder:
    """Collects the turns of one file read from ``resume``.

    ``state`` is the source's state (JSON-able); the builder keeps the next ordinal of each
    session in ``state["ordinals"]`` and snapshots ``state`` when a turn opens. ``own`` are
    the agent's own folders (:class:`~hippo_core.transcripts.project.Scope`): a file read
    there is not counted as read from outside the project.
    """

    def __init__(self, source: str, resume: Resume, *, own: tuple[str, ...] = ()) -> None:
        self.source = source
        self.resume = resume
        #: Which files are the project's; ``own`` are the agent's own folders.
        self.scope = Scope(own)
        self.state = _snapshot(resume.state)
        self.state.setdefault("ordinals", {})
        self.turns: list[OpenTurn] = []
        self.sessions: dict[str, SessionInfo] = {}
        self.current: OpenTurn | None = None

    def session(self, info: SessionInfo) -> SessionInfo:
        """Register (or return the already registered) session with ``info.id``."""
        return self.sessions.setdefault(info.id, info)

    def open(
        self,
        session: str,
        prompt: str,
        *,
        key: str,
        start: int,
        end: int,
        at: str | None = None,
        cwd: str | None = None,
        branch: str | None = None,
    ) -> OpenTurn:
        """Close the current turn and open the next one at the prompt record (without
        any block hippo handed the agent, see :mod:`hippo_core.transcripts.handover`)."""
        if handover.handed(prompt):
            prompt = handover.strip(prompt)
        snapshot = _snapshot(self.state)
        ordinals = self.state["ordinals"]
        ordinal = ordinals.get(session, 0)
        ordinals[session] = ordinal + 1
        turn = Turn(
            session=session,
            ordinal=ordinal,
            key=key,
            prompt=prompt.strip(),
            cwd=cwd,
            branch=branch or None,
            source=self.source,
            start=start,
            end=end,
            started=at,
            ended=at,
            external=[],
        )
        self.current = OpenTurn(turn, state=snapshot, scope=self.scope)
        self.turns.append(self.current)
        return self.current

    def close(self) -> None:
        """No turn is open any more (the records that follow belong to none)."""
        self.current = None

    def result(self, committed: int, corrupt: int = 0, problems: list[str] | None = None) -> Parsed:
        """The parsed file: finished turns, sessions, and where to resume next time."""
        turns = [self._finish(open_turn) for open_turn in self.turns]
        if self.turns:
            last = self.turns[-1]
            resume = Resume(last.turn.start, last.state, seen=committed)
        else:
            resume = Resume(committed, self.state, seen=committed)
        return Parsed(
            sessions=list(self.sessions.values()),
            turns=turns,
            resume=resume,
            committed=committed,
            corrupt=corrupt,
            problems=problems or [],
        )

    @staticmethod
    def _finish(open_turn: OpenTurn) -> Turn:
        turn = open_turn.turn
        turn.answer = "\n\n".join(open_turn.answers)
        known = set(turn.files_read) | set(turn.files_edited)
        for text in (turn.prompt, turn.answer):
            for path in cited_paths(text, turn.cwd):
                if path not in known:
                    known.add(path)
                    turn.files_cited.append(path)
        return turn
