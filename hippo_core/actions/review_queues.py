"""What ``hippo review`` lists besides single proposals: queues that plugins register.

A queue holds items that wait for a verdict on each of their parts (the sleep pack's
drafts, whose parts are operations). ``hippo review`` lists every queue's items beside the
proposals, shows an item as its reviewer sees it, and hands it the decisions given on the
command line, in one shape for every queue::

    {"op": 0, "verdict": "approve", "note": "..."}
    {"op": 1, "verdict": "deny", "critique": "..."}

plus whatever keys the queue documents (``--decisions`` passes a JSON list through whole).
A queue checks every decision before any lands, and raises
:class:`~hippo_core.base.errors.HippoError` with one line when one is wrong.
"""

from __future__ import annotations

from typing import Any, Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

#: :class:`hippo_core.plugins.manager.Plugins` (not imported: the manager imports the hooks').
Plugins = Any


class ReviewQueue(Protocol):
    name: str
    """What its items are called in listings (``draft``)."""

    def pending(self, workspace: Workspace) -> list[dict[str, Any]]:
        """The items waiting for a verdict, oldest first: each has ``id`` and ``summary``."""
        ...

    def owns(self, workspace: Workspace, item_id: str) -> bool:
        """True when ``item_id`` is one of this queue's items (waiting or not)."""
        ...

    def show(self, workspace: Workspace, item_id: str) -> dict[str, Any]:
        """The item as its reviewer sees it (``--json`` prints this)."""
        ...

    def render(self, view: dict[str, Any]) -> str:
        """``show``'s view as text for a person."""
        ...

    def decide(
        self,
        workspace: Workspace,
        plugins: Plugins,
        item_id: str,
        decisions: list[dict[str, Any]],
        note: str,
        *,
        by: dict[str, Any],
    ) -> dict[str, Any]:
        """Check every decision, then land them; returns what happened (``--json``): its
        ``lines`` are printed, and ``ok`` False makes ``hippo review`` exit 1. ``by`` is who
        decides (:mod:`hippo_core.agents.deciders`: ``way``, ``person``, and ``user`` or the MCP
        ``client``, ``tool`` and ``session``): keep it, and refuse what it may not do."""
        ...


def queues(plugins: Plugins) -> list[ReviewQueue]:
    """Every registered queue, in the order plugins registered them."""
    found: list[ReviewQueue] = []
    plugins.collect("hippo_register_review_queues", register=found.append)
    return found
