"""The applier: a receipt for every verdict, and for a confirmed change, in order, the
snapshot, the atomic write and the receipt saying it was applied.

A note is written only after a confirming verdict, and only if its bytes are those the
prompt was built from. The receipt is written before the snapshot and the note, marked
``applying``; if the process dies in between, :func:`reconcile` later compares the note
with the receipt's hashes and records which it is, old or new.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core import __version__
from hippo_core.atomic import atomic_write
from hippo_core.dream import receipts
from hippo_core.dream.model import Event, Proposal, ProposalKind, Verdict
from hippo_core.notes.edit import EditError, note_digest

if TYPE_CHECKING:
    from hippo_core.plugins import Plugins
    from hippo_core.workspace import Workspace

APPLIED, REJECTED, CHANGED, FAILED = "applied", "rejected", "note changed", "not applied"
APPLYING, INTERRUPTED = "applying", "interrupted"


@dataclass
class Settled:
    """What became of one reviewed proposal."""

    proposal: Proposal
    verdict: Verdict
    state: str
    receipt: Path
    detail: str = ""
    snapshot: str = ""
    record: dict[str, Any] = field(default_factory=dict)


def settle(
    workspace: Workspace,
    plugins: Plugins,
    proposal: Proposal,
    verdict: Verdict,
    *,
    prompt_digest: str,
    persona: str,
    invocation: dict[str, Any],
) -> Settled:
    """Write the receipt of a confirm or reject verdict, applying a confirmed change."""
    note_path = workspace.notes_dir / proposal.note
    try:
        raw = note_path.read_bytes()
    except OSError:
        raw = b""  # deleted (or made unreadable) while the reviewer thought
    path = receipts.folder(workspace, "receipts") / f"{proposal.id}.json"
    record: dict[str, Any] = {
        "id": proposal.id,
        "type": receipts.CHANGE,
        "proposal": f".hippo/proposals/{proposal.id}.json",
        "pass": proposal.pass_key,
        "note": proposal.note,
        "kind": proposal.kind,
        "evidence": proposal.as_dict()["evidence"],
        "reviewer": {"name": verdict.reviewer, "persona": persona},
        "verdict": verdict.verdict,
        "verdict_notes": verdict.notes,
        "before": note_digest(raw),
        "after": None,
        "invocation": {"hippo": __version__, **invocation},
        "state": "",
        "detail": "",
        "applied": "",
        "snapshot": "",
    }

    def done(state: str, detail: str = "") -> Settled:
        record.update(state=state, detail=detail)
        receipts.write(path, record)
        return Settled(proposal, verdict, state, path, detail, record["snapshot"], record)

    if verdict.verdict != "confirm":
        return done(REJECTED, verdict.problem or verdict.notes)
    event = {"proposal": proposal.id, "note": proposal.note, "receipt": str(path)}
    if note_digest(raw) != prompt_digest:
        plugins.event(workspace, Event("not-applied", event))
        if not note_path.is_file():
            return done(CHANGED, "the note was deleted after the prompt was built")
        return done(CHANGED, "the note was edited after the prompt was built; left alone")
    kind: ProposalKind = plugins.kinds()[proposal.kind]
    try:
        new = kind.apply(proposal, raw)
    except EditError as exc:
        plugins.event(workspace, Event("not-applied", event))
        return done(FAILED, f"the change no longer applies: {exc}")
    snapshot = receipts.folder(workspace, "snapshots") / proposal.id / proposal.note
    record.update(after=note_digest(new), snapshot=workspace.relative(snapshot))
    done(APPLYING)
    atomic_write(snapshot, raw)
    plugins.event(workspace, Event("applying", event))
    atomic_write(note_path, new)
    record["applied"] = receipts.now()
    settled = done(APPLIED)
    plugins.event(workspace, Event("applied", event))
    return settled


def reconcile(workspace: Workspace) -> list[tuple[str, str]]:
    """Settle receipts left ``applying`` by a process that died: say whether the note is
    the old or the new one. Returns ``(receipt id, state)`` for each one settled."""
    settled = []
    for path, record in receipts.all_in(receipts.folder(workspace, "receipts")):
        if record.get("state") != APPLYING:
            continue
        try:
            current = note_digest((workspace.notes_dir / str(record.get("note"))).read_bytes())
        except OSError:
            current = ""
        if current == record.get("after"):
            record.update(state=APPLIED, applied=receipts.now(), detail="recovered after a crash")
        elif current == record.get("before"):
            record.update(state=INTERRUPTED, detail="the run stopped before the note was written")
        else:
            record.update(state=INTERRUPTED, detail="the run stopped; the note changed since")
        receipts.write(path, record)
        settled.append((str(record.get("id")), record["state"]))
    return settled
