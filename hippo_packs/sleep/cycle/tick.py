"""The tick: tend (:mod:`.tend`), then check.

Check takes the handoffs of ended sessions as fragments, purges what was flagged, then
sleeps on an open brief when no chain is open. Past bedtime with no brief it counts misses,
and every ``brief_check_misses`` of them asks for a brief (one intent for the next session,
a ``brief_requested`` event each time).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, ModelUnreachable
from hippo_packs.sleep.cycle import compose, drafting
from hippo_packs.sleep.cycle.purge import purge_flagged
from hippo_packs.sleep.cycle.tend import catching_up, tidy
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle

BRIEF_TOPIC = "hippocampus, brief"
HISTORY = 100


# -- bedtime ------------------------------------------------------------------------------


def bedtime(cycle: Cycle, state: dict[str, Any]) -> float:
    """When the next sleep is due: ``interval_seconds`` after the last, or the next ``at``
    (local time) after it. Before the first sleep, the same counted from when the cycle
    began here (:func:`began`)."""
    last = state.get("last_sleep")
    if not isinstance(last, (int, float)):
        last = began(cycle, state)
    at = cycle.settings.at
    if not at:
        return float(last) + cycle.settings.interval_seconds
    hour, minute = (int(part) for part in at.split(":"))
    after = datetime.fromtimestamp(float(last)).astimezone()
    due = after.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if due <= after:
        due += timedelta(days=1)
    return due.timestamp()


def began(cycle: Cycle, state: dict[str, Any]) -> float:
    """When the cycle began in this workspace: the time the state first recorded
    (``since``), else when the pack was added (its ``pack.toml``, which ``hippo pack add``
    writes), else now. Kept in the state the first time it is saved."""
    since = state.get("since")
    if isinstance(since, (int, float)):
        return float(since)
    try:
        added = (cycle.workspace.packs_dir / "sleep" / "pack.toml").stat().st_mtime
    except OSError:
        added = store.now()
    state["since"] = min(added, store.now())
    return float(state["since"])


def brief_wanted(cycle: Cycle, state: dict[str, Any]) -> bool:
    """Whether the cycle waits for a brief: none is open, and it is past bedtime or a
    brief was asked for (and not answered yet)."""
    if store.open_brief(cycle.workspace) is not None:
        return False
    asked = isinstance(state.get("brief_requested_at"), (int, float))
    return asked or store.now() >= bedtime(cycle, state)


def open_chain(cycle: Cycle) -> dict[str, Any] | None:
    """The last attempt of the chain that is not closed, if any (one at a time)."""
    chains: dict[str, dict[str, Any]] = {}
    for draft in store.drafts(cycle.workspace):
        if draft.get("status") == "closed":
            continue
        current = chains.get(str(draft.get("cluster_id")))
        if current is None or int(draft.get("attempt", 1)) > int(current.get("attempt", 1)):
            chains[str(draft.get("cluster_id"))] = draft
    return min(chains.values(), key=lambda d: d["id"]) if chains else None


# -- check --------------------------------------------------------------------------------


def take_handoffs(cycle: Cycle, state: dict[str, Any]) -> list[str]:
    """Turn the handoffs of ended, declared sessions into fragments, once each: the
    session's own words about what it did (``hippo session end --handoff``). Its topic is
    the first note it links, else none (mechanical mode gives it to the core it shares most
    words with, or it waits).

    A handoff ingest derived from the session's last message (``handoff_derived``) is not
    taken: "Everything passes." is an answer, not what the session declared it learned. A
    session that declares its own handoff later is taken then."""
    import re

    from hippo_core import session_records

    seen = set(state.get("handoffs") or [])
    made = []
    for record in session_records(cycle.workspace):
        handoff = record.get("handoff")
        if record["id"] in seen or record.get("kind") != "declared" or not record.get("ended"):
            continue
        if record.get("handoff_derived"):
            continue
        if not isinstance(handoff, str) or not handoff.strip():
            continue
        link = re.search(r"\[\[([^\]|#]+)", handoff)
        topic = link.group(1).rsplit("/", 1)[-1].strip() if link else ""
        fragment = store.add_fragment(
            cycle.workspace, handoff, topic=topic, source="handoff", session=record["id"]
        )
        made.append(fragment["id"])
        seen.add(record["id"])
    state["handoffs"] = sorted(seen)
    return made


def check(cycle: Cycle, state: dict[str, Any]) -> dict[str, Any]:
    now = store.now()
    take_handoffs(cycle, state)
    purged = purge_flagged(cycle)
    brief = store.open_brief(cycle.workspace)
    chain = open_chain(cycle)
    report: dict[str, Any] = {
        "at": store.iso(now),
        "purged": [t["id"] for t in purged],
        "brief": brief["id"] if brief else None,
        "chain": chain["id"] if chain else None,
        "slept": None,
    }
    if brief is not None and chain is None:
        if _waiting_on_model(cycle, state, now):
            report["waiting"] = "the model failed lately; the next try waits retry_after_seconds"
        else:
            report["slept"] = sleep_on(cycle, state, brief)
    elif brief is None and now >= bedtime(cycle, state):
        report.update(_missed(cycle, state))
    state["last_check"] = report
    return report


def _waiting_on_model(cycle: Cycle, state: dict[str, Any], now: float) -> bool:
    failed = state.get("model_failed_at")
    wait = cycle.settings.model.retry_after_seconds
    return isinstance(failed, (int, float)) and now - float(failed) < wait


def _missed(cycle: Cycle, state: dict[str, Any]) -> dict[str, Any]:
    misses = int(state.get("misses") or 0) + 1
    state["misses"] = misses
    found: dict[str, Any] = {"misses": misses}
    if misses % cycle.settings.brief_check_misses:
        return found
    if cycle.settings.brief_pull:
        brief = pull_brief(cycle)
        if brief is not None:
            found["slept"] = sleep_on(cycle, state, brief)
            return found
    if cycle.settings.brief_request:
        ask_for_brief(cycle, state)
        found["asked_for_brief"] = True
    return found


def ask_for_brief(cycle: Cycle, state: dict[str, Any]) -> None:
    """Leave the brief request for the next session (once) and emit ``brief_requested``."""
    due = bedtime(cycle, state)
    failure = state.get("last_failure") or {}
    failed = (
        f"The last sleep failed ({failure['error']}), so its brief is spent. " if failure else ""
    )
    if not any(i.get("topic") == BRIEF_TOPIC for i in store.intents(cycle.workspace)):
        store.set_intent(
            cycle.workspace,
            BRIEF_TOPIC,
            f"{failed}I see you're looking tired, let's get ready for bed: write a brief of "
            "what mattered with `hippo brief --summary TEXT` (add --promote and --noise "
            "hints), then `hippo nudge`.",
            expires_at=max(due, store.now()) + 6 * 3600,
        )
    state["brief_requested_at"] = store.now()
    extra = {"failed": failure["error"]} if failure else {}
    cycle.emit("brief_requested", misses=state.get("misses", 0), **extra)


def pull_brief(cycle: Cycle) -> dict[str, Any] | None:
    """A brief pulled from the fragments when nobody writes one (``brief_pull``): the
    topics that have the most fragments, as the summary and promote hints."""
    free = drafting.free_fragments(cycle)
    if not free:
        return None
    groups = sorted(drafting.clusters(free), key=lambda c: -len(c.fragments))
    topics = [c.topic for c in groups if c.topic != compose.NO_TOPIC][:3]
    summary = "The fragments since the last sleep are mostly about " + (
        ", ".join(topics) if topics else "no topic in particular"
    )
    return store.add_brief(
        cycle.workspace, summary, promote=[], noise=[], completed=[], by=drafting.PULLED
    )


def sleep_on(cycle: Cycle, state: dict[str, Any], brief: dict[str, Any] | None) -> dict[str, Any]:
    """One sleep on ``brief`` (None: unsteered), recorded in the history."""
    now = store.now()
    catch_up = catching_up(cycle, state)
    record: dict[str, Any] = {
        "at": store.iso(now),
        "brief": brief["id"] if brief else None,
        "catch_up": catch_up,
    }
    try:
        result = drafting.sleep(cycle, brief, catch_up=catch_up)
    except (ModelUnreachable, HippoError) as exc:
        return _failed(cycle, state, record, brief, str(exc))
    record.update(
        outcome=result.outcome,
        draft=result.draft["id"] if result.draft else None,
        operations=len(result.draft["operations"]) if result.draft else 0,
        calls=result.calls,
        chosen=result.chosen,
        cut_off=result.cut_off,
        model_failures=result.model_failures,
        dropped=result.dropped,
        counted=len(result.counted),
    )
    if result.outcome == "nothing to draft" and result.model_failures:
        first = result.model_failures[0]
        if first.get("answer"):
            record["answer"] = first["answer"]  # for a person: `hippo sleep history`
        return _failed(cycle, state, record, brief, first["why"])
    state.pop("model_failed_at", None)
    state.pop("last_failure", None)
    if catch_up:
        cycle.emit("catch_up", draft=record["draft"])
    if brief and result.unmatched:
        cycle.emit("brief_unmatched", brief=brief["id"], hints=result.unmatched)
    if result.outcome in ("quiet", "nothing to draft", "counted") and brief:
        if result.unmatched and result.outcome == "nothing to draft":
            brief["parked"] = True
            store.save_brief(cycle.workspace, brief)
            record["brief_parked"] = True
        else:
            store.consume_brief(cycle.workspace, brief["id"], None)
    if result.outcome != "drafted":
        tidy(cycle, state, catch_up=catch_up)
    state.update(last_sleep=now, misses=0)
    state.pop("brief_requested_at", None)
    store.drop_intent(cycle.workspace, BRIEF_TOPIC)
    cycle.emit(
        "sleep_done",
        outcome=record["outcome"],
        draft=record["draft"],
        operations=record["operations"],
        cut_off=result.cut_off,
        counted=record["counted"],
    )
    _history(state, record)
    return record


def _failed(
    cycle: Cycle,
    state: dict[str, Any],
    record: dict[str, Any],
    brief: dict[str, Any] | None,
    error: str,
) -> dict[str, Any]:
    """A sleep that failed, told: ``sleep_failed`` with the reason, the brief marked
    failed (it is not slept on again: the next brief request asks for a fresh one and
    says why), the failure kept for ``hippo sleep status``. The fragments stay free."""
    now = store.now()
    state["model_failed_at"] = now
    state["last_failure"] = {"at": now, "error": error, "brief": record["brief"]}
    if brief is not None:
        brief.update(failed_at=now, failure=error)
        store.save_brief(cycle.workspace, brief)
    record.update(outcome="failed", error=error)
    cycle.emit("sleep_failed", error=error, brief=record["brief"])
    _history(state, record)
    return record


def _history(state: dict[str, Any], record: dict[str, Any]) -> None:
    state["sleeps"] = [*state.get("sleeps", []), record][-HISTORY:]
