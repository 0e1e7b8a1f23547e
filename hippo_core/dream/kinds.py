"""The built-in kinds of change: ``replace`` (verify's corrections), ``append``
(consolidate's additions), whose edits keep every other byte of the note, and ``create``
(a new note, written whole)."""

from __future__ import annotations

from typing import Any

from hippo_core.dream.model import Proposal, TurnText
from hippo_core.dream.quotes import quotes
from hippo_core.notes.edit import EditError, append_text, replace_text
from hippo_core.notes.note import parse_note
from hippo_core.notes.text import CODE_FENCE, split_frontmatter

QUOTE_RULE = (
    "new quotes no evidence turn word for word: copy at least two words in a row, or one "
    "value (a number, path or option), from an evidence turn"
)


class Replace:
    """Replace ``old``, which occurs exactly once in the note's body, with ``new``."""

    name = "replace"
    fields: frozenset[str] = frozenset()

    def check(self, proposal: Proposal, note: bytes, evidence: list[TurnText]) -> list[str]:
        if not proposal.old:
            return ["a replace needs the old text it replaces; old is empty"]
        if proposal.new == proposal.old:
            return ["new is the same as old"]
        problems = []
        try:
            replace_text(note, proposal.old, proposal.new)
        except EditError as exc:
            problems.append(str(exc))
        size = len(proposal.old.encode("utf-8")) + len(proposal.new.encode("utf-8"))
        if size * 2 > len(note):
            problems.append(
                f"old and new together are {size} bytes, more than half the note "
                f"({len(note)} bytes): make the change smaller"
            )
        if not any(quotes(proposal.new, proposal.old, turn.text()) for turn in evidence):
            problems.append(QUOTE_RULE)
        return problems

    def apply(self, proposal: Proposal, note: bytes) -> bytes:
        return replace_text(note, proposal.old, proposal.new)


class Append:
    """Add ``new`` at the end of the note; ``old`` is empty."""

    name = "append"
    fields: frozenset[str] = frozenset()

    def check(self, proposal: Proposal, note: bytes, evidence: list[TurnText]) -> list[str]:
        problems = []
        if proposal.old:
            problems.append("an append has an empty old")
        if not proposal.new.strip():
            problems.append("new is empty: there is nothing to append")
        elif proposal.new.strip() in note.decode("utf-8", "replace"):
            problems.append("the note already has this text")
        return problems

    def apply(self, proposal: Proposal, note: bytes) -> bytes:
        return append_text(note, proposal.new)


#: The most bytes the text of a new note may have.
MAX_CREATE_BYTES = 8192


def creates(kind: Any) -> bool:
    """True for a kind that makes a new note (its ``creates`` attribute): the note must
    not exist yet, and the applier and ``hippo revert`` treat "no note" as its before."""
    return bool(getattr(kind, "creates", False))


class Create:
    """A new note: ``note`` does not exist yet, ``old`` is empty, ``new`` is the whole note
    (frontmatter with ``type`` and ``status``, a ``# `` title, the body)."""

    name = "create"
    fields: frozenset[str] = frozenset()
    creates = True

    def check(self, proposal: Proposal, note: bytes, evidence: list[TurnText]) -> list[str]:
        problems = []
        if proposal.old:
            problems.append("a create has an empty old")
        size = len(proposal.new.encode("utf-8"))
        if size > MAX_CREATE_BYTES:
            problems.append(f"new is {size} bytes; a new note may have at most {MAX_CREATE_BYTES}")
        problems += note_problems(proposal.note, proposal.new)
        if not any(quotes(proposal.new, "", turn.text()) for turn in evidence):
            problems.append(QUOTE_RULE)
        return problems

    def apply(self, proposal: Proposal, note: bytes) -> bytes:
        if note:
            raise EditError("the note exists already")
        return proposal.new.encode("utf-8")


def note_problems(path: str, text: str) -> list[str]:
    """Why ``text`` is not a whole note: frontmatter with a type and a status, a title."""
    parsed = parse_note(path, text.encode("utf-8"))
    unreadable = [p.detail for p in parsed.problems if p.code == "unreadable note"]
    if unreadable:
        return [f"new is not a note: {unreadable[0]}"]
    problems = []
    invalid = [p.detail for p in parsed.problems if p.code == "invalid frontmatter"]
    if not parsed.has_frontmatter:
        problems.append("new has no frontmatter: begin it with a --- block giving type and status")
    elif invalid:
        problems.append(f"new's frontmatter is invalid: {invalid[0]}")
    else:
        if not parsed.meta.type:
            problems.append("new's frontmatter has no type: give one, such as `type: decision`")
        if not parsed.meta.status:
            problems.append("new's frontmatter has no status: give one, such as `status: current`")
    if not _has_title(text):
        problems.append("new has no title: a line `# Title` after the frontmatter")
    return problems


def _has_title(text: str) -> bool:
    in_fence = False
    for line in text[split_frontmatter(text).body_start :].splitlines():
        if CODE_FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and line.startswith("# ") and line[2:].strip():
            return True
    return False
