"""Settling a verdict: a receipt for every one, and for a confirmed change, in order, the
receipt saying it is ``applying``, the applier chain (:mod:`hippo_core.dream.appliers`:
hippo's own ``note`` step, the snapshot and the atomic write, then the plugins' steps),
and the receipt saying it was applied, with each step's outcome.

A note is written only after a confirming verdict, and only if its bytes are those the
prompt was built from, or the note as earlier changes of the same run left it from those
bytes (the :class:`Lineage` a dream keeps), where the change is applied anew and checked by
its kind again; a new note (a kind that ``creates``) only if there is still nothing
at its path; and never a ``note`` that resolves outside ``notes_dir`` (a ``..`` part, an
absolute path, a symbolic link on the way that leads out), whatever checked the proposal
before. The receipt is written before the snapshot and the note, marked ``applying``;
if the process dies in between, :func:`reconcile` later compares the note with the
receipt's hashes and records which it is, old or new, and what became of each step of the
applier chain (a step that was running is ``interrupted``). A receipt's ``before`` is null when
there was no note (a new note has no snapshot, and reverting it deletes it) and when the
note was outside ``notes_dir``, so not read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.dream import appliers as chain_of
from hippo_core.dream import receipts
from hippo_core.dream.kinds import creates
from hippo_core.dream.model import Applier, Change, Proposal, ProposalKind, TurnText, Verdict
from hippo_core.dream.paths import outside_notes
from hippo_core.notes.edit import EditError, note_digest
from hippo_core.plugins.events import Event
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace

APPLIED, REJECTED, CHANGED, FAILED = "applied", "rejected", "note changed", "not applied"
#: A confirmed change that no longer applies to the note as an earlier change of the same
#: run left it: the dream proposes it again, against the note as it is, in its next run.
CARRIED = "carried"
APPLYING, INTERRUPTED = "applying", "interrupted"
#: A revert receipt's states: written ``reverting`` before the note, ``reverted`` after.
REVERTING, REVERTED = "reverting", "reverted"


class Lineage:
    """The versions of notes one dream run wrote, each from the one before: a proposal
    built before an earlier change of the run landed on its note is applied onto the note
    as the run left it, where nobody else has touched it since."""

    def __init__(self) -> None:
        self._before: dict[tuple[str, str], str] = {}

    def wrote(self, note: str, before: str, after: str) -> None:
        """The run changed ``note`` from the digest ``before`` to ``after``."""
        if before != after:
            self._before.setdefault((note, after), before)

    def leads(self, note: str, start: str, current: str) -> bool:
        """True when ``current`` is ``start`` changed by this run's own writes alone."""
        seen = {current}
        while current != start:
            found = self._before.get((note, current))
            if found is None or found in seen:
                return False
            seen.add(found)
            current = found
        return True


@dataclass
class Settled:
    """What became of one reviewed proposal: ``state``, ``applied``, ``detail``, ``receipt``,
    ``snapshot``."""

    proposal: Proposal
    verdict: Verdict
    state: str
    receipt: Path
    detail: str = ""
    snapshot: str = ""
    record: dict[str, Any] = field(default_factory=dict)
    carried: bool = False
    """The change did not land and the run proposes it again next time (a dream's
    ``carried`` change, or one whose note somebody edited while the run went on)."""

    @property
    def applied(self) -> bool:
        """True when the change is in the note now (its receipt says ``applied``)."""
        return self.state == APPLIED


def settle(
    workspace: Workspace,
    plugins: Plugins,
    proposal: Proposal,
    verdict: Verdict,
    *,
    prompt_digest: str,
    persona: str,
    invocation: dict[str, Any],
    lineage: Lineage | None = None,
    evidence: Sequence[TurnText] = (),
) -> Settled:
    """Write the receipt of a confirm or reject verdict, applying a confirmed change.

    With a ``lineage`` (a dream run's), a note that changed since the prompt only by the
    run's own earlier changes takes this change too, when the kind's check passes on the
    note as it is (with ``evidence``, the proposal's turns); when it does not, the change
    is ``carried``: its receipt says why, and the run proposes it again next time.

    A ``proposal.note`` that resolves outside ``notes_dir`` is neither read nor written: its
    receipt's ``before`` is null, and a confirmed change is ``not applied``, saying why. A
    ``proposal.id`` that is not a record id (it names the receipt's and the snapshot's
    files) is a :class:`~hippo_core.base.errors.HippoError`, and nothing is written."""
    receipts.checked_id(proposal.id, "proposal")
    note_path = workspace.notes_dir / proposal.note
    new_note = creates(plugins.kinds().get(proposal.kind))
    outside = outside_notes(workspace.notes_dir, proposal.note)
    try:
        raw = b"" if outside else note_path.read_bytes()
    except OSError:
        raw = b""  # deleted (or made unreadable) while the reviewer thought
    before: str | None = None if outside else note_digest(raw)
    if new_note and not os.path.lexists(note_path):
        before = None  # no note, as the prompt found it
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
        "reviews": reviews_of(verdict),
        "before": before,
        "after": None,
        "invocation": {"hippo": __version__, **invocation},
        "state": "",
        "detail": "",
        "applied": "",
        "snapshot": "",
    }

    def done(state: str, detail: str = "", carried: bool = False) -> Settled:
        record.update(state=state, detail=detail)
        receipts.write(path, record)
        return Settled(proposal, verdict, state, path, detail, record["snapshot"], record, carried)

    if verdict.verdict != "confirm":
        return done(REJECTED, verdict.problem or verdict.notes)
    event = {"proposal": proposal.id, "note": proposal.note, "receipt": str(path)}
    if outside:
        plugins.event(workspace, Event("not-applied", event))
        return done(FAILED, outside)
    kind: ProposalKind = plugins.kinds()[proposal.kind]
    chain = chain_of.chain(plugins)
    if new_note:
        return _create(workspace, plugins, proposal, verdict, kind, chain, event, done, record)
    rebased = False
    if note_digest(raw) != prompt_digest:
        if lineage is None or not lineage.leads(proposal.note, prompt_digest, note_digest(raw)):
            plugins.event(workspace, Event("not-applied", event))
            if not note_path.is_file():
                return done(CHANGED, "the note was deleted after the prompt was built")
            if lineage is None:
                return done(CHANGED, "the note was edited after the prompt was built; left alone")
            return done(
                CHANGED,
                "the note was edited after the prompt was built; left alone, and proposed "
                "again by the next run against the note as it is then",
                carried=True,
            )
        problems = kind.check(proposal, raw, list(evidence))
        if problems:
            plugins.event(workspace, Event("not-applied", event))
            why = "; ".join(problems)
            return done(
                CARRIED,
                f"an earlier change of this run to the note left it where this one no longer "
                f"applies ({why}); proposed again by the next run",
                carried=True,
            )
        rebased = True
    try:
        new = kind.apply(proposal, raw)
    except EditError as exc:
        plugins.event(workspace, Event("not-applied", event))
        return done(FAILED, f"the change no longer applies: {exc}")
    snapshot = receipts.folder(workspace, "snapshots") / proposal.id / proposal.note
    record.update(
        after=note_digest(new),
        snapshot=workspace.relative(snapshot),
        appliers=chain_of.steps(chain),
    )
    done(APPLYING)
    plugins.event(workspace, Event("applying", event))
    change = Change(
        workspace,
        proposal.note,
        note_path,
        note_digest(raw),
        record["after"],
        new,
        raw,
        path,
        proposal,
        verdict,
        snapshot,
    )
    chain[0].apply(change)
    record["appliers"][0]["state"] = chain_of.DONE
    record["applied"] = receipts.now()
    if lineage is not None:
        lineage.wrote(proposal.note, note_digest(raw), record["after"])
    detail = "applied onto the note as this run's earlier changes left it" if rebased else ""
    settled = _after_note(chain, change, record, done, detail)
    plugins.event(workspace, Event("applied", event))
    return settled


def reviews_of(verdict: Verdict) -> list[dict[str, Any]]:
    """Each reviewer's verdict, in order, as a receipt records them (one for a single
    reviewer; every step of a chain)."""
    from hippo_core.dream.review import step_record

    return [step_record(step) for step in (verdict.steps or (verdict,))]


def _after_note(
    chain: list[Applier],
    change: Change,
    record: dict[str, Any],
    done: Callable[..., Settled],
    detail: str,
) -> Settled:
    """The receipt says ``applied`` (the note holds the change); then the plugins' steps,
    the receipt saying which failed, when one did."""
    settled = done(APPLIED, detail)
    failed = chain_of.run_after_note(
        chain, change, record, lambda: receipts.write(change.receipt, record)
    )
    if failed:
        settled = done(APPLIED, "; ".join(filter(None, [detail, failed])))
    return settled


def _create(
    workspace: Workspace,
    plugins: Plugins,
    proposal: Proposal,
    verdict: Verdict,
    kind: ProposalKind,
    chain: list[Applier],
    event: dict[str, Any],
    done: Callable[..., Settled],
    record: dict[str, Any],
) -> Settled:
    """Write a new note, refusing to replace anything that appeared at its path."""
    note_path = workspace.notes_dir / proposal.note
    if record["before"] is not None:
        plugins.event(workspace, Event("not-applied", event))
        return done(CHANGED, "a note was created at this path after the prompt was built")
    problem = _unsafe_folders(workspace.notes_dir, proposal.note)
    new = b""
    if not problem:
        try:
            new = kind.apply(proposal, b"")
        except EditError as exc:
            problem = str(exc)
    if problem:
        plugins.event(workspace, Event("not-applied", event))
        return done(FAILED, f"the change no longer applies: {problem}")
    record.update(after=note_digest(new), appliers=chain_of.steps(chain))
    done(APPLYING)
    plugins.event(workspace, Event("applying", event))
    path = receipts.folder(workspace, "receipts") / f"{proposal.id}.json"
    change = Change(
        workspace,
        proposal.note,
        note_path,
        None,
        record["after"],
        new,
        b"",
        path,
        proposal,
        verdict,
    )
    try:
        chain[0].apply(change)
    except chain_of.NoteAppeared:
        record.update(after=None)
        why = "a note was created at this path while the change was applied"
        chain_of.settle_steps(record, note_done=False, why=why)
        plugins.event(workspace, Event("not-applied", event))
        return done(CHANGED, why)
    record["appliers"][0]["state"] = chain_of.DONE
    record["applied"] = receipts.now()
    settled = _after_note(chain, change, record, done, "")
    plugins.event(workspace, Event("applied", event))
    return settled


def _unsafe_folders(notes_dir: Path, note: str) -> str:
    """Why the folders on the way to a new note are no longer safe to write in, or ""."""
    current = notes_dir
    for part in note.split("/")[:-1]:
        current = current / part
        if current.is_symlink():
            return f"{part!r} on the way to the note is now a symbolic link"
        if current.exists() and not current.is_dir():
            return f"{part!r} on the way to the note is now a file"
    return ""


def reconcile(workspace: Workspace) -> list[tuple[str, str]]:
    """Settle receipts left ``applying`` or ``reverting`` by a process that died: say
    whether the note is the old or the new one, and what became of each step of the
    applier chain; and a receipt whose note was written but whose chain a process left
    unfinished. Returns ``(receipt id, state)`` for each one settled."""
    settled = []
    for path, record in receipts.all_in(receipts.folder(workspace, "receipts")):
        state = record.get("state")
        if state in (APPLIED, REVERTED) and chain_of.unfinished(record):
            stopped = chain_of.settle_steps(record, note_done=True)
            if stopped:
                record["detail"] = f"the run stopped while the applier {stopped} ran"
            receipts.write(path, record)
            said = f"{state} (the applier {stopped} was interrupted)" if stopped else state
            settled.append((str(record.get("id")), said))
            continue
        if state not in (APPLYING, REVERTING):
            continue
        done, what = (APPLIED, "run") if state == APPLYING else (REVERTED, "revert")
        note = str(record.get("note"))
        current: str | None = ""  # unreadable, or outside the notes (a hand-edited receipt)
        if not outside_notes(workspace.notes_dir, note):
            try:
                current = note_digest((workspace.notes_dir / note).read_bytes())
            except FileNotFoundError:
                current = None  # no note: what a new note's receipt has as before
            except OSError:
                current = ""
        if current != "" and "after" in record and current == record["after"]:
            record.update(state=done, applied=receipts.now(), detail="recovered after a crash")
        elif current == record.get("before", ""):
            detail = f"the {what} stopped before the note was written"
            record.update(state=INTERRUPTED, detail=detail)
        else:
            record.update(state=INTERRUPTED, detail=f"the {what} stopped; the note changed since")
        chain_of.settle_steps(record, note_done=record["state"] == done)
        receipts.write(path, record)
        settled.append((str(record.get("id")), record["state"]))
    return settled
