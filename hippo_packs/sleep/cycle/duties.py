"""Separation of duties: who may approve an operation.

- **No session approves what it wrote.** An operation's fragments, the brief that opened
  its sleep and the voice card its draft was written under each keep who wrote them
  (``by``, ``author``: :func:`hippo_core.acting_now`). An approval by the same agent
  session, the same MCP connection, or (where hippo cannot tell sessions apart) the same
  agent or client is refused, saying who may approve: another session (the one the ripple
  wakes), or a person at a terminal. A denial is taken from anyone: it lands nothing.
- **Some operations need a person**: a ``verbatim`` (kept word for word, so no reviewer's
  judgement of a rule's choice is left to weigh) and a core from a single fragment (one
  say-so, one author).
- **``review = "person"``** (as in force: :mod:`hippo_packs.sleep.records.review_setting`)
  keeps every approval for a person.

A record written before hippo kept its author has none, and binds nobody.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_core import describe_decider, same_author
from hippo_packs.sleep.cycle.review import Decision, ReviewError
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle

CREATES = ("new_core", "verbatim", "supersede")


def check(
    cycle: Cycle, draft: dict[str, Any], decisions: list[Decision], by: dict[str, Any]
) -> None:
    """Raise :class:`ReviewError` for the first approval ``by`` may not give; nothing of
    the review lands then."""
    from hippo_packs.sleep.records import review_setting

    draft_id = draft["id"]
    approving = [d for d in decisions if d.verdict == "approve"]
    if not approving or by.get("person"):
        return
    who = describe_decider(by)
    in_force = review_setting.in_force(cycle.workspace, cycle.settings.review)
    if in_force.value == "person":
        raise ReviewError(
            f"a person must approve drafts in this workspace ({in_force.why}), and this is "
            f"{who}: run `hippo review {draft_id}` in a terminal (denials may come from anyone)"
        )
    for decision in approving:
        op = draft["operations"][decision.op]
        need = needs_person(decision.kind, op, draft["operations"])
        if need:
            raise ReviewError(
                f"operation {decision.op} is {need}: a person must approve it, and this is "
                f"{who}: run `hippo review {draft_id}` in a terminal, or deny it"
            )
        for what, author in authors(cycle, draft, op):
            same = same_author(author, by)
            if same:
                raise ReviewError(
                    f"operation {decision.op}: {what} was written by {described(author)}, "
                    f"and this is {same}: no session approves what it wrote. Another session "
                    "may approve it (the one the ripple wakes), or a person: run "
                    f"`hippo review {draft_id}` in a terminal (denials may come from anyone)"
                )


def described(author: dict[str, Any]) -> str:
    """Who wrote something, in words: a handoff is its session's."""
    if author.get("way") == "handoff":
        return f"session {author.get('session')} (its handoff)"
    if author.get("way") == "hippo":
        return "hippo itself"
    return describe_decider(author)


def needs_person(kind: str, op: dict[str, Any], operations: list[dict[str, Any]]) -> str:
    """Why an approved operation of ``kind`` needs a person, or "". A core's fragments are
    its own sources and those of the draft's operations that attach to it."""
    if kind == "verbatim":
        return "a verbatim (kept word for word)"
    if kind not in CREATES:
        return ""
    backing = set(op.get("source_short_ids") or [])
    for other in operations:
        if other.get("target_op") == op.get("index"):
            backing |= set(other.get("source_short_ids") or [])
    return f"a {kind} from a single fragment" if len(backing) <= 1 else ""


def authors(
    cycle: Cycle, draft: dict[str, Any], op: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """Who wrote what ``op`` came from: each of its fragments (waiting or consumed), the
    brief its chain slept on, the voice card version its draft was written under."""
    found = []
    for fragment_id in op.get("source_short_ids") or []:
        if not store.plain(fragment_id):
            continue
        for folder in ("fragments", "pruned"):
            record = store.records_one(store.named(cycle.workspace, folder, fragment_id))
            if record is not None:
                if isinstance(record.get("by"), dict):
                    found.append((f"its fragment {fragment_id}", record["by"]))
                break
    brief_id = draft.get("brief_id_used")
    if store.plain(brief_id):
        brief = store.records_one(store.named(cycle.workspace, "briefs", brief_id))
        if brief is not None and isinstance(brief.get("author"), dict):
            found.append((f"the brief {brief_id}", brief["author"]))
    version = (draft.get("extra") or {}).get("model_voice")
    if version:
        card = store.records_one(store.folder(cycle.workspace, "voice.json")) or {}
        for kept in card.get("versions") or []:
            if (
                isinstance(kept, dict)
                and kept.get("version") == version
                and isinstance(kept.get("by"), dict)
            ):
                found.append((f"the voice card (version {version})", kept["by"]))
    return found
