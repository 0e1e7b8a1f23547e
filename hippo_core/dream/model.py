"""What dreaming passes between its steps: passes, chunks, prompt inputs, model calls,
proposals and verdicts. Plain dataclasses; pydantic stays at the file and model edges.

The protocols here are what plugins implement: a :class:`Reader` fills a placeholder, a
:class:`ModelBackend` answers a prompt, a :class:`ProposalKind` checks and applies one kind
of change, a :class:`Validator` adds a check, a :class:`Reviewer` gives a verdict (a pass
may name a chain of them), an :class:`Applier` takes part in landing a confirmed change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hippo_core.base.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.notes.note import Note
    from hippo_core.workspace.folder import Workspace


class ModelUnreachable(HippoError):
    """The model could not answer at all (not running, a timeout, an error exit).

    The run fails rather than counting the missing answer as a rejection. ``status`` is
    the HTTP status a server answered with, when it answered one.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Pass:
    """One pass file of a pack, validated. Paths are relative to the pack's folder."""

    pack: str
    name: str
    root: Path
    prompt: str
    reads: tuple[str, ...]
    reviewer: str
    per_note: bool
    input_budget_bytes: int = 200_000
    review: str = "model"
    """The registered reviewer that gives verdicts (``model``, ``queue``), or the chain of
    them, comma-separated, in order (``secret-scan, model``)."""
    overlays: tuple[Path, ...] = ()
    """The folders of the themes over the pack, the one that wins first."""
    system: str = ""
    """The proposer's system prompt file, relative to the pack: the pass's instructions,
    sent apart from the material its prompt carries; empty: all in the prompt."""

    @property
    def roots(self) -> tuple[Path, ...]:
        """Where the pass's prompts and personas are looked for, in order: themes, pack."""
        return (*self.overlays, self.root)

    @property
    def reviews(self) -> tuple[str, ...]:
        """The reviewers a proposal goes to, in order; each must confirm."""
        return tuple(name.strip() for name in self.review.split(","))

    @property
    def key(self) -> str:
        """``<pack>/<name>``: how reports, proposals and receipts name the pass."""
        return f"{self.pack}/{self.name}"

    @property
    def file(self) -> Path:
        return self.root / "passes" / f"{self.name}.toml"


@dataclass(frozen=True)
class Chunk:
    """A stretch of the dream window, at most 24 hours, in UTC: ``start <= t < end``.

    A chunk with ``turns`` is dreamed besides the window: the turns that reached the index
    after their time was dreamed (``kind`` ``late``), or the evidence of proposals carried
    from the last run (``carried``); ``start`` and ``end`` then span those turns only."""

    start: datetime
    end: datetime
    turns: frozenset[tuple[str, int]] | None = None
    """The only turns (session, ordinal) the chunk holds; None for a stretch of the window."""
    kind: str = ""
    """``late`` or ``carried`` for a chunk of ``turns``; empty for a stretch of the window."""

    def label(self) -> str:
        span = f"{_iso(self.start)} to {_iso(self.end)}"
        return f"{self.kind} turns of {span}" if self.kind else span


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class TurnText:
    """One indexed turn as the readers, validators and reviewer see it."""

    session: str
    ordinal: int
    started: str | None
    prompt: str
    answer: str
    tools: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    match: str = ""
    """How verify's search found it: ``file`` (it read, edited or cited the note or a
    source), ``phrase`` (the title, a heading or a source word for word) or ``words``."""
    who: str = ""
    """Whose session it was, when it came from a team index; empty for this machine's."""
    external: tuple[str, ...] | None = None
    """What the agent read from outside the project during the turn, before it answered, in
    order: one short description per page fetched or search made (``web: WebFetch
    https://example.com/install``), MCP tool called (``MCP: github get_issue``), file read
    outside the git work trees of the turn's folder (``file outside the project:
    ~/Downloads/README.md``) or sub-agent that did one of these (``sub-agent (Agent): web:
    WebFetch``); at most 20, and a last ``N more not listed``. ``()``: it read nothing from
    outside, as far as its agent's transcript tells. None: not recorded (a turn indexed
    before hippo kept this, or from a source that does not tell)."""

    @property
    def label(self) -> str:
        return f"session {self.session} turn {self.ordinal}"

    def text(self) -> str:
        """Everything a quote may be taken from: prompt, answer, tool calls, files."""
        return "\n".join((self.prompt, self.answer, *self.tools, *self.files))


@dataclass(frozen=True)
class Item:
    """One block a reader offers for a prompt; it goes in whole or not at all.

    ``note`` names the note (relative to ``notes_dir``) whose full text this block shows:
    only such notes may be changed by the proposals of that prompt. ``digest`` is the
    hash of the note's bytes as shown, which the applier compares before writing.
    """

    label: str
    text: str
    note: str | None = None
    digest: str | None = None
    turns: tuple[TurnText, ...] = ()
    sessions: tuple[str, ...] = ()
    """The sessions (ids) this block shows: their turns in the chunk may be evidence."""

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


@dataclass(frozen=True)
class SessionView:
    """A session of the workspace as one chunk sees it: its record, its indexed turns'
    ordinals, and when it was last active."""

    record: dict[str, Any]
    ordinals: tuple[int, ...]
    last: datetime | None
    ended_here: bool
    """It ended inside this chunk, so its handoff belongs to this chunk."""

    @property
    def id(self) -> str:
        return str(self.record["id"])


@dataclass
class ReadContext:
    """What a reader may look at for one prompt: the chunk, the note (per-note passes),
    the chunk's sessions and the transcript index."""

    workspace: Workspace
    pass_: Pass
    chunk: Chunk
    note: Note | None
    sessions: list[SessionView]
    index: Any
    """hippo's own transcript index (None when there is none yet); a reader reads turns
    through :meth:`turn` and :meth:`turns`."""
    session_ids: frozenset[str] = frozenset()
    """The ids of ``sessions``."""
    passed_over: str = ""
    """Set by an essential reader that found something, but nothing worth a model call (a
    note whose turns only share some of its words): why, as the report counts the unit
    instead of ``no <reader>``."""

    def turn(self, session: str, ordinal: int) -> TurnText | None:
        """One indexed turn, as the validators and the reviewer see it; None when there is
        no index, or no such turn."""
        if self.index is None:
            return None
        found: TurnText | None = self.index.turn(session, ordinal)
        return found

    def turns(self) -> list[TurnText]:
        """The chunk's turns: every indexed turn of its sessions that started inside it (a
        chunk of chosen turns, those turns), session by session, in order."""
        from hippo_core.dream.state import parse_time

        found = []
        for view in self.sessions:
            for ordinal in view.ordinals:
                if self.chunk.turns is not None and (view.id, ordinal) not in self.chunk.turns:
                    continue
                turn = self.turn(view.id, ordinal)
                if turn is None:
                    continue
                started = parse_time(turn.started)
                outside = started is not None and not self.chunk.start <= started < self.chunk.end
                if self.chunk.turns is None and outside:
                    continue
                found.append(turn)
        return found


class Reader(Protocol):
    """Fills the placeholder ``{{<name>}}``. ``essential`` readers that find nothing mean
    the prompt has nothing to work on, so no model call is made."""

    essential: bool

    def read(self, context: ReadContext) -> list[Item]: ...


@dataclass(frozen=True)
class Call:
    """One model call, as reports and receipts record it."""

    backend: str
    bytes_in: int
    bytes_out: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class Reply:
    """A model's answer. ``too_large``: it exceeded what hippo reads, and ``text`` is empty."""

    text: str
    call: Call
    too_large: bool = False
    cut_off: bool = False
    """The model stopped at its token cap (``finish_reason: length``): the text is partial."""


class ModelBackend(Protocol):
    """Sends a prompt (and an optional system prompt) to a model, returns its reply.

    ``json_schema``, when given, is the JSON schema the answer must meet: a backend whose
    server can constrain its output to it sends it (the OpenAI backend, as
    ``response_format``); one that cannot ignores it, and the caller checks the answer
    as it would any other. Raises :class:`ModelUnreachable` when the model cannot answer
    at all.
    """

    name: str

    def complete(
        self, prompt: str, *, system: str | None = None, json_schema: dict[str, Any] | None = None
    ) -> Reply: ...


@dataclass(frozen=True)
class Evidence:
    """A turn a proposal cites: its session and ordinal (``who``: whose turn, in a team)."""

    session: str
    ordinal: int
    who: str = ""
    """Whose turn it is, from the team index (filled in once the turn is found)."""

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"session": self.session, "ordinal": self.ordinal}
        return {**found, "who": self.who} if self.who else found


@dataclass(frozen=True)
class Proposal:
    """A change a model proposed, after its shape was checked."""

    id: str
    pass_key: str
    note: str
    kind: str
    old: str
    new: str
    reason: str
    evidence: tuple[Evidence, ...]
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys a plugin's kind adds to the proposal."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "pass": self.pass_key,
            "note": self.note,
            "kind": self.kind,
            "old": self.old,
            "new": self.new,
            "reason": self.reason,
            "evidence": [e.as_dict() for e in self.evidence],
            **self.extra,
        }


class ProposalKind(Protocol):
    """One kind of change (``replace``, ``append``, ``create``): its own keys, checks and edit.

    A kind that makes a new note also has ``creates = True``: the note must not exist, its
    ``note`` bytes are empty in :meth:`check` and :meth:`apply`, and a revert deletes it.
    """

    name: str
    fields: frozenset[str]
    """Keys beyond the common ones that a proposal of this kind may carry."""

    def check(self, proposal: Proposal, note: bytes, evidence: list[TurnText]) -> list[str]:
        """Problems with the proposal against the note's bytes; empty when it is valid."""
        ...

    def apply(self, proposal: Proposal, note: bytes) -> bytes:
        """The note's new bytes (raises :class:`~hippo_core.notes.edit.EditError`)."""
        ...


@dataclass
class CheckContext:
    """What validators check a proposal against."""

    workspace: Workspace
    prompt_notes: dict[str, str]
    """Notes whose full text went into the prompt, with their digests at that time."""
    turn: Any
    """``turn(session, ordinal) -> TurnText | None``: a lookup in the index."""
    kinds: dict[str, ProposalKind]
    confirmed: Any
    """``confirmed(note) -> list[str]``: text humans confirmed, still in the note."""
    prompt_evidence: frozenset[tuple[str, int]] | None = None
    """The turns (session, ordinal) the prompt showed, itself or through a session it
    showed; None when whoever checks has no prompt to bind the evidence to."""
    session_text: Any = None
    """``session_text(session) -> str``: what the prompt showed of a session (its times,
    its task, and its handoff when it ended in the chunk), which a change may draw its
    words from as it may from the turns; None: nothing beyond the turns."""


class Validator(Protocol):
    """A check every proposal must pass before review; returns its problems."""

    name: str

    def check(self, proposal: Proposal, context: CheckContext) -> list[str]: ...


VerdictName = Literal["confirm", "reject", "pending"]


@dataclass(frozen=True)
class Verdict:
    """A reviewer's answer. ``pending`` waits for ``hippo review``."""

    reviewer: str
    verdict: VerdictName
    notes: str = ""
    call: Call | None = None
    problem: str = ""
    """Why a reply was counted as a rejection (not the one JSON object asked for)."""
    reply: str = ""
    """The reviewer's reply as it came (kept whole up to 64 KiB)."""
    steps: tuple[Verdict, ...] = ()
    """A pass's chain of reviewers: each one's verdict, in order; the last one decided (the
    first that did not confirm, or the last of the chain). Empty for one reviewer."""


@dataclass(frozen=True)
class ReviewRequest:
    """What a reviewer is shown: the persona, the note, the change and the evidence turns.

    Never the proposing run's reasoning or the proposal's ``reason``.
    """

    workspace: Workspace
    pass_: Pass
    persona: str
    note_path: str
    note_text: str
    proposal: Proposal
    evidence: tuple[TurnText, ...]
    backend: ModelBackend | None
    handoffs: tuple[tuple[str, str], ...] = ()
    """(session id, handoff) of each evidence session whose handoff the proposer was shown:
    what an appended text most often comes from, and only that session's own say-so."""


class Reviewer(Protocol):
    """Gives the verdict on one proposal; ``name`` is what a pass's ``review`` names."""

    name: str

    def review(self, request: ReviewRequest) -> Verdict: ...


@dataclass(frozen=True)
class Change:
    """A confirmed change as the appliers see it, one at a time, in order: first hippo's
    own (``note``, the atomic write), then the plugins'. In a revert the same appliers
    are asked to undo it, and ``reverts`` names the receipt of the change undone."""

    workspace: Workspace
    note: str
    """The note's path relative to ``notes_dir``."""
    path: Path
    """The note's file."""
    before: str | None
    """The digest of the note's bytes before (None: there was no note)."""
    after: str | None
    """The digest after (None: the note is deleted, as reverting a new note does)."""
    data: bytes
    """The note's bytes after (empty when it is deleted)."""
    previous: bytes
    """The note's bytes before (empty when there was none)."""
    receipt: Path
    """The receipt that records this change (or this revert), step by step."""
    proposal: Proposal | None = None
    """The proposal confirmed; in a revert, the one undone, when its record is there."""
    verdict: Verdict | None = None
    snapshot: Path | None = None
    """Where hippo keeps the note as it was, for ``hippo revert`` (None for a new note)."""
    reverts: str = ""
    """In a revert: the id of the change's receipt; empty when applying."""


class Applier(Protocol):
    """One step of landing a confirmed change, after hippo wrote the note (``note``, the
    first step, is hippo's own atomic write). ``apply`` runs once the note holds the change;
    ``revert`` once ``hippo revert`` has put the note back. Either fails by raising: the
    receipt says which step failed and why, the steps after it do not run, and the note
    stays as the steps before left it."""

    name: str

    def apply(self, change: Change) -> None: ...

    def revert(self, change: Change) -> None: ...
