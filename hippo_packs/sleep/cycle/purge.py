"""Forgetting: a core flagged with a reason is purged at the next tick, or at once.

A purge removes the core's note (its satellites are in it), its source fragments from
short-term and the pruned archive, the snapshots hippo kept of it, and the text of every
draft operation and proposal that held it (``[purged]``, verdicts kept). What is left is a
tombstone: the id, the reason, the time and what the cascade removed, never the content.

A purge is written down before it starts (the tombstone, ``state: purging``) and marked
``done`` at the end; a run killed in between is finished by the next one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, purge_note_history, redact_text
from hippo_packs.sleep.records import cores as core_notes
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle

PURGED = "[purged]"  # the word hippo's own records use too


def flag(cycle: Cycle, given: str, reason: str) -> dict[str, Any]:
    """Flag a core to be purged at the next tick."""
    core = _find(cycle, given, reason)
    record = {
        "core": core.id,
        "path": core.path,
        "reason": redact_text(reason.strip()),
        "flagged_at": store.now(),
    }
    store.write(store.folder(cycle.workspace, "forget", f"{core.id}.json"), record)
    return record


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
    for tombstone in store.records(cycle.workspace, "tombstones"):
        if tombstone.get("state") == "purging":
            done.append(
                purge(cycle, tombstone["id"], tombstone["path"], tombstone["reason"], tombstone)
            )
    for record in flagged(cycle):
        done.append(purge(cycle, record["core"], record["path"], record["reason"]))
    return done


def purge(
    cycle: Cycle, core_id: str, path: str, reason: str, tombstone: dict[str, Any] | None = None
) -> dict[str, Any]:
    workspace = cycle.workspace
    stone_path = store.folder(workspace, "tombstones", f"{core_id}.json")
    if tombstone is None:
        tombstone = {
            "id": core_id,
            "kind": "core",
            "path": path,
            "reason": reason,
            "purged_at": store.now(),
            "state": "purging",
            "cascade": {},
        }
        store.write(stone_path, tombstone)
    note = workspace.notes_dir / path
    core = core_notes.read_core(note, path)
    cascade = dict(tombstone.get("cascade") or {})
    texts = {core.text, *(s.split(": ", 1)[-1] for s in core.satellites)} if core else set()
    sources = _sources(cycle, core_id)
    cascade["satellites"] = cascade.get("satellites", len(core.satellites) if core else 0)
    shorts = [i for i in sources if store.folder(workspace, "fragments", f"{i}.json").exists()]
    pruned = [i for i in sources if store.folder(workspace, "pruned", f"{i}.json").exists()]
    for fragment_id in shorts:
        store.folder(workspace, "fragments", f"{fragment_id}.json").unlink(missing_ok=True)
    for fragment_id in pruned:
        store.folder(workspace, "pruned", f"{fragment_id}.json").unlink(missing_ok=True)
    cascade["shorts"] = cascade.get("shorts", 0) + len(shorts)
    cascade["pruned"] = cascade.get("pruned", 0) + len(pruned)
    scrubbed, proposals, snapshots = _scrub(cycle, core_id, path, texts)
    cascade["drafts_scrubbed"] = cascade.get("drafts_scrubbed", 0) + scrubbed
    cascade["proposals_scrubbed"] = cascade.get("proposals_scrubbed", 0) + proposals
    cascade["snapshots_removed"] = cascade.get("snapshots_removed", 0) + snapshots
    note.unlink(missing_ok=True)
    store.folder(workspace, "forget", f"{core_id}.json").unlink(missing_ok=True)
    tombstone.update(state="done", cascade=cascade)
    store.write(stone_path, tombstone)
    cycle.emit("purged", ids=[core_id])
    return tombstone


def _sources(cycle: Cycle, core_id: str) -> list[str]:
    """The fragments every operation that landed in the core was drawn from."""
    found: list[str] = []
    for draft in store.drafts(cycle.workspace):
        for op in draft.get("operations", []):
            if op.get("long_term_id") == core_id:
                found += [i for i in op.get("source_short_ids", []) if i not in found]
    return found


def _scrub(cycle: Cycle, core_id: str, path: str, texts: set[str]) -> tuple[int, int, int]:
    """Take the core's text out of drafts, proposals and snapshots; the counts of each."""
    workspace = cycle.workspace
    drafts = 0
    for draft in store.drafts(workspace):
        changed = False
        for op in draft.get("operations", []):
            hit = core_id in (op.get("long_term_id"), op.get("target_core_id"))
            held = hit or (op.get("content") in texts and op.get("content"))
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
            store.save_draft(workspace, draft)
            drafts += 1
    kept = purge_note_history(workspace, f"{path}", fields=("restated_content",))
    proposals, snapshots = kept["proposals"], kept["snapshots"]
    return drafts, proposals, snapshots
