"""Forgetting: a core flagged with a reason is purged at the next tick, or at once.

A purge takes the core's words out of every file hippo wrote: the core's note (and its
satellites), the fragments that belong to it, the snapshots and the history of its changes
(``[purged]``, verdicts kept), the drafts, briefs and events, the session records'
handoffs, the session log and the notes index. What is left is a tombstone: an id of its
own (the core's id is made of its words), the reason, the time and what the cascade
removed, never the content.

Only what belongs to the core goes with it: a fragment drawn into another core that is
still there stays, and a fragment whose words are mostly not the core's (a satellite it
only held) goes back to short-term, to be drafted again.

A purge is written down before it starts: the plan in a local working file
(``purging/<tombstone>.json``, with the words to take out; never committed), then the
tombstone (``state: purging``); both say ``done`` at the end, and a run killed in between
is finished by the next one.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, forget_text, purge_note_history, redact_text
from hippo_packs.sleep.cycle import compose, drafting
from hippo_packs.sleep.records import cores as core_notes
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle

PURGED = "[purged]"  # the word hippo's own records use too
#: A fragment goes with the core when this share of its words are the core's own words.
BELONGS = 0.5


def tombstone_id(core_id: str) -> str:
    """The tombstone's id: not the core's, which is made of the words being forgotten."""
    return "t" + hashlib.sha256(core_id.encode("utf-8")).hexdigest()[:16]


def flag(cycle: Cycle, given: str, reason: str) -> dict[str, Any]:
    """Flag a core to be purged at the next tick."""
    core = _find(cycle, given, reason)
    record = {
        "core": core.id,
        "path": core.path,
        "reason": redact_text(reason.strip()),
        "flagged_at": store.now(),
    }
    store.write(store.named(cycle.workspace, "forget", core.id), record)
    return record


def forgotten(cycle: Cycle, given: str) -> dict[str, Any] | None:
    """The tombstone of the core ``given`` names (its id, or its note's path) if it was
    purged already and is not back under that name: forgetting twice is done once."""
    if core_notes.find_core(cycle.workspace, cycle.cores_dir, given) is not None:
        return None
    name = given.rsplit("/", 1)[-1].removesuffix(".md")
    found = store.records_one(store.named(cycle.workspace, "tombstones", tombstone_id(name)))
    return found if found and found.get("state") == "done" else None


def _find(cycle: Cycle, given: str, reason: str) -> core_notes.Core:
    if not reason.strip():
        raise HippoError("a 'reason' is required to flag a memory for forgetting: --reason TEXT")
    core = core_notes.find_core(cycle.workspace, cycle.cores_dir, given)
    if core is None:
        raise HippoError(
            f"no long-term entry '{given}': not a core under "
            f"{cycle.workspace.settings.notes_dir}/{cycle.cores_dir}/ "
            "(`hippo sleep cores` lists them)"
        )
    return core


def flagged(cycle: Cycle) -> list[dict[str, Any]]:
    return store.records(cycle.workspace, "forget")


def purge_now(cycle: Cycle, given: str, reason: str) -> dict[str, Any]:
    core = _find(cycle, given, reason)
    return purge(cycle, core.id, core.path, redact_text(reason.strip()))


def purge_flagged(cycle: Cycle) -> list[dict[str, Any]]:
    """Finish interrupted purges, then purge every flagged core; the tombstones."""
    done = []
    for plan in store.records(cycle.workspace, "purging"):
        done.append(purge(cycle, plan["core"], plan["path"], plan["reason"]))
    for record in flagged(cycle):
        done.append(purge(cycle, record["core"], record["path"], record["reason"]))
    return done


def purge(cycle: Cycle, core_id: str, path: str, reason: str) -> dict[str, Any]:
    """Forget the core ``core_id`` (at ``path``, relative to ``notes_dir``); its tombstone."""
    workspace = cycle.workspace
    flag_path = store.named(workspace, "forget", core_id)  # an id that is a path: refused
    _check_core_path(cycle, path)
    stone_id = tombstone_id(core_id)
    stone_path = store.folder(workspace, "tombstones", f"{stone_id}.json")
    plan_path = store.folder(workspace, "purging", f"{stone_id}.json")
    plan = store.records_one(plan_path) or _plan(cycle, core_id, path, reason)
    store.write(plan_path, plan)
    tombstone = store.records_one(stone_path) or {
        "id": stone_id,
        "kind": "core",
        "reason": reason,
        "purged_at": store.now(),
        "state": "purging",
        "cascade": {},
    }
    store.write(stone_path, tombstone)
    texts = list(plan["texts"])
    for fragment_id in plan["purged"]:
        for folder in ("fragments", "pruned"):
            store.named(workspace, folder, fragment_id).unlink(missing_ok=True)
        store.note_fate(workspace, fragment_id, store.PURGED, f"with {stone_id}")
    restored = store.restore(workspace, plan["restored"])
    drafts = _scrub_drafts(cycle, core_id, set(texts), stone_id)
    history = purge_note_history(workspace, path, fields=("restated_content",), note_as=PURGED)
    (workspace.notes_dir / path).unlink(missing_ok=True)
    # The core's id and path are its words too: out of every record, with the texts.
    everywhere = [*texts, core_id, path, f"{workspace.settings.notes_dir}/{path}"]
    records = store.scrub_texts(workspace, [t for t in everywhere if len(t.strip()) >= 8])
    kernel = forget_text(workspace, everywhere)
    flag_path.unlink(missing_ok=True)
    cascade = {
        "satellites": plan["satellites"],
        "fragments_purged": len(plan["purged"]),
        "fragments_restored": len(plan["restored"]),
        "drafts_scrubbed": drafts,
        "proposals_scrubbed": history["proposals"],
        "snapshots_removed": history["snapshots"],
        "records_scrubbed": records,
        "sessions_scrubbed": kernel["sessions"],
    }
    tombstone.update(state="done", cascade={**tombstone.get("cascade", {}), **cascade})
    if restored or not tombstone["cascade"].get("fragments_restored"):
        tombstone["cascade"]["fragments_restored"] = len(plan["restored"])
    store.write(stone_path, tombstone)
    plan_path.unlink(missing_ok=True)
    cycle.emit("purged", ids=[stone_id])
    return tombstone


def _plan(cycle: Cycle, core_id: str, path: str, reason: str) -> dict[str, Any]:
    """What a purge of ``core_id`` takes: the fragments that belong to it (drawn into it,
    into no other core still there, and mostly its words: purged), the ones it only held
    (restored to short-term, to be drafted again), and the words to take out everywhere."""
    workspace = cycle.workspace
    core = core_notes.read_core(workspace.notes_dir / path, path)
    own = core.text if core else ""
    elsewhere = _landed_elsewhere(cycle, core_id)
    purged, restored = [], []
    texts = {own} if own else set()
    for fragment_id in _sources(cycle, core_id):
        if fragment_id in elsewhere:
            continue
        record = store.records_one(
            store.named(workspace, "fragments", fragment_id)
        ) or store.records_one(store.named(workspace, "pruned", fragment_id))
        content = str((record or {}).get("content") or "")
        if record is None or compose.covered(content, own, share=BELONGS):
            purged.append(fragment_id)
            if content:
                texts.add(content)
        else:
            restored.append(fragment_id)
    return {
        "core": core_id,
        "path": path,
        "reason": reason,
        "texts": sorted(t for t in texts if t.strip()),
        "purged": purged,
        "restored": restored,
        "satellites": len(core.satellites) if core else 0,
    }


def _landed_elsewhere(cycle: Cycle, core_id: str) -> set[str]:
    """Fragments drawn into a core other than ``core_id`` that is still there."""
    live = {c.id for c in core_notes.all_cores(cycle.workspace, cycle.cores_dir)}
    found: set[str] = set()
    for draft in store.drafts(cycle.workspace):
        for op in draft.get("operations", []):
            landed = op.get("long_term_id")
            if op.get("status") == "approved" and landed != core_id and landed in live:
                found |= set(op.get("source_short_ids", []))
    return found


def _check_core_path(cycle: Cycle, path: object) -> None:
    """Refuse a purge of anything but a note in the cores folder: a forget flag and a
    tombstone are files a teammate can commit, and their ``path`` is deleted."""
    import os

    notes = os.path.realpath(cycle.workspace.notes_dir)
    cores = os.path.realpath(os.path.join(notes, cycle.cores_dir))
    text = path if isinstance(path, str) else ""
    found = os.path.realpath(os.path.join(notes, text)) if text else ""
    parts = text.split("/")
    if (
        not text.endswith(".md")
        or "\0" in text
        or os.path.isabs(text)
        or ".." in parts
        or not found.startswith(cores + os.sep)
    ):
        raise HippoError(
            f"forget: {path!r} is not a core's note under "
            f"{cycle.workspace.settings.notes_dir}/{cycle.cores_dir}/; nothing was purged"
        )


def _sources(cycle: Cycle, core_id: str) -> list[str]:
    """The fragments every operation that landed in the core was drawn from, those an
    operation waiting for its verdict would attach to it or supersede it with, and the
    repeated facts counted in it (in the pruned archive, which says so)."""
    found: list[str] = []
    for draft in store.drafts(cycle.workspace):
        for op in draft.get("operations", []):
            waiting = op.get("status") == "pending" and op.get("target_core_id") == core_id
            if op.get("long_term_id") == core_id or waiting:
                found += [i for i in op.get("source_short_ids", []) if i not in found]
    for record in store.records(cycle.workspace, "pruned"):
        if record.get("counted_in") == core_id and record.get("id") not in found:
            found.append(str(record["id"]))
    return found


def _scrub_drafts(cycle: Cycle, core_id: str, texts: set[str], stone_id: str) -> int:
    """Take the core's words out of the drafts (an operation that landed in it, targeted
    it or held one of ``texts``); the count of drafts changed. Such an operation still
    waiting for its verdict is denied, the tombstone named in its critique: approving it
    would land ``[purged]`` or attach to a core that is gone."""
    changed_drafts = 0
    for draft in store.drafts(cycle.workspace):
        changed = False
        for op in draft.get("operations", []):
            hit = core_id in (op.get("long_term_id"), op.get("target_core_id"))
            held = hit or (op.get("content") in texts and op.get("content"))
            if held and op.get("status") == "pending" and draft.get("status") == "pending":
                op.update(status="denied", critique=f"its core was forgotten ({stone_id})")
                op["forgotten"] = stone_id
                changed = True
            if held and op.get("content") != PURGED:
                op.update(
                    content=PURGED, edited_content=None, restated_content=None, rationale=None
                )
                op.pop("original_op_content", None)
                if op.get("landing"):
                    op["landing"]["content"] = PURGED
                changed = True
        if changed:
            draft["summary"] = "[purged in part]"
            if draft.get("status") == "pending" and all(
                op.get("status") in ("approved", "denied") for op in draft["operations"]
            ):
                draft.update(status="reviewed", reviewed_at=store.now())
                store.drop_intent(cycle.workspace, drafting.REVIEW_TOPIC)
            store.save_draft(cycle.workspace, draft)
            changed_drafts += 1
    return changed_drafts
