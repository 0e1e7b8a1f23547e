"""Drafts in ``hippo review``: the sleep pack's review queue.

``hippo review`` lists the pending drafts beside the proposals; ``hippo review DRAFT`` shows
a draft as its reviewer sees it: each operation with the core it targets, every earlier
attempt with its critique, the restate check, and on the last attempt the notice that
nothing comes back after it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_core import labelled
from hippo_packs.sleep.cycle.review import restate_problem
from hippo_packs.sleep.records import cores as core_notes
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import Plugins, Workspace
    from hippo_packs.sleep.cycle import Cycle

LAST_ATTEMPT = (
    "This is the last attempt: nothing comes back after it. A denial now drops the "
    "operation, and its memory stays in short-term. Land each operation, with your own "
    "fixes (edited_content) where needed, and deny only what should not be in memory at all."
)


class DraftQueue:
    name = "draft"

    def pending(self, workspace: Workspace) -> list[dict[str, Any]]:
        return [
            {
                "id": d["id"],
                "summary": f"attempt {d.get('attempt', 1)}"
                + (" (last)" if d.get("terminal") else "")
                + f"  {d.get('summary', '')}",
            }
            for d in store.drafts(workspace)
            if d.get("status") == "pending"
        ]

    def owns(self, workspace: Workspace, item_id: str) -> bool:
        return store.plain(item_id) and store.draft_path(workspace, item_id).is_file()

    def show(self, workspace: Workspace, item_id: str) -> dict[str, Any]:
        cycle = _cycle(workspace)
        return reviewer_view(cycle, store.load_draft(workspace, item_id))

    def render(self, view: dict[str, Any]) -> str:
        return render(view)

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
        from hippo_packs.sleep.cycle import Cycle
        from hippo_packs.sleep.cycle.landing import decide, locked

        cycle = Cycle.open(workspace, plugins)
        with locked(cycle, what="the review"):
            return decide(cycle, item_id, decisions, note, by=by)


def _cycle(workspace: Workspace) -> Cycle:
    from hippo_core import load_plugins
    from hippo_packs.sleep.cycle import Cycle

    return Cycle.open(workspace, load_plugins())


def reviewer_view(cycle: Cycle, draft: dict[str, Any]) -> dict[str, Any]:
    """The draft plus what its reviewer needs beside each operation."""
    view = {k: v for k, v in draft.items()}
    live = {c.id: c for c in core_notes.all_cores(cycle.workspace, cycle.cores_dir)}
    earlier = _earlier(cycle, draft)
    text = _fragment_texts(cycle, draft)
    operations = []
    for op in draft.get("operations", []):
        shown = dict(op)
        shown.pop("landing", None)
        target = op.get("target_core_id")
        if op.get("kind") in ("attach", "supersede"):
            if target:
                core = live.get(str(target))
                shown["target_core"] = {
                    "id": target,
                    "content": core.text if core else None,
                    "gone": core is None,
                }
            elif op.get("target_op") is not None:
                index = int(op["target_op"])
                shown["target_core"] = {
                    "op": index,
                    "content": draft["operations"][index].get("content"),
                }
        if op.get("status") == "pending" and op.get("restated_content"):
            core_text = shown.get("target_core", {}).get("content") or ""
            why = restate_problem(core_text, op["restated_content"], op.get("content") or "")
            shown["restate_check"] = (
                f'REFUSED as it stands: the rewording {why}. Approve with "restate": false '
                "to keep the core's words and land the episode as evidence, or deny it."
                if why
                else "approving REPLACES target_core's wording with restated_content: "
                "compare them first"
            )
        if op.get("choice"):  # extractive: what the model chose, and the words it chose
            shown["fragments"] = [
                {"id": i, "content": text.get(i, "(gone)")} for i in op.get("source_short_ids", [])
            ]
        if op.get("redraft_of") is not None:
            shown["earlier_attempts"] = earlier.get(op["index"], [])
        operations.append(shown)
    view["operations"] = operations
    if draft.get("terminal") and draft.get("status") == "pending":
        view["last_attempt"] = LAST_ATTEMPT
    return view


def _fragment_texts(cycle: Cycle, draft: dict[str, Any]) -> dict[str, str]:
    """The words of each fragment an extractive draft's operations were chosen from,
    waiting or already consumed."""
    wanted = {
        i
        for op in draft.get("operations", [])
        if op.get("choice")
        for i in op.get("source_short_ids", [])
    }
    found: dict[str, str] = {}
    for fragment_id in wanted:
        for folder in ("fragments", "pruned"):
            record = store.records_one(store.named(cycle.workspace, folder, fragment_id))
            if record is not None:
                found[fragment_id] = str(record.get("content") or "")
                break
    return found


def _earlier(cycle: Cycle, draft: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    """For each redrafted operation, every earlier version with its critique, oldest first."""
    attempts = {
        int(d.get("attempt", 1)): d
        for d in store.chain(cycle.workspace, str(draft.get("cluster_id")))
    }
    found: dict[int, list[dict[str, Any]]] = {}
    for op in draft.get("operations", []):
        history = []
        attempt, index = int(draft.get("attempt", 1)) - 1, op.get("redraft_of")
        while index is not None and attempt in attempts:
            ops = attempts[attempt].get("operations", [])
            if not 0 <= int(index) < len(ops):
                break
            before = ops[int(index)]
            history.append(
                {
                    "attempt": attempt,
                    "kind": before.get("kind"),
                    "target_core_id": before.get("target_core_id"),
                    "content": before.get("content"),
                    "critique": before.get("critique"),
                }
            )
            attempt, index = attempt - 1, before.get("redraft_of")
        found[op["index"]] = list(reversed(history))
    return found


def render(view: dict[str, Any]) -> str:
    """The reviewer's view as text. Every text in it came from a fragment, a model or a
    reviewer: one that holds a line break is shown quoted, a line each, under its label
    (:func:`hippo_core.labelled`), so no line of it can pass for one of the view's own."""
    lines = [
        f"draft {view['id']}: attempt {view.get('attempt', 1)}"
        + (" (the last)" if view.get("terminal") else "")
        + f", {view.get('status')}",
    ]
    if view.get("last_attempt"):
        lines += ["", view["last_attempt"]]
    for op in view.get("operations", []):
        lines += ["", f"operation {op['index']}: {op['kind']} ({op.get('status')})"]
        if op.get("topic"):
            lines += labelled("topic", op["topic"], "  ")
        target = op.get("target_core")
        if target:
            name = target.get("id") or f"the new core of operation {target.get('op')}"
            gone = " (gone)" if target.get("gone") else ""
            lines += labelled(f"core {name}{gone}", target.get("content") or "", "  ")
        lines += labelled("content", op.get("content"), "  ")
        if op.get("restated_content"):
            lines += labelled("restated_content", op["restated_content"], "  ")
        if op.get("restate_check"):
            lines.append(f"  restate check: {op['restate_check']}")
        for before in op.get("earlier_attempts", []):
            lines += labelled(
                f"attempt {before['attempt']} ({before['kind']})", before["content"], "  "
            )
            lines += labelled("critique", before.get("critique"), "    ")
        if op.get("critique") and op.get("status") == "denied":
            lines += labelled("critique", op["critique"], "  ")
        if op.get("rationale"):
            lines += labelled("rationale", op["rationale"], "  ")
        choice = op.get("choice")
        if choice:
            onto = f" onto {choice['core']}" if choice.get("core") else ""
            chosen = choice["kind"] or "not by the model (hippo's rule)"
            lines.append(f"  chosen: {chosen}{onto}; its words are the fragments':")
            for fragment in op.get("fragments", []):
                lines += labelled(str(fragment["id"]), fragment["content"], "    ")
    lines += [
        "",
        f"decide: hippo review {view['id']} --approve OP --deny OP='critique' "
        "(or --decisions FILE)",
    ]
    return "\n".join(lines) + "\n"
