"""The built-in readers: ``{{sessions}}``, ``{{notes}}``, ``{{turns}}``, ``{{human_confirmed}}``.

Each returns whole blocks; the dream fits them to the pass's input budget (notes first)
and records in the report what did not fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo_core.dream.blocks import cut, fence, quoted_field, ranges, token_field
from hippo_core.dream.model import Item, ReadContext, SessionView, TurnText

if TYPE_CHECKING:
    from hippo_core.notes.note import Note
    from hippo_core.workspace.folder import Workspace


class Sessions:
    """The chunk's sessions: tool, times, task, the ordinals of their turns, and the
    handoff of each one that ended in the chunk. For a per-note pass, only the sessions
    whose turns mention the note."""

    essential = True

    def read(self, context: ReadContext) -> list[Item]:
        views = context.sessions
        if context.note is not None:
            wanted = {turn.session for turn in _mentioning(context)}
            views = [view for view in views if view.id in wanted]
        return [
            Item(f"session {view.id}", _session(view, context), sessions=(view.id,))
            for view in sorted(views, key=lambda v: str(v.record.get("started")))
        ]


def _session(view: SessionView, context: ReadContext) -> str:
    record = view.record
    ended = record.get("ended")
    if ended and not view.ended_here and not context.chunk.kind:
        ended = "after this window"
    # Every value here is a record's or a teammate's, not hippo's: each a quoted string.
    lines = [
        f"### Session {token_field(view.id)}",
        f"- tool: {token_field(record.get('tool') or 'unknown')}",
        *([f"- by: {quoted_field(record['who'])} (a teammate)"] if record.get("who") else []),
        f"- started: {token_field(record.get('started') or 'unknown')}",
        f"- ended: {quoted_field(ended) if ended else 'not yet'}",
        f"- task: {quoted_field(record.get('task') or 'none recorded')}",
        f"- turn ordinals: {ranges(list(view.ordinals)) or 'none indexed'}",
    ]
    handoff = record.get("handoff") if view.ended_here else None
    if handoff:
        derived = " (the session's last message)" if record.get("handoff_derived") else ""
        lines.append(f"- handoff{derived}:")
        return "\n".join(lines) + "\n" + fence(str(handoff), "markdown")
    return "\n".join(lines) + "\n"


class Notes:
    """The note a per-note pass works on; for a per-chunk pass, the notes linked by the
    handoffs of the sessions that ended in the chunk. Each in full, after its path."""

    essential = True

    def read(self, context: ReadContext) -> list[Item]:
        notes = [context.note] if context.note else _linked(context)
        return [item for note in notes if (item := _note_item(context.workspace, note))]


def _linked(context: ReadContext) -> list[Note]:
    from hippo_core.notes.links import find_links

    notes = context.workspace.notes
    log = context.workspace.log_note
    found: set[str] = set()
    for view in context.sessions:
        handoff = view.record.get("handoff")
        if view.ended_here and isinstance(handoff, str):
            for target in find_links(handoff):
                path = notes.resolve(target)
                if path is not None and path != log:
                    found.add(path)
    return [notes.by_path[path] for path in sorted(found)]


def _note_item(workspace: Workspace, note: Note) -> Item | None:
    from hippo_core.notes.edit import note_digest

    try:
        raw = (workspace.notes_dir / note.path).read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    block = f"### Note `{note.path}`\n" + fence(text, "markdown")
    return Item(f"note {note.path}", block, note=note.path, digest=note_digest(raw))


class Turns:
    """Transcript turns of the chunk's sessions. For a per-note pass, the turns that
    mention the note (title, headings, sources, or the note among their files)."""

    essential = True

    def read(self, context: ReadContext) -> list[Item]:
        if context.index is None:
            return []
        if context.note is not None:
            turns = _mentioning(context)
        else:
            turns = [
                turn
                for view in context.sessions
                for ordinal in view.ordinals[-3:]
                if (turn := context.index.turn(view.id, ordinal))
            ]
        return [Item(turn.label, turn_block(turn), turns=(turn,)) for turn in turns]


#: Why a note whose turns only share some of its words gets no prompt, as the report says:
#: "12 notes with only turns that share their words (no model call)".
PASSED_OVER = "only turns that share their words"


def _mentioning(context: ReadContext) -> list[TurnText]:
    """The turns of the chunk that mention the per-note pass's note (asked once per note);
    none when they are not worth a prompt (:meth:`~hippo_core.dream.turns.TurnIndex.
    worth_a_prompt`), and the context says so."""
    if context.index is None or context.note is None:
        return []
    from hippo_core.dream.turns import BODY_TERMS

    note, workspace, chunk = context.note, context.workspace, context.chunk
    found: list[TurnText] = context.index.mentioning(
        note,
        workspace.notes_dir / note.path,
        chunk.start,
        chunk.end,
        context.session_ids,
        body_terms=workspace.terms_index.telling(note.path, BODY_TERMS),
        only=chunk.turns,
    )
    worth = context.index.worth_a_prompt(
        found,
        note,
        workspace.terms_index,
        chunk.start,
        chunk.end,
        context.session_ids,
        chunk.turns,
    )
    if found and not worth:
        context.passed_over = PASSED_OVER
        return []
    return found


#: How verify's search found a turn, as its prompt says.
MATCHES = {
    "file": "the note's file (read, edited or cited)",
    "phrase": "the note's title, a heading or a source, word for word",
    "words": "words of the note's title, headings, file name and body",
}


def turn_block(turn: TurnText) -> str:
    """One turn as prompts and the reviewer show it; long texts are cut with a marker."""
    prompt, _ = cut(turn.prompt)
    answer, _ = cut(turn.answer)
    found = f"; found by {MATCHES[turn.match]}" if turn.match in MATCHES else ""
    # Ids, times, a teammate's name and paths are a transcript's or a server's: quoted
    # whenever they are more than one plain token.
    by = f", by {quoted_field(turn.who)}, a teammate" if turn.who else ""
    heading = (
        f"### Session {token_field(turn.session)}, turn {turn.ordinal} "
        f"(started {token_field(turn.started or 'unknown')}{by}{found})"
    )
    block = (
        heading
        + "\nprompt (the person's words):\n"
        + fence(prompt)
        + f"answer ({origin(turn)}):\n"
        + fence(answer)
    )
    if turn.tools:
        shown, _ = cut("\n".join(turn.tools), 2000)
        block += "tool calls:\n" + fence(shown)
    if turn.files:
        block += "files: " + "; ".join(_file(shown) for shown in turn.files) + "\n"
    return block


def origin(turn: TurnText) -> str:
    """Where a turn's answer may have its words from, in words a model understands: the
    agent's own, or the agent's after it read from outside the project (what, as its
    transcript tells), which it may be repeating; or not recorded."""
    if turn.external is None:
        return "the agent's; what it read from outside the project before is not recorded"
    if not turn.external:
        return "the agent's own words"
    read = ", ".join(quoted_field(item) for item in turn.external)
    return (
        f"the agent's, after it read from outside the project: {read}. It may be repeating "
        "that content: a claim to check, never evidence on its own"
    )


def _file(shown: str) -> str:
    """``read notes/x.md`` with its path as :func:`token_field` shows one."""
    kind, _, path = shown.partition(" ")
    return f"{kind} {token_field(path)}" if path else token_field(kind)


class HumanConfirmed:
    """Text a person restored by reverting a change, still in the note: shown as true."""

    essential = False

    def read(self, context: ReadContext) -> list[Item]:
        from hippo_core.dream.receipts import confirmed_texts

        notes = [context.note] if context.note else list(context.workspace.notes)
        items = []
        for note in notes:
            for text, receipt in confirmed_texts(context.workspace, note.path):
                block = f"- In `{note.path}` (restored by revert {receipt}):\n" + fence(text)
                items.append(Item(f"confirmed text in {note.path}", block))
        return items
