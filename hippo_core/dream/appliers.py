"""The applier chain: the steps that land a confirmed change, and that ``hippo revert`` asks
to undo it.

hippo's own step, ``note`` (:class:`NoteWriter`: the snapshot and the atomic write, or the
write of a new note that never replaces one), is registered through
``hippo_register_appliers`` as a plugin's appliers are, and always runs first; the
plugins' run after it, in the order they were registered. A receipt records every step
in ``appliers``, a ``{"name", "state", "detail"}`` each, written before the step runs and
after it: ``pending``, ``running``, ``done``, ``failed`` (with what it raised), ``not run``
(a step before it failed, or the run stopped first), ``interrupted`` (the run stopped
while it ran). A step that fails stops the chain; the note stays as the steps before it
left it, and the receipt's ``detail`` says which step failed.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.dream.model import Applier, Change
from hippo_core.files.atomic import atomic_write

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins

PENDING, RUNNING, DONE = "pending", "running", "done"
FAILED, NOT_RUN, INTERRUPTED = "failed", "not run", "interrupted"


class NoteAppeared(Exception):
    """A new note's path was taken while the change was landing: nothing was replaced."""


class NoteWriter:
    """hippo's own step: the note written whole, atomically; a new note only where nothing
    is; a revert puts the note back (or deletes a note the change created)."""

    name = "note"

    def apply(self, change: Change) -> None:
        if change.before is None:
            if not write_new(change.path, change.data):
                raise NoteAppeared(change.note)
            return
        if change.snapshot is not None:
            atomic_write(change.snapshot, change.previous)
        atomic_write(change.path, change.data)

    def revert(self, change: Change) -> None:
        if change.after is None:
            change.path.unlink(missing_ok=True)
        else:
            atomic_write(change.path, change.data)


def write_new(path: Path, data: bytes) -> bool:
    """Write ``path`` whole if nothing is there; False when something is."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    atomic_write(tmp, data)  # makes the missing folders, all inside notes_dir
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    return True


def chain(plugins: Plugins) -> list[Applier]:
    """The appliers a change goes through: ``note`` first, then the plugins'."""
    found = plugins.appliers()
    if not found or found[0].name != NoteWriter.name:
        found = [NoteWriter(), *[a for a in found if a.name != NoteWriter.name]]
    return found


def steps(appliers: list[Applier]) -> list[dict[str, str]]:
    """The receipt's record of the steps, none run yet."""
    return [{"name": str(a.name), "state": PENDING, "detail": ""} for a in appliers]


def run_after_note(
    appliers: list[Applier],
    change: Change,
    record: dict[str, Any],
    write: Callable[[], None],
    *,
    reverting: bool = False,
) -> str:
    """Run the steps after ``note`` (done by the caller), recording each in ``record``
    (``write`` writes the receipt); the detail of the step that failed, or ""."""
    recorded: list[dict[str, str]] = record["appliers"]
    for position, applier in enumerate(appliers[1:], start=1):
        step = recorded[position]
        step["state"] = RUNNING
        write()
        try:
            (applier.revert if reverting else applier.apply)(change)
        except Exception as exc:
            said = " ".join(str(exc).split())
            step.update(
                state=FAILED, detail=f"{type(exc).__name__}: {said}" if said else type(exc).__name__
            )
            for later in recorded[position + 1 :]:
                later.update(state=NOT_RUN, detail=f"after {applier.name} failed")
            write()
            return f"the applier {applier.name} failed: {step['detail']}"
        step["state"] = DONE
        write()
    return ""


#: Why the note's step did not run, when the run stopped before it.
STOPPED_BEFORE_NOTE = "the run stopped before the note was written"


def settle_steps(record: dict[str, Any], note_done: bool, why: str = STOPPED_BEFORE_NOTE) -> str:
    """The steps a killed process left unfinished, recorded as what became of them: the
    note's step by ``note_done`` (``why`` saying why it did not run), a step that was
    running ``interrupted``, the others ``not run``. Returns the name of the step
    interrupted, or ""."""
    recorded = record.get("appliers")
    if not isinstance(recorded, list):
        return ""
    interrupted = ""
    for position, step in enumerate(recorded):
        if not isinstance(step, dict) or step.get("state") not in (PENDING, RUNNING):
            continue
        if position == 0:
            step.update(
                state=DONE if note_done else NOT_RUN,
                detail="" if note_done else why,
            )
        elif step.get("state") == RUNNING:
            step.update(state=INTERRUPTED, detail="the run stopped while it ran")
            interrupted = interrupted or str(step.get("name"))
        else:
            step.update(state=NOT_RUN, detail="the run stopped before it")
    return interrupted


def unfinished(record: dict[str, Any]) -> bool:
    """Whether a receipt has a step still ``pending`` or ``running``."""
    recorded = record.get("appliers")
    return isinstance(recorded, list) and any(
        isinstance(step, dict) and step.get("state") in (PENDING, RUNNING) for step in recorded
    )
