"""The kinds of change an approved operation lands as, through hippo's applier.

``new_core`` and ``verbatim`` write a new core; ``supersede`` writes the new core and then
marks the old one (``superseded_by``, a second change with its own receipt); ``attach``
adds a dated satellite to a core, counts the evidence, and, when the reviewer let it,
replaces the core's words; ``evidence`` counts a repeated fact (a fragment in the core's own
words) and changes no words. Each is a proposal with a receipt and a snapshot, so
``hippo revert`` undoes it like any other change.
"""

from __future__ import annotations

from typing import Any

from hippo_core import EditError, Proposal, TurnText
from hippo_packs.sleep.records import cores


class _NewCore:
    fields: frozenset[str] = frozenset({"draft", "op", "fragments", "topic"})
    creates = True

    def __init__(self, name: str) -> None:
        self.name = name

    def check(self, proposal: Proposal, note: bytes, evidence: list[TurnText]) -> list[str]:
        if cores.parse_core(proposal.note, proposal.new.encode("utf-8")) is None:
            return ["new is not a core note"]
        return []

    def apply(self, proposal: Proposal, note: bytes) -> bytes:
        if note:
            raise EditError("a note exists at this path already")
        return proposal.new.encode("utf-8")


class Attach:
    """Add ``new`` as a satellite dated ``extra["date"]``; ``extra["restated_content"]``,
    when given, replaces the core's words (the first wording is kept as
    ``restated_from``)."""

    name = "attach"
    fields: frozenset[str] = frozenset(
        {"draft", "op", "fragments", "date", "evidence_count", "restated_content", "topic"}
    )

    def check(self, proposal: Proposal, note: bytes, evidence: list[TurnText]) -> list[str]:
        if cores.parse_core(proposal.note, note) is None:
            return [f"{proposal.note} is not a core"]
        if not proposal.new.strip() and not proposal.extra.get("restated_content"):
            return ["an attach with no episode text and no rewording does nothing"]
        return []

    def apply(self, proposal: Proposal, note: bytes) -> bytes:
        core = cores.parse_core(proposal.note, note)
        if core is None:
            raise EditError(f"{proposal.note} is no longer a core")
        extra: dict[str, Any] = proposal.extra
        date = str(extra.get("date"))
        updates: dict[str, Any] = {
            "evidence_count": core.evidence_count + max(1, int(extra.get("evidence_count", 1))),
            "updated": date,
        }
        restated = str(extra.get("restated_content") or "")
        try:
            if restated and restated.strip() != core.text.strip():
                if not core.meta.get("restated_from"):
                    updates["restated_from"] = core.text
                updates["restated_at"] = date
                note = cores.restate(note, restated)
            if proposal.new.strip():
                note = cores.add_satellite(note, date, proposal.new)
            return cores.set_meta(note, updates)
        except (ValueError, UnicodeDecodeError) as exc:
            raise EditError(f"the core cannot be edited: {exc}") from None


class CountEvidence:
    """Count ``extra["evidence_count"]`` more pieces of evidence for the core, as of
    ``extra["date"]``: a repeated fact, whose words (``new``, kept for the record) the core
    has already, so no satellite is written."""

    name = "evidence"
    fields: frozenset[str] = frozenset({"fragments", "date", "evidence_count"})

    def check(self, proposal: Proposal, note: bytes, evidence: list[TurnText]) -> list[str]:
        if cores.parse_core(proposal.note, note) is None:
            return [f"{proposal.note} is not a core"]
        return []

    def apply(self, proposal: Proposal, note: bytes) -> bytes:
        core = cores.parse_core(proposal.note, note)
        if core is None:
            raise EditError(f"{proposal.note} is no longer a core")
        counted = max(1, int(proposal.extra.get("evidence_count", 1)))
        updates: dict[str, Any] = {
            "evidence_count": core.evidence_count + counted,
            "updated": str(proposal.extra.get("date")),
        }
        try:
            return cores.set_meta(note, updates)
        except (ValueError, UnicodeDecodeError) as exc:
            raise EditError(f"the core cannot be edited: {exc}") from None


class MarkSuperseded:
    """The second half of a supersede: the old core gains ``superseded_by``."""

    name = "superseded"
    fields: frozenset[str] = frozenset({"draft", "op", "superseded_by"})

    def check(self, proposal: Proposal, note: bytes, evidence: list[TurnText]) -> list[str]:
        if cores.parse_core(proposal.note, note) is None:
            return [f"{proposal.note} is not a core"]
        return []

    def apply(self, proposal: Proposal, note: bytes) -> bytes:
        try:
            updates = {"superseded_by": proposal.extra["superseded_by"], "status": "superseded"}
            return cores.set_meta(note, updates)
        except (ValueError, UnicodeDecodeError) as exc:
            raise EditError(f"the core cannot be edited: {exc}") from None


KINDS = (_NewCore("new_core"), _NewCore("verbatim"), _NewCore("supersede"), Attach())
ALL_KINDS = (*KINDS, MarkSuperseded(), CountEvidence())
