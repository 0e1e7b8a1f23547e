"""The two built-in kinds of change: ``replace`` (verify's corrections) and ``append``
(consolidate's additions). Their edits keep every other byte of the note."""

from __future__ import annotations

from hippo_core.dream.model import Proposal, TurnText
from hippo_core.dream.quotes import quotes
from hippo_core.notes.edit import EditError, append_text, replace_text

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
