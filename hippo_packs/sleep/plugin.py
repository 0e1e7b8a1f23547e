"""The sleep pack's plugin: every hook it implements, and nothing heavy at import.

``hippo context`` and the session-start hook call :func:`hippo_context_parts` on the
agent's hot path, so this module imports only what they can afford; each other hook
imports its module when it is called.
"""

from __future__ import annotations

import os

from hippo_core import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from hippo_core import ContextPart, Finding, Note, Workspace

#: Where the intents go in the context block: after the session line, before relevant notes.
INTENTS_ORDER = 45
MAX_INTENTS, MAX_INTENT_CHARS = 5, 300
#: What stays on this machine (git-ignored by ``hippo init``), relative to the workspace.
LOCAL = (
    ".hippo/sleep/fragments/",
    ".hippo/sleep/pruned/",
    ".hippo/sleep/intents.json",
    ".hippo/sleep/state.json",
    ".hippo/sleep/events.jsonl",
    ".hippo/sleep/sleep.lock",
    ".hippo/sleep/fates.jsonl",
    ".hippo/sleep/purging/",
    ".hippo/sleep/notified.jsonl",
    ".hippo/sleep/ripples.jsonl",
    ".hippo/sleep/ripples.json",
    ".hippo/sleep/model.json",
    ".hippo/sleep/formats.json",
    ".hippo/sleep/serve.lock",
    ".hippo/sleep/serve.token",
)
COMMANDS = (
    (
        "remember",
        "commands.cli:remember",
        "Keep a short-term fragment for the next sleep, or list them.",
    ),
    (
        "brief",
        "commands.cli:brief",
        "Write the brief that steers the next sleep: what mattered, and hints.",
    ),
    (
        "forget",
        "commands.cli:forget",
        "Flag a core to be purged at the next tick (or now), with a reason.",
    ),
    ("nudge", "commands.cli:nudge", "Run one tick of the sleep cycle now: your turn is done."),
    ("sleep", "commands.cli:app", "Run the sleep cycle: ticks, sleeps, tends, and what they did."),
    (
        "voice",
        "commands.cli:voice_app",
        "The voice card: who these memories belong to, first in every draft prompt.",
    ),
)


@hookimpl
def hippo_register_packs(register: Callable[[str, Path], None]) -> None:
    from pathlib import Path

    register("sleep", Path(__file__).resolve().parent / "pack")


@hookimpl
def hippo_register_commands(register: Callable[[str, str, str], None]) -> None:
    for name, target, help_text in COMMANDS:
        register(name, f"hippo_packs.sleep.{target}", help_text)


@hookimpl
def hippo_register_schedule_jobs(register: Callable[..., None]) -> None:
    # The tick decides for itself what is due; five minutes keeps a nudge's tick close.
    register(
        "sleep-tick",
        "5m",
        ("sleep", "tick"),
        "Also run `hippo sleep tick` every 5 minutes.",
        pack="sleep",
    )


@hookimpl
def hippo_register_tools(register: Callable[[Any], None]) -> None:
    from hippo_packs.sleep.commands.tools import TOOLS

    for tool in TOOLS:
        register(tool)


@hookimpl
def hippo_register_kinds(register: Callable[[Any], None]) -> None:
    from hippo_packs.sleep.hooks.kinds import ALL_KINDS

    for kind in ALL_KINDS:
        register(kind)


@hookimpl
def hippo_register_readers(register: Callable[[str, Any], None]) -> None:
    from hippo_packs.sleep.hooks.readers import READERS

    for name, reader in READERS.items():
        register(name, reader)


@hookimpl
def hippo_register_settings(register: Callable[[str, type], None]) -> None:
    from hippo_packs.sleep.config import SleepSettings

    register("sleep", SleepSettings)


@hookimpl
def hippo_register_review_queues(register: Callable[[Any], None]) -> None:
    from hippo_packs.sleep.hooks.queue import DraftQueue

    register(DraftQueue())


@hookimpl
def hippo_register_eval_runners(register: Callable[[str, Any], None]) -> None:
    from hippo_packs.sleep.hooks.evals import SleepEval

    register("sleep", SleepEval())


@hookimpl
def hippo_pass_gate(workspace: Workspace, pass_: Any, chunk: Any) -> str | None:
    if pass_.pack != "sleep":
        return None
    return "the sleep pack's passes run from `hippo sleep`, when a brief is open and no chain is"


@hookimpl
def hippo_register_validators(register: Callable[[Any], None]) -> None:
    from hippo_packs.sleep.hooks.dreams import CoresFolder

    register(CoresFolder())


@hookimpl
def hippo_notes_left_alone(workspace: Workspace, pass_: Any, notes: list[Note]) -> dict[str, str]:
    if pass_.pack == "sleep" or not os.path.isdir(workspace.inside(".hippo", "packs", "sleep")):
        return {}
    from hippo_packs.sleep.hooks.dreams import left_alone

    return left_alone(workspace, notes)


@hookimpl
def hippo_local_paths(workspace: Workspace) -> list[str]:
    return list(LOCAL)


@hookimpl
def hippo_context_parts(
    workspace: Workspace, session: str | None, task: str | None
) -> list[ContextPart]:
    if not os.path.isdir(workspace.inside(".hippo", "packs", "sleep")):
        return []
    from hippo_core import ContextPart

    return [ContextPart("open loops", lambda: _intents(workspace), True, INTENTS_ORDER)]


def _intents(workspace: Workspace) -> str:
    """The near-term intents (the brief request, the draft waiting for review), a line
    each, at most five, each at most 300 characters: what the main model sees first."""
    from hippo_core import HippoError, read_json_object
    from hippo_core import now as clock_now

    path = workspace.inside(".hippo", "sleep", "intents.json")
    try:
        value = read_json_object(path, ".hippo/sleep/intents.json", kind="open loops")
    except HippoError:
        return ""  # none yet, or damaged: the next write replaces it
    found = value.get("intents")
    now = clock_now()
    lines = []
    for intent in found if isinstance(found, list) else []:
        if not isinstance(intent, dict) or not isinstance(intent.get("intent"), str):
            continue
        expires = intent.get("expires_at")
        if isinstance(expires, (int, float)) and expires < now:
            continue
        text = " ".join(intent["intent"].split())
        if len(text) > MAX_INTENT_CHARS:
            text = text[: MAX_INTENT_CHARS - 1] + "…"
        lines.append(f"- {text}\n")
    if not lines:
        return ""
    return "open loops:\n" + "".join(lines[-MAX_INTENTS:])


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    if not os.path.isdir(workspace.inside(".hippo", "packs", "sleep")):
        return []
    from hippo_packs.sleep.hooks.doctor import checks

    return checks(workspace)


@hookimpl
def hippo_event(workspace: Any, event: Any) -> None:
    if event.name != "reverted" and not event.name.startswith("sleep."):
        return  # a dream's own steps: nothing for the cycle
    from hippo_core import HippoError, load_plugins
    from hippo_packs.sleep.cycle import Cycle
    from hippo_packs.sleep.wake import notify, ripple

    try:
        cycle = Cycle.open(workspace, load_plugins())  # the settings, read once per event
    except HippoError:
        return  # no sleep pack here, or settings it cannot read: the cycle is not running
    if event.name == "reverted":
        _restored(cycle, event)
        return
    notify.heard(workspace, cycle.settings, event)
    ripple.heard(workspace, cycle.settings, event)


def _restored(cycle: Any, event: Any) -> None:
    """A revert that put a core back to its earlier words is the cycle's ``restored``."""
    notes = cycle.workspace.settings.notes_dir
    note = str(event.data.get("note") or "").removeprefix(f"{notes}/")
    if note.startswith(f"{cycle.cores_dir}/") and note.endswith(".md"):
        core = note.removeprefix(f"{cycle.cores_dir}/").removesuffix(".md")
        cycle.emit("restored", ids=[core], receipt=str(event.data.get("receipt", "")))
