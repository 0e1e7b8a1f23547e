"""The sleep pack's MCP tools: ``remember``, ``submit_brief``, ``forget_memory``,
``sleep_status``, ``nudge``, ``sleep_now``, ``tend_now``, ``check_now``, ``sleep_history``
and ``audit_sleeps``, each what its command does (:mod:`.actions`). A sleep or tend already
running in the workspace comes back as a tool error that starts ``busy:``.

Registered through ``hippo_register_tools`` from :mod:`.plugin`; each call opens the
cycle on the workspace as it is now, and the cycle's warnings (a ``[sleep]`` key it does
not know) come back with the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from hippo_core import Tool, ToolArguments

if TYPE_CHECKING:
    from hippo_core import Workspace
    from hippo_packs.sleep.cycle import Cycle

#: Bounds on what an agent may send: a fragment or a summary, and a hint or an id.
TEXT, HINT = 20_000, 1_000

Hint = Annotated[str, Field(max_length=HINT)]
Hints = Annotated[list[Hint], Field(max_length=100)]


#: How long a tool waits for a sleep or tend running elsewhere before it answers busy: an
#: agent is waiting on the call, as a person on a route.
TOOL_LOCK_WAIT = 1.0


def _cycle(workspace: Workspace) -> Cycle:
    from hippo_core import load_plugins
    from hippo_packs.sleep.cycle import Cycle

    cycle = Cycle.open(workspace, load_plugins())
    cycle.lock_wait = TOOL_LOCK_WAIT
    return cycle


def _with_warnings(cycle: Cycle, result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "warnings": list(cycle.warnings)} if cycle.warnings else result


class RememberArguments(ToolArguments):
    text: str = Field(min_length=1, max_length=TEXT, description="What to keep, in your words.")
    topic: Hint = Field("", description="Its topic (tags: a, b).")
    verbatim: bool = Field(
        False, description="Keep it word for word: it becomes a core as written."
    )


def remember(workspace: Workspace, given: RememberArguments) -> dict[str, Any]:
    from hippo_packs.sleep import actions

    cycle = _cycle(workspace)
    found = actions.remember(cycle, given.text, topic=given.topic, verbatim=given.verbatim)
    return _with_warnings(cycle, found)


class BriefArguments(ToolArguments):
    summary: str = Field(
        min_length=1, max_length=TEXT, description="What mattered in the work since the last sleep."
    )
    promote_hints: Hints = Field([], description="Topics worth keeping even from one fragment.")
    noise_hints: Hints = Field([], description="Topics that should never become a core.")
    completed_intents: Hints = Field([], description="Open loops that are done now.")


def submit_brief(workspace: Workspace, given: BriefArguments) -> dict[str, Any]:
    from hippo_packs.sleep import actions

    cycle = _cycle(workspace)
    found = actions.brief(
        cycle,
        given.summary,
        promote=given.promote_hints,
        noise=given.noise_hints,
        completed=given.completed_intents,
    )
    return _with_warnings(cycle, found)


class ForgetArguments(ToolArguments):
    core: Hint = Field(min_length=1, description="A core's id or its note's path.")
    reason: Annotated[str, Field(max_length=TEXT)] = Field(
        "", description="Why it must go (required)."
    )
    now: bool = Field(False, description="Purge it at once instead of at the next tick.")


def forget_memory(workspace: Workspace, given: ForgetArguments) -> dict[str, Any]:
    from hippo_packs.sleep import actions

    cycle = _cycle(workspace)
    found = actions.forget(cycle, given.core, reason=given.reason, now=given.now)
    return _with_warnings(cycle, found)


class NoArguments(ToolArguments):
    pass


def sleep_status(workspace: Workspace, given: NoArguments) -> dict[str, Any]:
    from hippo_packs.sleep.actions.status import status

    cycle = _cycle(workspace)
    return _with_warnings(cycle, status(cycle))


def nudge(workspace: Workspace, given: NoArguments) -> dict[str, Any]:
    from hippo_packs.sleep import actions

    cycle = _cycle(workspace)
    return _with_warnings(cycle, actions.nudge(cycle))


class SleepNowArguments(ToolArguments):
    without_brief: bool = Field(
        False, description="Draft unsteered now instead of asking for a brief first."
    )


def sleep_now(workspace: Workspace, given: SleepNowArguments) -> dict[str, Any]:
    from hippo_packs.sleep import actions

    cycle = _cycle(workspace)
    return _with_warnings(cycle, actions.sleep_now(cycle, without_brief=given.without_brief))


def tend_now(workspace: Workspace, given: NoArguments) -> dict[str, Any]:
    from hippo_packs.sleep import actions

    cycle = _cycle(workspace)
    return _with_warnings(cycle, actions.tend_now(cycle))


def check_now(workspace: Workspace, given: NoArguments) -> dict[str, Any]:
    from hippo_packs.sleep import actions

    cycle = _cycle(workspace)
    return _with_warnings(cycle, actions.check_now(cycle))


def sleep_history(workspace: Workspace, given: NoArguments) -> dict[str, Any]:
    from hippo_packs.sleep.actions.status import history

    cycle = _cycle(workspace)
    return _with_warnings(cycle, {"sleeps": history(cycle)})


class AuditArguments(ToolArguments):
    limit: int = Field(20, ge=1, le=1000, description="How many chains, newest first.")


def audit_sleeps(workspace: Workspace, given: AuditArguments) -> dict[str, Any]:
    from hippo_packs.sleep.actions.status import audit

    cycle = _cycle(workspace)
    return _with_warnings(cycle, audit(cycle, given.limit))


class VoiceArguments(ToolArguments):
    text: str = Field(max_length=TEXT, description="The card: who these memories belong to.")
    why: Annotated[str, Field(max_length=TEXT)] = Field("", description="Why it changed.")


def voice_card(workspace: Workspace, given: NoArguments) -> dict[str, Any]:
    from hippo_packs.sleep.cycle import voice

    cycle = _cycle(workspace)
    return _with_warnings(cycle, voice.show(cycle))


def set_voice_card(workspace: Workspace, given: VoiceArguments) -> dict[str, Any]:
    from hippo_packs.sleep.cycle import voice

    cycle = _cycle(workspace)
    return _with_warnings(cycle, voice.set_card(cycle, given.text, given.why))


def voice_card_history(workspace: Workspace, given: NoArguments) -> dict[str, Any]:
    from hippo_packs.sleep.cycle import voice

    cycle = _cycle(workspace)
    return _with_warnings(cycle, {"versions": voice.history(cycle)})


TOOLS = (
    Tool(
        "remember",
        "Keep a short-term memory fragment for the next sleep to consider.",
        RememberArguments,
        remember,
    ),
    Tool(
        "submit_brief",
        "Write the brief that steers the next sleep: what mattered, and hints on what to keep.",
        BriefArguments,
        submit_brief,
    ),
    Tool(
        "forget_memory",
        "Flag a long-term core to be purged at the next tick (or now), with a reason.",
        ForgetArguments,
        forget_memory,
    ),
    Tool(
        "sleep_status",
        "Say what the sleep cycle is doing: bedtime, the brief, the open chain, the last sleep.",
        NoArguments,
        sleep_status,
    ),
    Tool(
        "nudge",
        "Run one tick of the sleep cycle now: your turn is done.",
        NoArguments,
        nudge,
    ),
    Tool(
        "sleep_now",
        "Sleep now on the open brief; with none, ask for one first (or draft without one).",
        SleepNowArguments,
        sleep_now,
    ),
    Tool(
        "tend_now",
        "Redraft what was denied now, and close the chains that are done.",
        NoArguments,
        tend_now,
    ),
    Tool(
        "check_now",
        "Purge what was flagged and sleep on an open brief when no chain is open.",
        NoArguments,
        check_now,
    ),
    Tool("sleep_history", "Every sleep, newest first.", NoArguments, sleep_history),
    Tool(
        "audit_sleeps",
        "Every chain's outcome, and each drafting model's rates.",
        AuditArguments,
        audit_sleeps,
    ),
    Tool(
        "voice_card",
        "The voice card in use (who these memories belong to), its version and its cap.",
        NoArguments,
        voice_card,
    ),
    Tool(
        "set_voice_card",
        "Set the voice card, with why: it goes first in every prompt that drafts memories.",
        VoiceArguments,
        set_voice_card,
    ),
    Tool(
        "voice_card_history",
        "Every kept version of the voice card, newest first, with why it changed.",
        NoArguments,
        voice_card_history,
    ),
)
