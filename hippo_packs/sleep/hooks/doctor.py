"""``hippo doctor``'s checks of the sleep cycle: its settings, its store, what waits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo_core import Finding, HippoError

if TYPE_CHECKING:
    from hippo_core import Workspace
    from hippo_packs.sleep.cycle import Cycle


#: The keys of ``[sleep.*]`` that hold a credential, each with a ``<key>_env`` and a
#: ``<key>_keyring`` sibling to keep it out of the settings.
CREDENTIALS = (
    ("serve", "bearer_token"),
    ("notify", "bearer_token"),
    ("notify", "secret"),
    ("ripple", "bearer_token"),
    ("ripple", "secret"),
)
#: The URLs of ``[sleep.*]``, which must not hold a password either, and where the
#: credential goes instead.
URLS = (
    ("model", "url", "api_key_env"),
    ("notify", "webhook_url", "bearer_token_env or bearer_token_keyring"),
    ("ripple", "url", "bearer_token_env or bearer_token_keyring"),
)


def credentials_written(workspace: Workspace) -> list[Finding]:
    """A warning for each credential written in the settings, which are committed: read
    from the table as written, so a key the settings refuse is still seen."""
    from urllib.parse import urlsplit

    shown = workspace.relative(workspace.settings_path)
    sleep = workspace.settings.tables.get("sleep")
    found = []
    for table, key in CREDENTIALS:
        block = sleep.get(table) if isinstance(sleep, dict) else None
        value = block.get(key) if isinstance(block, dict) else None
        if isinstance(value, str) and value:
            found.append(
                Finding(
                    "warning",
                    "sleep",
                    f"[sleep.{table}] {key} is written in {shown}, which is committed: "
                    f"name an environment variable in {key}_env or a keyring entry in "
                    f"{key}_keyring instead, and remove {key}",
                    where=shown,
                )
            )
    for table, key, instead in URLS:
        block = sleep.get(table) if isinstance(sleep, dict) else None
        value = block.get(key) if isinstance(block, dict) else None
        try:
            password = isinstance(value, str) and bool(urlsplit(value).password)
        except ValueError:
            password = False
        if password:
            found.append(
                Finding(
                    "warning",
                    "sleep",
                    f"[sleep.{table}] {key} holds a password, and {shown} is committed: "
                    f"give the URL without it, and the credential through {instead}",
                    where=shown,
                )
            )
    return found


def _review(cycle: Cycle) -> list[Finding]:
    """Who may approve here, and each change of ``[sleep] review`` no person acknowledged."""
    from hippo_packs.sleep.records import review_setting

    in_force = review_setting.in_force(cycle.workspace, cycle.settings.review)
    who = (
        "only a person at a terminal approves drafts and confirms queued proposals"
        if in_force.value == "person"
        else "the main model approves drafts through its tools (never what its own session "
        "wrote), and a person at a terminal approves verbatims and cores from one fragment"
    )
    found = [Finding("info", "sleep", f"{in_force.why}: {who}")]
    for change in review_setting.waiting(cycle.workspace):
        found.append(
            Finding(
                "warning",
                "sleep",
                f"{review_setting.described(change)}, and no person has acknowledged it: "
                f"`{review_setting.ACKNOWLEDGE}` in a terminal",
            )
        )
    return found


def checks(workspace: Workspace) -> list[Finding]:
    from hippo_core import load_plugins
    from hippo_packs.sleep.cycle import Cycle
    from hippo_packs.sleep.cycle.tick import open_chain
    from hippo_packs.sleep.records import store

    written = credentials_written(workspace)
    try:
        cycle = Cycle.open(workspace, load_plugins())
    except HippoError as exc:
        return [Finding("error", "sleep", str(exc)), *written]
    found = [Finding("warning", "sleep", line) for line in cycle.warnings] + written
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
    found += _review(cycle)
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
