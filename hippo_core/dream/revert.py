"""``hippo revert RECEIPT``: put a note back as it was before a change, with a receipt.

Refused when the note was edited after the change (``--force`` overrides). Crash-safe as
applying is: the revert receipt is written ``reverting`` before the note, and settled
``reverted`` after it; a revert killed in between is settled by the next run. The text the
change replaced is then confirmed by a person: verify sees it as true for as long as it
stays in the note, and the same change is refused if a model proposes it again. A change
whose receipt has no ``before`` (null: it created the note) is reverted by deleting the
note; it has no snapshot.

A receipt is a file a person can edit: the note it names is written or deleted only when it
resolves inside the notes folder (the applier's own check), and its snapshot and proposal
are read only from ``.hippo/snapshots/`` and ``.hippo/proposals/``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.dream import appliers, receipts
from hippo_core.dream.apply import APPLIED, REVERTED, REVERTING, reconcile
from hippo_core.dream.model import Change, Evidence, Proposal
from hippo_core.dream.paths import outside_notes
from hippo_core.notes.edit import note_digest
from hippo_core.plugins.events import Event
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


@dataclass(frozen=True)
class Reverted:
    receipt: Path
    note: str
    forced: bool
    detail: str = ""
    """The applier that failed to undo its part, when one did (the note is put back)."""


def find_receipt(workspace: Workspace, given: str) -> Path:
    """A receipt by id or by path (``.hippo/receipts/<id>.json``)."""
    folder = receipts.folder(workspace, "receipts")
    candidates = [Path(given), folder / given, folder / f"{given}.json"]
    for candidate in candidates:
        if candidate.suffix == ".json" and candidate.is_file():
            return candidate.resolve()
    raise HippoError(
        f"no receipt {given!r} in {workspace.relative(folder)}; "
        "give a receipt id or the path of its .json file"
    )


def revert(workspace: Workspace, plugins: Plugins, given: str, *, force: bool) -> Reverted:
    from hippo_core.files.leftovers import tidy

    reconcile(workspace)
    tidy(workspace)
    path = find_receipt(workspace, given)
    shown = workspace.relative(path)
    record = receipts.read(path, shown)
    if record.get("type") == receipts.REVERT:
        raise HippoError(f"{shown} is a revert receipt; revert the change it undid instead")
    if record.get("state") != APPLIED:
        raise HippoError(
            f"{shown}: its change was not applied ({record.get('state')}); nothing to revert"
        )
    receipt_id = str(record.get("id"))
    for earlier in receipts.reverts(workspace):
        if earlier.get("reverts") == receipt_id:
            raise HippoError(f"{shown} was already reverted by receipt {earlier.get('id')}")
    note = str(record.get("note"))
    problem = outside_notes(workspace.notes_dir, note)
    if problem:
        raise HippoError(f"{shown}: {problem}; hippo revert changes only notes")
    note_path = workspace.notes_dir / note
    created = receipts.created(record)
    snapshot = workspace.root / str(record.get("snapshot") or "")
    if not created and record.get("snapshot") and not _inside(workspace, "snapshots", snapshot):
        raise HippoError(
            f"{shown}: the snapshot {record.get('snapshot')} is not in .hippo/snapshots/; "
            "hippo revert restores only its own snapshots"
        )
    if not created and (not record.get("snapshot") or not snapshot.is_file()):
        raise HippoError(
            f"{shown}: the snapshot {record.get('snapshot')} is not on this machine "
            "(snapshots stay where the change was dreamed); use git to undo the change here"
        )
    try:
        current: bytes | None = note_path.read_bytes()
    except FileNotFoundError:
        current = None
    now = None if current is None else note_digest(current)
    if now != record.get("after") and not force:
        if current is None and created:
            raise HippoError(
                f"{workspace.relative(note_path)} was deleted after the change of {shown}; "
                "pass --force to record the revert anyway"
            )
        raise HippoError(
            f"{workspace.relative(note_path)} was edited after the change of {shown}; "
            "reverting would lose those edits: pass --force to revert anyway"
        )
    previous = None if created else snapshot.read_bytes()
    proposal = _proposal(workspace, record)
    revert_id = receipts.new_id()
    out = receipts.folder(workspace, "receipts") / f"{revert_id}.json"
    # Crash-safe as a change is: the receipt first, saying ``reverting``; then the note; then
    # the receipt settled. A kill in between leaves a receipt the next run settles by the
    # note's hash (:func:`~hippo_core.dream.apply.reconcile`).
    revert_record = {
        "id": revert_id,
        "type": receipts.REVERT,
        "state": REVERTING,
        "reverts": receipt_id,
        "note": note,
        "before": now,
        "after": None if previous is None else note_digest(previous),
        "forced": force and now != record.get("after"),
        "confirmed": proposal.get("old", "") if proposal.get("kind") == "replace" else "",
        "undone": proposal.get("new", ""),
        "applied": "",
        "invocation": {"hippo": __version__, "command": "hippo revert"},
    }
    chain = appliers.chain(plugins)
    steps = appliers.steps(chain)
    revert_record["appliers"] = steps
    receipts.create_once(out, revert_record)
    change = Change(
        workspace,
        note,
        note_path,
        now,
        None if previous is None else note_digest(previous),
        previous or b"",
        current or b"",
        out,
        _as_proposal(proposal),
        reverts=receipt_id,
    )
    chain[0].revert(change)  # the note put back (or deleted, for a change that created it)
    steps[0]["state"] = appliers.DONE
    revert_record.update(state=REVERTED, applied=receipts.now())
    receipts.write(out, revert_record)
    failed = appliers.run_after_note(
        chain, change, revert_record, lambda: receipts.write(out, revert_record), reverting=True
    )
    if failed:
        revert_record["detail"] = failed
        receipts.write(out, revert_record)
    plugins.event(workspace, Event("reverted", {"receipt": str(out), "note": note}))
    return Reverted(out, note, force, failed)


def _as_proposal(record: dict[str, object]) -> Proposal | None:
    """The proposal a change's record holds, when it is whole enough to be one."""
    evidence = record.get("evidence") or []
    if not isinstance(evidence, list):
        return None
    try:
        return Proposal(
            id=str(record["id"]),
            pass_key=str(record.get("pass", "")),
            note=str(record["note"]),
            kind=str(record["kind"]),
            old=str(record.get("old", "")),
            new=str(record.get("new", "")),
            reason=str(record.get("reason", "")),
            evidence=tuple(Evidence(str(e["session"]), int(e["ordinal"])) for e in evidence),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _inside(workspace: Workspace, name: str, path: Path) -> bool:
    """Whether ``path`` resolves below ``.hippo/<name>/`` (symbolic links followed)."""
    top = os.path.realpath(receipts.folder(workspace, name))
    found = os.path.realpath(path)
    return found != top and os.path.commonpath([top, found]) == top


def _proposal(workspace: Workspace, record: dict[str, object]) -> dict[str, object]:
    path = workspace.root / str(record.get("proposal"))
    if not _inside(workspace, "proposals", path):
        return {}
    try:
        return receipts.read(path, workspace.relative(path))
    except HippoError:
        return {}
