"""A review landing: approved operations written through hippo's applier, crash-safe.

One review: every decision is checked (:mod:`.review`); then the draft is written with each
approved operation marked ``approving`` and its landing planned (the notes it writes, the
proposals that carry it); then each operation lands, new cores first, as proposals of the
sleep kinds with receipts and snapshots; then it is marked ``approved`` and its fragments
move to the pruned archive. A run killed at any point leaves a draft that says what was
planned and receipts that say what was written; :func:`recover` finishes the landing the
next time any sleep command takes the cycle's lock (:func:`locked`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo_core import (
    HippoError,
    Proposal,
    Verdict,
    describe_decider,
    note_digest,
    proposal_record,
    receipt_record,
    reconcile,
    record_proposal,
    redact_text,
    settle,
)
from hippo_packs.sleep.cycle import duties
from hippo_packs.sleep.cycle.review import Decision, check
from hippo_packs.sleep.records import cores as core_notes
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle

CREATES = ("new_core", "verbatim", "supersede")
PERSONA = "personas/reviewer.md"


@contextmanager
def locked(cycle: Cycle, *, what: str) -> Iterator[None]:
    """Hold the cycle's lock (``what`` names the command in the busy message), after
    finishing whatever landing a killed run left: every command that writes the sleep
    records takes the lock this way."""
    with cycle.lock(what=what):
        recover(cycle)
        yield


@dataclass
class Step:
    """One proposal an approved operation lands as: which, of what kind, in which note,
    with what text, built against which bytes of the note (``digest``; "" for a new note),
    and the kind's own fields."""

    proposal: str
    kind: str
    note: str
    new: str
    digest: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def decide(
    cycle: Cycle,
    draft_id: str,
    given: Any,
    note: str,
    *,
    by: dict[str, Any],
    measuring: bool = False,
) -> dict[str, Any]:
    """Check every decision, write down the plan, land the approved operations (new cores
    first), record the denied ones; what happened to each. ``ok`` is False when a change
    could not be written (the note changed meanwhile): that operation is pending again.
    ``by`` is who decided: kept on each operation and in each receipt; who may approve
    what is :mod:`.duties` (no session approves what it wrote; a verbatim, a core from one
    fragment and everything under ``review = "person"`` need a person at a terminal).
    ``measuring``: an eval in a throwaway copy of the workspace, which lands every
    operation to count what lands; no one's memory, so no one's duties."""
    draft = store.load_draft(cycle.workspace, draft_id)
    decisions = check(cycle, draft, given)
    if not measuring:
        duties.check(cycle, draft, decisions, by)
    note = redact_text(note)
    operations = draft["operations"]
    now = store.now()
    taken: set[str] = set()
    order = sorted(decisions, key=lambda d: (d.kind not in CREATES, d.op))
    for decision in order:
        op = operations[decision.op]
        op["reviewed_at"] = now
        op["decided_by"] = by
        if decision.verdict == "deny":
            op.update(status="denied", critique=decision.critique)
            continue
        op.update(status="approving", note=decision.note or note or None)
        if decision.edits:
            op["review_edits"] = decision.edits
        if decision.edited_content:
            op.update(edited_content=decision.edited_content, original_op_content=op["content"])
        op["landing"] = _plan(cycle, draft, decision, taken)
    store.save_draft(cycle.workspace, draft)
    results = [_land(cycle, draft, operations[d.op]) for d in order if d.verdict == "approve"]
    results += [{"op": d.op, "denied": True} for d in order if d.verdict == "deny"]
    draft = _finish(cycle, draft)
    counts = {
        s: sum(op.get("status") == s for op in draft["operations"])
        for s in ("approved", "denied", "pending")
    }
    lines = [_line(r) for r in sorted(results, key=lambda r: r["op"])]
    lines.append(
        f"draft {draft_id}: {draft['status']}; {counts['approved']} approved, "
        f"{counts['denied']} denied, {counts['pending']} pending"
    )
    return {
        "ok": not any(r.get("error") for r in results),
        "draft_id": draft_id,
        "status": draft["status"],
        **counts,
        "results": sorted(results, key=lambda r: r["op"]),
        "lines": lines,
    }


def _line(result: dict[str, Any]) -> str:
    if result.get("denied"):
        return f"operation {result['op']}: denied"
    if result.get("error"):
        return f"operation {result['op']}: not landed: {result['error']}"
    return f"operation {result['op']}: landed in {result['note']}"


def _plan(
    cycle: Cycle, draft: dict[str, Any], decision: Decision, taken: set[str]
) -> dict[str, Any]:
    """What an approved operation will write: the core note and the proposals' ids."""
    base = f"{draft['id']}-op{decision.op}"
    plan: dict[str, Any] = {
        "kind": decision.kind,
        "content": decision.content,
        "target": decision.target,
        "target_op": decision.target_op,
        "restated": decision.restated,
    }
    if decision.kind in CREATES:
        path = core_notes.new_path(cycle.workspace, cycle.cores_dir, decision.content, taken)
        taken.add(path.rsplit("/", 1)[-1].removesuffix(".md"))
        plan.update(note=path, proposal=base)
        if decision.kind == "supersede":
            plan["mark"] = f"{base}-mark"
    else:
        plan["proposal"] = base
    return plan


def _land(cycle: Cycle, draft: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    """Write one approved operation's changes that are not written yet, then mark it."""
    plan = op["landing"]
    workspace = cycle.workspace
    day = store.day(store.now())
    target = plan.get("target") or ""
    if plan.get("target_op") is not None and not target:
        target = str(draft["operations"][plan["target_op"]].get("long_term_id") or "")
        plan["target"] = target
        op["target_core_id"] = target
    steps: list[Step] = []
    if plan["kind"] in CREATES:
        meta: dict[str, Any] = {
            "evidence_count": max(1, int(op.get("evidence_count") or 1)),
            "from_draft": draft["id"],
            "draft_op": op["index"],
        }
        if plan["kind"] == "verbatim":
            meta.update(evidence_count=1, preserved_verbatim=True)
        if plan["kind"] == "supersede":
            meta["supersedes"] = target
        if op.get("edited_content"):
            meta["edited_on_review"] = True
        # Who let it in, on the core itself: a person reading the notes sees it.
        meta["approved_by"] = "person" if (op.get("decided_by") or {}).get("person") else "agent"
        text = core_notes.render_core(
            plan["content"], topic=str(op.get("topic") or ""), date=day, meta=meta
        )
        steps.append(Step(plan["proposal"], plan["kind"], plan["note"], text))
        if plan["kind"] == "supersede":
            old = _core(cycle, target)
            new_id = plan["note"].rsplit("/", 1)[-1].removesuffix(".md")
            mark = {"superseded_by": new_id}
            steps.append(Step(plan["mark"], "superseded", old.path, "", note_digest(old.raw), mark))
    else:
        core = _core(cycle, target)
        extra = {
            "date": day,
            "evidence_count": max(1, int(op.get("evidence_count") or 1)),
            "restated_content": plan.get("restated") or None,
        }
        steps.append(
            Step(
                plan["proposal"], "attach", core.path, plan["content"], note_digest(core.raw), extra
            )
        )
    for step in steps:
        applied, detail = _step(cycle, draft, op, step)
        if not applied:
            op.update(status="pending", landing=None, note=f"not landed: {detail}")
            store.save_draft(workspace, draft)
            return {"op": op["index"], "error": detail}
    core_id = (
        plan["note"].rsplit("/", 1)[-1].removesuffix(".md") if plan["kind"] in CREATES else target
    )
    op.update(status="approved", long_term_id=core_id)
    store.save_draft(workspace, draft)
    moved = store.prune(
        workspace,
        list(op.get("source_short_ids", [])),
        f"consumed by {draft['id']} op {op['index']}",
        store.IN_A_CORE,
    )
    return {
        "op": op["index"],
        "note": f"{workspace.settings.notes_dir}/{plan.get('note') or _core(cycle, target).path}",
        "long_term_id": core_id,
        "kind": plan["kind"],
        "shorts_archived": len(moved),
    }


def _core(cycle: Cycle, core_id: str) -> core_notes.Core:
    core = core_notes.find_core(cycle.workspace, cycle.cores_dir, core_id)
    if core is None:
        raise HippoError(f"core '{core_id}' is gone")
    return core


def _step(cycle: Cycle, draft: dict[str, Any], op: dict[str, Any], step: Step) -> tuple[bool, str]:
    """Land one proposal unless its receipt says it was settled already; whether it is in
    the note, and what its receipt says."""
    workspace = cycle.workspace
    settled = receipt_record(workspace, step.proposal)
    if settled is not None:  # a run that stopped after settling it
        state = str(settled.get("state"))
        return state == "applied", str(settled.get("detail") or state)
    recorded = proposal_record(workspace, step.proposal)
    if recorded is not None:  # planned by a run that stopped: land what it wrote down
        step.digest = str((recorded.get("prompt") or {}).get("note_digest", ""))
        step.new = str(recorded.get("new", step.new))
        step.extra = {k: recorded[k] for k in step.extra if k in recorded}
    proposal = Proposal(
        id=step.proposal,
        pass_key="sleep/draft",
        note=step.note,
        kind=step.kind,
        old="",
        new=step.new,
        reason=str(op.get("rationale") or ""),
        evidence=(),
        extra={
            "draft": draft["id"],
            "op": op["index"],
            "fragments": op.get("source_short_ids", []),
            **step.extra,
        },
    )
    if recorded is None:
        record_proposal(
            workspace, proposal, prompt_digest=step.digest, review="queue", persona=PERSONA
        )
    by = op.get("decided_by") or {}
    verdict = Verdict(describe_decider(by), "confirm", str(op.get("note") or ""))
    done = settle(
        workspace,
        cycle.plugins,
        proposal,
        verdict,
        prompt_digest=step.digest,
        persona=PERSONA,
        invocation={
            "command": "hippo review" if by.get("way") in ("terminal", "command") else "mcp",
            "draft": draft["id"],
            "op": op["index"],
            "by": by,
        },
    )
    return done.applied, done.detail or done.state


def _finish(cycle: Cycle, draft: dict[str, Any]) -> dict[str, Any]:
    if all(op.get("status") in ("approved", "denied") for op in draft["operations"]):
        draft.update(status="reviewed", reviewed_at=store.now())
        store.save_draft(cycle.workspace, draft)
        store.drop_intent(cycle.workspace, "hippocampus, review")
    return draft


def recover(cycle: Cycle) -> list[str]:
    """Finish every landing a killed run left planned; returns the drafts it touched."""
    reconcile(cycle.workspace)
    touched = []
    for draft in store.drafts(cycle.workspace):
        waiting = [op for op in draft.get("operations", []) if op.get("status") == "approving"]
        if not waiting:
            continue
        for op in sorted(waiting, key=lambda o: (o["landing"]["kind"] not in CREATES, o["index"])):
            try:
                _land(cycle, draft, op)
            except HippoError as exc:
                op.update(status="pending", landing=None, note=f"not landed: {exc}")
                store.save_draft(cycle.workspace, draft)
        _finish(cycle, draft)
        touched.append(draft["id"])
    return touched
