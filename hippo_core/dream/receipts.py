"""Receipts, proposals and reviews on disk: ``.hippo/receipts/<id>.json`` and friends.

Ids sort by time (``20261130T061502123456Z-a1b2``), so listing a folder lists history.
An id names a file, so one read from a record (a hand-edited proposal, a plugin's) is used
only when it is a plain record id (:func:`is_record_id`). Proposals are created once and
never overwritten; receipts are rewritten only while the change they record is being
applied.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.base.clock import stamp, utc_now
from hippo_core.base.errors import HippoError
from hippo_core.files.atomic import atomic_write
from hippo_core.files.jsonfiles import json_objects_in, read_json_object

if TYPE_CHECKING:
    from hippo_core.dream.model import Proposal
    from hippo_core.workspace.folder import Workspace

CHANGE, REVERT = "change", "revert"


def new_id() -> str:
    """A fresh id: the UTC time to the microsecond, then four random hex digits."""
    return utc_now().strftime("%Y%m%dT%H%M%S%fZ") + "-" + secrets.token_hex(2)


def now() -> str:
    return stamp()


#: A record id: a letter or a digit, then letters, digits, ``_``, ``.`` and ``-`` (hippo's
#: ``20261130T061502123456Z-a1b2``, the sleep pack's ``d...-op0``), never ``..``.
RECORD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
RECORD_ID_RULE = "a letter or digit, then letters, digits, '_', '.' or '-', no '..'"


def is_record_id(value: object) -> bool:
    """Whether ``value`` may name a record's file (``<id>.json``): no path, no ``..``."""
    return isinstance(value, str) and bool(RECORD_ID.fullmatch(value)) and ".." not in value


def checked_id(value: object, what: str) -> str:
    """``value`` when it is a record id; else one error naming ``what`` holds it."""
    if not is_record_id(value):
        raise HippoError(f"{what}: id {value!r} is not a record id ({RECORD_ID_RULE})")
    return str(value)


def folder(workspace: Workspace, name: str) -> Path:
    """``.hippo/<name>/``: ``proposals``, ``receipts``, ``reviews`` or ``snapshots``."""
    return workspace.hippo_dir / name


def dump(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def create_once(path: Path, record: dict[str, Any]) -> None:
    """Write ``path`` whole, refusing to replace a file that exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    atomic_write(tmp, dump(record))
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise HippoError(f"{path} exists already; hippo never overwrites a proposal") from None
    finally:
        tmp.unlink(missing_ok=True)


def write(path: Path, record: dict[str, Any]) -> None:
    atomic_write(path, dump(record))


def read(path: Path, shown: str) -> dict[str, Any]:
    """A proposal, receipt or review; anything but a JSON object is one error."""
    return read_json_object(path, shown, kind="hippo record")


def all_in(directory: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every readable record in ``directory``, oldest first (ids sort by time)."""
    return json_objects_in(directory)


def created(record: dict[str, Any]) -> bool:
    """True for the receipt of a change that created its note: ``before`` is null."""
    return "before" in record and record["before"] is None


def reverts(workspace: Workspace) -> list[dict[str, Any]]:
    """Every revert receipt of the workspace whose revert was done, oldest first."""
    directory = folder(workspace, "receipts")
    try:
        stamp = directory.stat().st_mtime_ns
    except FileNotFoundError:
        return []
    return _reverts(directory, stamp)


@lru_cache(maxsize=8)
def _reverts(directory: Path, _stamp: int) -> list[dict[str, Any]]:
    # A revert that a kill interrupted (``reverting``, then ``interrupted``) undid nothing.
    return [
        record
        for _path, record in all_in(directory)
        if record.get("type") == REVERT and record.get("state", "reverted") == "reverted"
    ]


def unproven(workspace: Workspace, record: dict[str, Any]) -> str:
    """Why a revert receipt does not prove that a person confirmed its text here; "" when
    it does. A receipt is a file anyone with the repository can write, so it proves a
    revert only with what it restored: the change it reverts, applied, and that change's
    snapshot on this machine, holding the ``confirmed`` text, whose bytes are the note as
    the revert left it. A confirmation withdrawn (``withdrawn``) proves nothing."""
    from hippo_core.notes.edit import note_digest

    if record.get("withdrawn"):
        return f"withdrawn {record['withdrawn']}"
    change_id = record.get("reverts")
    if not is_record_id(change_id):
        return "it names no change it reverts"
    directory = folder(workspace, "receipts")
    try:
        change = read(directory / f"{change_id}.json", f"{change_id}.json")
    except HippoError:
        return f"the change it reverts, {change_id}, has no receipt here"
    if change.get("type", CHANGE) != CHANGE or change.get("note") != record.get("note"):
        return f"the receipt {change_id} is not a change of its note"
    if created(change):
        # A new note has no snapshot: what the revert deleted was the note the change made,
        # and it confirms no text, only that the same note is not made again.
        undone = record.get("undone")
        made = note_digest(undone.encode("utf-8")) if isinstance(undone, str) else None
        if change.get("state") != "applied" or made != change.get("after"):
            return f"the change {change_id} did not make the note it says it undid"
        return ""
    snapshot = workspace.root / str(change.get("snapshot") or "")
    top = os.path.realpath(folder(workspace, "snapshots"))
    if not change.get("snapshot") or not os.path.realpath(snapshot).startswith(top + os.sep):
        return f"the change {change_id} has no snapshot"
    try:
        restored = snapshot.read_bytes()
    except OSError:
        return f"the snapshot of {change_id} is not on this machine"
    digest = note_digest(restored)
    if digest != change.get("before") or digest != record.get("after"):
        return f"the snapshot of {change_id} is not what the revert restored"
    confirmed = record.get("confirmed")
    if isinstance(confirmed, str) and confirmed not in restored.decode("utf-8", "replace"):
        return f"the snapshot of {change_id} does not hold the text it confirms"
    return ""


def confirmations(workspace: Workspace) -> list[tuple[dict[str, Any], str]]:
    """Every revert done in the workspace, oldest first, with why it does not prove a
    person's confirmation here ("" when it does)."""
    return [(record, unproven(workspace, record)) for record in reverts(workspace)]


def _proven(workspace: Workspace) -> list[dict[str, Any]]:
    return [record for record, why in confirmations(workspace) if not why]


def confirmed_texts(workspace: Workspace, note: str) -> list[tuple[str, str]]:
    """Text a person restored in ``note`` by a revert this machine can prove
    (:func:`unproven`), still in the note, with the revert's id: verify treats it as true
    for as long as it stays."""
    found: list[tuple[str, str]] = []
    current: str | None = None
    for record in _proven(workspace):
        text = record.get("confirmed")
        if record.get("note") != note or not isinstance(text, str) or not text:
            continue
        if current is None:
            try:
                current = (workspace.notes_dir / note).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return []
        if text in current and text not in (t for t, _ in found):
            found.append((text, str(record.get("id"))))
    return found


def undone_texts(workspace: Workspace, note: str) -> list[tuple[str, str]]:
    """The new text of every change to ``note`` that a person reverted (a revert this
    machine can prove), with the revert."""
    return [
        (str(record["undone"]), str(record.get("id")))
        for record in _proven(workspace)
        if record.get("note") == note and isinstance(record.get("undone"), str)
    ]


def withdraw(workspace: Workspace, given: str) -> dict[str, Any]:
    """Withdraw the confirmation of the revert receipt ``given`` (an id): verify no longer
    holds its text true, nor refuses its change again. The receipt keeps when."""
    if not is_record_id(given):
        raise HippoError(f"no revert receipt {given!r}; give the id of a revert receipt")
    path = folder(workspace, "receipts") / f"{given}.json"
    shown = workspace.relative(path)
    if not path.is_file():
        raise HippoError(f"no revert receipt {given!r} in .hippo/receipts")
    record = read(path, shown)
    if record.get("type") != REVERT:
        raise HippoError(f"{shown} is not a revert receipt; only a revert confirms text")
    if record.get("withdrawn"):
        raise HippoError(f"{shown}: its confirmation was withdrawn already, {record['withdrawn']}")
    record["withdrawn"] = now()
    write(path, record)
    return record


# -- for plugins that land changes of their own (the public API) ---------------------------

#: What a purged note's words become in the records that held them.
PURGED = "[purged]"


def record_proposal(
    workspace: Workspace,
    proposal: Proposal,
    *,
    prompt_digest: str,
    review: str,
    persona: str,
    **more: Any,
) -> Path:
    """Write ``.hippo/proposals/<id>.json`` once, as a dream writes it: the proposal, when,
    the digest of the note its change was built against, and who reviews it with which
    persona (``more`` adds keys of the caller's). Raises :class:`HippoError` when a
    proposal of that id exists: one is never overwritten, or when its id is not a record
    id."""
    path = folder(workspace, "proposals") / f"{checked_id(proposal.id, 'proposal')}.json"
    record = {
        **proposal.as_dict(),
        "created": now(),
        "prompt": {"note_digest": prompt_digest},
        "review": review,
        "persona": persona,
        **more,
    }
    create_once(path, record)
    return path


def proposal_record(workspace: Workspace, proposal_id: str) -> dict[str, Any] | None:
    """The proposal ``proposal_id`` as written, or None when there is none."""
    return _record(workspace, "proposals", proposal_id)


def receipt_record(workspace: Workspace, proposal_id: str) -> dict[str, Any] | None:
    """The receipt of ``proposal_id`` (its ``state``: ``applied``, ``rejected``, ...), or
    None when it was never settled."""
    return _record(workspace, "receipts", proposal_id)


def _record(workspace: Workspace, name: str, record_id: str) -> dict[str, Any] | None:
    if not is_record_id(record_id):
        return None
    path = folder(workspace, name) / f"{record_id}.json"
    if not path.is_file():
        return None
    return read(path, workspace.relative(path))


def purge_note_history(
    workspace: Workspace, note: str, *, fields: tuple[str, ...] = (), note_as: str = ""
) -> dict[str, int]:
    """Take the words of ``note`` (relative to ``notes_dir``) out of every record hippo
    keeps of its changes: the proposals' ``old``, ``new`` and ``reason`` (and the kind's own
    ``fields``) become :data:`PURGED`, the reviewers' replies about them are emptied, the
    snapshots are deleted, and a revert's kept texts are dropped. Ids, verdicts, states and
    digests stay, so the history still says that something changed, and when.

    With ``note_as``, the note's path itself is replaced by it in those records (a path
    made of the note's words names what is being forgotten). For a plugin that forgets a
    note for good (the sleep pack's ``hippo forget``): the counts of what it touched, by
    record. A ``note`` outside ``notes_dir`` is a :class:`HippoError` (its snapshots are
    deleted by that path).
    """
    from hippo_core.dream.paths import outside_notes

    problem = outside_notes(workspace.notes_dir, note)
    if problem:
        raise HippoError(f"{problem}; nothing was purged")
    counts = {"proposals": 0, "reviews": 0, "snapshots": 0, "receipts": 0}
    purged_ids = set()
    for path, record in all_in(folder(workspace, "proposals")):
        if record.get("note") != note:
            continue
        purged_ids.add(str(record.get("id")))
        changed = False
        for key in ("old", "new", "reason", *fields):
            value = record.get(key)
            if isinstance(value, str) and value and value != PURGED:
                record[key] = PURGED if key != "reason" else ""
                changed = True
        if note_as:
            record["note"], changed = note_as, True
        if changed:
            write(path, record)
            counts["proposals"] += 1
    for path, record in all_in(folder(workspace, "reviews")):
        if str(record.get("proposal")) in purged_ids and (
            record.get("notes") or record.get("reply")
        ):
            record.update(notes="", problem="", reply="")
            write(path, record)
            counts["reviews"] += 1
    from glob import escape

    for shot in sorted(folder(workspace, "snapshots").glob(f"*/{escape(note)}")):
        shot.unlink(missing_ok=True)
        counts["snapshots"] += 1
    for path, record in all_in(folder(workspace, "receipts")):
        if record.get("note") != note:
            continue
        if record.get("undone") or record.get("confirmed") or note_as:
            record.update(undone=PURGED if record.get("undone") else "", confirmed="")
            if note_as:
                record.update(note=note_as, snapshot="")
            write(path, record)
            counts["receipts"] += 1
    return counts
