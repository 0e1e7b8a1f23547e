"""What ``hippo review`` does, for its command and the MCP tools alike: list what waits for a
verdict, show one item, decide it.

A single proposal (:mod:`hippo_core.dream.queue`) takes a verdict, ``confirm`` or
``reject``; an item of a queue a plugin registers (:mod:`hippo_core.actions.review_queues`: the
sleep pack's drafts) takes decisions on its parts. Each queue checks what it is given and
says what is wrong in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_core.actions.review_queues import ReviewQueue, queues
from hippo_core.base.errors import HippoError, UsageError

if TYPE_CHECKING:
    from hippo_core.agents.deciders import Decider
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace

PROPOSAL = "proposal"


def review_items(workspace: Workspace, plugins: Plugins) -> list[dict[str, Any]]:
    """Every item waiting for a verdict, proposals first, each with its ``type``."""
    from hippo_core.dream import queue as proposals

    rows = [_typed(PROPOSAL, r) for r in proposals.pending(workspace)]
    for queue in queues(plugins):
        rows += [_typed(queue.name, r) for r in queue.pending(workspace)]
    return rows


def _typed(kind: str, row: dict[str, Any]) -> dict[str, Any]:
    # "type" first, and the item's own, even if its record has a key of that name.
    typed = {"type": kind, **row}
    typed["type"] = kind
    return typed


def queue_of(workspace: Workspace, plugins: Plugins, item: str) -> ReviewQueue | None:
    """The queue ``item`` belongs to, or None when it is not a queue's (a proposal, or
    nothing)."""
    return next((q for q in queues(plugins) if q.owns(workspace, item)), None)


def show(workspace: Workspace, plugins: Plugins, item: str) -> tuple[str, dict[str, Any]]:
    """``item``'s type and what its reviewer sees: a queue's view, or the proposal record.
    An id that is neither is an error of one line."""
    queue = queue_of(workspace, plugins, item)
    if queue is not None:
        return queue.name, queue.show(workspace, item)
    from hippo_core.dream import queue as proposals

    return PROPOSAL, proposals.load(workspace, item)


def decide_proposal(
    workspace: Workspace,
    plugins: Plugins,
    proposal: str,
    verdict: str,
    notes: str,
    *,
    by: Decider,
) -> dict[str, Any]:
    """Confirm or reject a pending proposal: settled as a dream settles it, with a receipt
    that keeps who decided (``by``). ``lines`` is what ``hippo review`` prints."""
    from hippo_core.dream import queue as proposals

    if verdict not in ("confirm", "reject"):
        raise UsageError(f"a proposal is confirmed or rejected, not {verdict!r}")
    refused = plugins.verdict_refused(workspace, proposals.load(workspace, proposal), verdict, by)
    if refused:
        raise HippoError(refused)
    settled = proposals.decide(workspace, plugins, proposal, verdict, notes, by=by)
    receipt = workspace.relative(settled.receipt)
    return {
        "ok": True,
        "proposal": proposal,
        "state": settled.state,
        "note": settled.proposal.note,
        "receipt": receipt,
        "lines": [f"{settled.state}: {settled.proposal.note}; receipt {receipt}"],
    }
