"""Proposals waiting for a verdict: the ``queue`` reviewer's side of ``hippo review``.

A queued proposal has a review record with verdict ``pending`` and no receipt. Deciding
it writes the verdict, then the receipt, applying a confirmed change exactly as a dream
does: only if the note is unchanged since the prompt was built.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hippo_core.base.errors import HippoError
from hippo_core.dream import receipts
from hippo_core.dream.apply import Settled, settle
from hippo_core.dream.model import Evidence, Proposal, Verdict
from hippo_core.dream.review import step_record, steps_from
from hippo_core.plugins.events import Event

if TYPE_CHECKING:
    from hippo_core.agents.deciders import Decider
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace

COMMON = ("id", "pass", "note", "kind", "old", "new", "reason", "evidence")
META = ("created", "chunk", "prompt", "proposer", "review", "persona")


def pending(workspace: Workspace) -> list[dict[str, Any]]:
    """Every proposal waiting for a verdict, oldest first."""
    done = {path.stem for path in receipts.folder(workspace, "receipts").glob("*.json")}
    waiting = []
    for path, review in receipts.all_in(receipts.folder(workspace, "reviews")):
        if review.get("verdict") == "pending" and path.stem not in done:
            proposal = workspace.hippo_dir / "proposals" / path.name
            if proposal.is_file():
                waiting.append(receipts.read(proposal, workspace.relative(proposal)))
    return waiting


def load(workspace: Workspace, proposal_id: str) -> dict[str, Any]:
    path = receipts.folder(workspace, "proposals") / f"{proposal_id}.json"
    if not receipts.is_record_id(proposal_id) or not path.is_file():
        raise HippoError(
            f"no proposal {proposal_id!r} in .hippo/proposals/; `hippo review` lists them"
        )
    return receipts.read(path, workspace.relative(path))


def decide(
    workspace: Workspace,
    plugins: Plugins,
    proposal_id: str,
    verdict: str,
    notes: str,
    *,
    by: Decider,
) -> Settled:
    """Record a verdict on a pending proposal, and who gave it (``by``), and settle it."""
    record = load(workspace, proposal_id)
    # Its id names the receipt and the snapshot: a hand-edited one is refused before the
    # verdict is written.
    shown = f".hippo/proposals/{proposal_id}.json"
    if receipts.checked_id(record.get("id"), shown) != proposal_id:
        raise HippoError(f"{shown}: its id {record.get('id')!r} is not its file's name")
    if (receipts.folder(workspace, "receipts") / f"{proposal_id}.json").exists():
        raise HippoError(f"proposal {proposal_id} has a receipt already: it was decided")
    review_path = receipts.folder(workspace, "reviews") / f"{proposal_id}.json"
    review = (
        receipts.read(review_path, workspace.relative(review_path)) if review_path.exists() else {}
    )
    if review.get("verdict") not in (None, "pending"):
        raise HippoError(f"proposal {proposal_id} was reviewed already ({review.get('verdict')})")
    if review.get("reviewer") == "person" and not by.get("person"):
        raise HippoError(
            f"proposal {proposal_id} {review.get('notes') or 'waits for a person'}: decide it "
            f"with `hippo review {proposal_id} --confirm` (or --reject) in a terminal"
        )
    proposal = Proposal(
        id=str(record["id"]),
        pass_key=str(record.get("pass")),
        note=str(record["note"]),
        kind=str(record["kind"]),
        old=str(record.get("old", "")),
        new=str(record.get("new", "")),
        reason=str(record.get("reason", "")),
        evidence=tuple(Evidence(str(e["session"]), int(e["ordinal"])) for e in record["evidence"]),
        extra={k: v for k, v in record.items() if k not in COMMON + META},
    )
    if proposal.kind not in plugins.kinds():
        raise HippoError(f"proposal {proposal_id}: kind {proposal.kind!r} is not known here")
    given = Verdict("queue", "confirm" if verdict == "confirm" else "reject", notes)
    earlier = steps_from(review)[:-1]  # a chain's reviewers before the queue confirmed
    if earlier:
        given = replace(given, steps=(*earlier, given))
    persona = str(record.get("persona", ""))
    review.update(
        proposal=proposal_id,
        reviewer="queue",
        persona=persona,
        verdict=given.verdict,
        notes=notes,
        problem="",
        call=None,
        by=by,
        at=receipts.now(),
    )
    if earlier:
        review["steps"] = [step_record(step) for step in given.steps]
    receipts.write(review_path, review)
    plugins.event(workspace, Event("verdict", {"proposal": proposal_id, "verdict": given.verdict}))
    prompt = record.get("prompt")
    prompt = prompt if isinstance(prompt, dict) else {}
    return settle(
        workspace,
        plugins,
        proposal,
        given,
        prompt_digest=str(prompt.get("note_digest", "")),
        persona=persona,
        invocation={"command": "hippo review", "proposer": record.get("proposer"), "by": by},
    )
