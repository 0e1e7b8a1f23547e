"""What the ways in do, as plain functions over one cycle: the one layer under the
commands, the MCP tools and the service's routes.

``hippo remember``, ``brief``, ``forget``, ``nudge`` and ``sleep tick`` print what these
return (:mod:`hippo_packs.sleep.commands.cli`); the tools ``remember``, ``submit_brief``,
``forget_memory`` and ``nudge`` send it as it is (:mod:`hippo_packs.sleep.commands.tools`),
and so do the routes (:mod:`hippo_packs.sleep.service.app`). Each takes the cycle's lock
where it writes. What the cycle is doing, in words, is :mod:`.status`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_packs.sleep.cycle.landing import locked

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle


def tick(cycle: Cycle, *, force_tend: bool = False) -> dict[str, Any]:
    """One whole tick: the ripples that waited, then tend and check under the lock, then
    the drafting model's server stopped if the cycle is over or it idled past
    ``keep_warm_seconds``; what it did (``tend``, ``check``, ``model_stopped``)."""
    from hippo_packs.sleep.cycle import tick as steps
    from hippo_packs.sleep.cycle.tend import tend
    from hippo_packs.sleep.records import store
    from hippo_packs.sleep.wake import ripple

    with locked(cycle, what="the tick"):
        if cycle.settings.ripple.type:
            ripple.catch_up(cycle.workspace, cycle.settings)
        state = store.state(cycle.workspace)
        tended = tend(cycle, state, bedtime_at=steps.bedtime(cycle, state), force=force_tend)
        checked = steps.check(cycle, state)
        store.save_state(cycle.workspace, state)
        after = _after(cycle, {"tend": tended, "check": checked})
    return after


def failures(done: dict[str, Any]) -> list[str]:
    """What failed in a tick's record (``tend``, ``check``), in words: the sleep that
    failed, a redraft that failed. Empty when all it ran went through."""
    found = []
    slept = (done.get("check") or {}).get("slept") or {}
    if slept.get("outcome") == "failed":
        found.append(f"the sleep failed: {slept.get('error')}")
    tended = done.get("tend") or {}
    if tended.get("error"):
        found.append(f"the tend failed: {tended['error']}")
    return found


def remember(cycle: Cycle, text: str, *, topic: str, verbatim: bool) -> dict[str, Any]:
    """Keep a short-term fragment; ``hippo remember --json`` prints what this returns."""
    from hippo_core import acting_now
    from hippo_packs.sleep.records import store

    by = acting_now(cycle.workspace, "remember")
    with locked(cycle, what="remember"):
        record = store.add_fragment(cycle.workspace, text, topic=topic, verbatim=verbatim, by=by)
    return {"ok": True, "id": record["id"], "tier": "short", "fragment": record}


def waiting_fragments(cycle: Cycle) -> list[dict[str, Any]]:
    """The fragments waiting for a sleep, newest first, each with the draft holding it."""
    from hippo_packs.sleep.cycle import drafting
    from hippo_packs.sleep.records import store

    held = drafting.held_fragments(cycle)
    found = [{**f, "held_by_draft": held.get(f["id"])} for f in store.fragments(cycle.workspace)]
    return list(reversed(found))


def brief(
    cycle: Cycle, summary: str, *, promote: list[str], noise: list[str], completed: list[str]
) -> dict[str, Any]:
    """Open a brief for the next sleep; every older one not consumed yet (open, parked or
    spent by a failed sleep) is superseded by it, and the request for a brief is dropped."""
    from hippo_core import acting_now
    from hippo_packs.sleep.records import store

    author = acting_now(cycle.workspace, "submit_brief")
    with locked(cycle, what="the brief"):
        record = store.add_brief(
            cycle.workspace,
            summary,
            promote=promote,
            noise=noise,
            completed=completed,
            author=author,
        )
        for older in store.briefs(cycle.workspace):
            if older["id"] != record["id"] and not older.get("consumed_at"):
                store.consume_brief(cycle.workspace, older["id"], f"superseded-by-{record['id']}")
        store.drop_intent(cycle.workspace, "hippocampus, brief")
    return {"ok": True, "id": record["id"], "brief": record}


def forget(cycle: Cycle, core: str, *, reason: str, now: bool) -> dict[str, Any]:
    """Flag ``core`` (an id or its note's path) to be purged at the next tick, or purge it
    ``now``, leaving a tombstone."""
    from hippo_packs.sleep.cycle import purge

    with locked(cycle, what="forget"):
        done = purge.forgotten(cycle, core)
        if done is not None:
            return {"ok": True, "already": True, "tombstone": done}
        if now:
            return {"ok": True, "tombstone": purge.purge_now(cycle, core, reason)}
        flagged = purge.flag(cycle, core, reason)
    return {"ok": True, "flagged": flagged["core"], "reason": flagged["reason"]}


def nudge(cycle: Cycle) -> dict[str, Any]:
    """Run one tick now, redrafting what was denied whatever the clock says, once; what
    the tick did (``tend``, ``check``), as ``hippo nudge --json`` prints it."""
    noted(cycle)
    return {"ok": True, "woke": True, "message": "ran one tick", **tick(cycle)}


def noted(cycle: Cycle) -> None:
    """Record a nudge: its event, and the next tick's leave to redraft whatever the clock
    says, once."""
    from hippo_packs.sleep.records import store

    cycle.emit("nudged")
    state = store.state(cycle.workspace)
    state["nudged"] = True
    store.save_state(cycle.workspace, state)


def sleep_now(cycle: Cycle, *, without_brief: bool) -> dict[str, Any]:
    """Sleep now on the open brief; with none, ask for one (or draft unsteered with
    ``without_brief``). ``ok`` is false, with an ``error``, while a chain is open."""
    from hippo_packs.sleep.cycle import tick as steps
    from hippo_packs.sleep.records import store

    with locked(cycle, what="the sleep"):
        state = store.state(cycle.workspace)
        chain = steps.open_chain(cycle)
        brief = store.open_brief(cycle.workspace)
        if chain is not None:
            result: dict[str, Any] = {
                "ok": False,
                "error": f"chain {chain['cluster_id']} is open (draft {chain['id']}): one chain "
                "at a time; review it with `hippo review`",
            }
        elif brief is None and not without_brief and cycle.settings.brief_request:
            steps.ask_for_brief(cycle, state)
            result = {"ok": True, "asked_for_brief": True}
        else:
            slept = steps.sleep_on(cycle, state, brief)
            result = {"ok": True, "asked_for_brief": False, "sleep": slept}
        store.save_state(cycle.workspace, state)
    return result


def tend_now(cycle: Cycle) -> dict[str, Any]:
    """Redraft what was denied now, whatever the clock says, and close what landed; then,
    as a whole tick does, stop the drafting model's server if it is no longer needed."""
    from hippo_packs.sleep.cycle import tick as steps
    from hippo_packs.sleep.cycle.tend import tend
    from hippo_packs.sleep.records import store

    with locked(cycle, what="the tend"):
        state = store.state(cycle.workspace)
        done = tend(cycle, state, bedtime_at=steps.bedtime(cycle, state), force=True)
        store.save_state(cycle.workspace, state)
        return _after(cycle, done)


def check_now(cycle: Cycle) -> dict[str, Any]:
    """The check half of a tick, now: purge what was flagged, take the handoffs, and sleep
    on an open brief when no chain is open; then stop the drafting model's server if it
    is no longer needed."""
    from hippo_packs.sleep.cycle import tick as steps
    from hippo_packs.sleep.records import store

    with locked(cycle, what="the check"):
        state = store.state(cycle.workspace)
        done = steps.check(cycle, state)
        store.save_state(cycle.workspace, state)
        return _after(cycle, done)


def _after(cycle: Cycle, done: dict[str, Any]) -> dict[str, Any]:
    """The lifecycle's after-tick step (external mode calls the halves, never a whole
    tick): the server hippo started is stopped when no chain is open or it idled past
    ``keep_warm_seconds``; ``model_stopped`` says why."""
    from hippo_packs.sleep.cycle import tick as steps
    from hippo_packs.sleep.model import lifecycle

    stopped = lifecycle.after_tick(cycle, steps.open_chain(cycle) is not None)
    return {**done, "model_stopped": stopped} if stopped else done
