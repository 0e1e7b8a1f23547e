"""``hippo doctor``'s checks of the sleep cycle: its settings, its store, what waits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo_core import Finding, HippoError

if TYPE_CHECKING:
    from hippo_core import Workspace


def checks(workspace: Workspace) -> list[Finding]:
    from hippo_core import load_plugins
    from hippo_packs.sleep.cycle import Cycle
    from hippo_packs.sleep.cycle.tick import open_chain
    from hippo_packs.sleep.records import store

    try:
        cycle = Cycle.open(workspace, load_plugins())
    except HippoError as exc:
        return [Finding("error", "sleep", str(exc))]
    found = [Finding("warning", "sleep", line) for line in cycle.warnings]
    try:
        cycle.pass_("draft")
        cycle.pass_("redraft")
    except HippoError as exc:
        found.append(Finding("error", "sleep", str(exc)))
    if cycle.mechanical:
        found.append(
            Finding(
                "info",
                "sleep",
                "mechanical mode: no drafting model is set; set [sleep.model] url to an "
                "OpenAI-compatible endpoint (llama-server, vLLM, Ollama) to draft with one",
            )
        )
    chain = open_chain(cycle)
    if chain is not None and chain.get("status") == "pending":
        found.append(
            Finding(
                "info", "sleep", f"draft {chain['id']} waits for review: hippo review {chain['id']}"
            )
        )
    for tombstone in store.records(workspace, "tombstones"):
        if tombstone.get("state") == "purging":
            found.append(
                Finding(
                    "warning",
                    "sleep",
                    f"the purge of {tombstone.get('id')} was interrupted; the next "
                    "`hippo sleep tick` finishes it",
                )
            )
    return found
