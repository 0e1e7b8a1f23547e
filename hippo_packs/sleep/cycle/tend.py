"""Tending: closing the chains that are done and redrafting what was denied.

A chain is done when every operation of its last attempt has a verdict and none was
denied (it landed), or its last attempt was terminal and something was denied (it ended
denied). Closing it closes its drafts, consumes the brief that opened it, drops the review
note and tidies. A denied operation of a non-terminal attempt is written again from its
critique: every ``tend_interval_seconds`` with the tend cycle on; with it off, only once
bedtime has passed or a new brief waits; always when nudged or asked.

Every tidy, whichever step runs it, keeps the catch-up rule (:func:`catching_up`): back
from a gap, nothing ages out until the catch-up sleep has drafted from what waited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, ModelUnreachable
from hippo_packs.sleep.cycle import choices, compose, drafting, voice
from hippo_packs.sleep.cycle.operations import check_operations, empty_answer, salvage_operations
from hippo_packs.sleep.model.lifecycle import backend_for
from hippo_packs.sleep.records import cores as core_notes
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import ModelBackend
    from hippo_packs.sleep.cycle import Cycle


def outcome(cycle: Cycle, last: dict[str, Any]) -> str:
    """What the chain whose last attempt is ``last`` has come to."""
    ops = last.get("operations", [])
    denied = any(op.get("status") == "denied" for op in ops)
    if last.get("status") not in ("reviewed", "closed"):
        return "under review"
    if denied and last.get("terminal"):
        return "ended denied"
    if denied:
        return "waiting for a redraft"
    return "landed"


def cull(cycle: Cycle, state: dict[str, Any]) -> list[str]:
    """Close every chain that is done, each tidied after it; the ids of the drafts closed."""
    closed: list[str] = []
    for draft in store.drafts(cycle.workspace):
        if draft.get("status") == "closed":
            continue
        attempts = store.chain(cycle.workspace, str(draft.get("cluster_id")))
        last = attempts[-1]
        if draft["id"] != last["id"]:
            continue
        ended = outcome(cycle, last)
        if ended not in ("landed", "ended denied"):
            continue
        for attempt in attempts:
            if attempt.get("status") != "closed":
                attempt["status"] = "closed"
                attempt.setdefault("extra", {})["closed_at"] = store.now()
                store.save_draft(cycle.workspace, attempt)
                closed.append(attempt["id"])
        if ended == "ended denied" and cycle.mechanical:
            # Mechanical mode would draft them the same way again: what the last review
            # refused for its own words is dropped, with the critique as the reason.
            _drop(cycle, last, compose.denied_alone(last))
        store.consume_brief(cycle.workspace, last.get("brief_id_used"), last["id"])
        store.drop_intent(cycle.workspace, drafting.REVIEW_TOPIC)
        landed = sum(op.get("status") == "approved" for a in attempts for op in a["operations"])
        cycle.emit(
            "chain_ended",
            cluster=last["cluster_id"],
            outcome=ended,
            landed=landed,
            attempts=len(attempts),
        )
        tidy(cycle, state, catch_up=bool(last.get("extra", {}).get("catch_up")))
    return closed


def waiting_redrafts(cycle: Cycle) -> list[dict[str, Any]]:
    found = []
    for draft in store.drafts(cycle.workspace):
        if draft.get("status") == "closed":
            continue
        last = store.chain(cycle.workspace, str(draft.get("cluster_id")))[-1]
        if draft["id"] == last["id"] and outcome(cycle, last) == "waiting for a redraft":
            found.append(last)
    return found


def tend(
    cycle: Cycle, state: dict[str, Any], *, bedtime_at: float, force: bool = False
) -> dict[str, Any]:
    closed = cull(cycle, state)
    waiting = waiting_redrafts(cycle)
    now = store.now()
    nudged = bool(state.pop("nudged", False))
    last = float(state.get("last_redraft") or 0)
    brief = store.open_brief(cycle.workspace)
    new_brief = brief is not None and all(brief["id"] != d.get("brief_id_used") for d in waiting)
    if force or nudged:
        due = True
    elif cycle.settings.tend_cycle:
        due = now - last >= cycle.settings.tend_interval_seconds
    else:
        due = now >= bedtime_at or new_brief
    report: dict[str, Any] = {
        "at": store.iso(now),
        "closed": closed,
        "resubmitted": [],
        "deferred": [],
    }
    if waiting and not due:
        report["deferred"] = [d["id"] for d in waiting]
    elif waiting:
        state["last_redraft"] = now
        for draft in waiting:
            try:
                made = redraft(cycle, draft)
            except (ModelUnreachable, HippoError) as exc:
                report["error"] = str(exc)
                cycle.emit("sleep_failed", error=str(exc), during="tend", draft=draft["id"])
                report["deferred"].append(draft["id"])
                continue
            if made is not None:
                report["resubmitted"].append(made["id"])
        report["closed"] += cull(cycle, state)
    state["last_tend"] = dict(report)
    return report


def redraft(cycle: Cycle, draft: dict[str, Any]) -> dict[str, Any] | None:
    """The next attempt of ``draft``'s chain: each denied operation written again from its
    critique (by the model, or in mechanical mode by rule: :func:`compose.redraft`). A
    redraft never rewords a core. None when nothing came back (the chain ends as denied:
    the draft is marked so, and the next cull closes it)."""
    from hippo_core import render_prompt

    live = {c.id: c for c in core_notes.all_cores(cycle.workspace, cycle.cores_dir)}
    short = {f["id"]: f for f in store.fragments(cycle.workspace)}
    if cycle.mechanical:
        return _mechanical_redraft(cycle, draft, short, live)
    backend = backend_for(cycle)
    if cycle.settings.model.draft == "extractive":
        return _rechoose(cycle, backend, draft, short, live)
    operations: list[dict[str, Any]] = []
    failures: list[dict[str, str]] = []
    for op in draft["operations"]:
        if op.get("status") != "denied":
            continue
        pile = [short[i] for i in op.get("source_short_ids", []) if i in short]
        if not pile:
            continue
        target = live.get(str(op.get("target_core_id") or ""))
        prompt = render_prompt(
            cycle.pass_("redraft"),
            {
                "critiques": _critique(op),
                "fragments": drafting.fragments_text(pile),
                "cores": drafting.cores_text([target] if target else [], start_only=True),
            },
        )
        reply = backend.complete(voice.block(cycle)[0] + prompt)
        raw, cut = salvage_operations(reply.text, cut_off=reply.cut_off)
        if not raw:
            if not empty_answer(reply.text):
                failures.append(
                    {"op": str(op["index"]), "why": drafting.failure(cycle, reply.text, cut)}
                )
            continue
        kept, _dropped = check_operations(
            [r for r in raw if not (isinstance(r, dict) and r.get("kind") == "verbatim")][:1],
            pile,
            live=live,
            topic=str(op.get("topic") or ""),
            redraft=True,
        )
        for new in kept:
            new.pop("target_op", None)
            if new["kind"] in ("attach", "supersede") and "target_core_id" not in new:
                continue
            new["redraft_of"] = op["index"]
            operations.append(new)
    if not operations:
        if failures:
            raise HippoError(f"the redraft of {draft['id']} failed: {failures[0]['why']}")
        draft.setdefault("extra", {})["redraft"] = "nothing came back"
        draft["terminal"] = True  # nothing more will come: the chain ends at the next cull
        store.save_draft(cycle.workspace, draft)
        return None
    return drafting.submit(cycle, operations, None, live, chain_of=draft)


def _rechoose(
    cycle: Cycle,
    backend: ModelBackend,
    draft: dict[str, Any],
    short: dict[str, dict[str, Any]],
    live: dict[str, core_notes.Core],
) -> dict[str, Any] | None:
    """The next attempt of an extractive draft: for each topic of its denied operations,
    the model chooses again over their fragments, told every critique (:mod:`.choices`)."""
    from hippo_core import render_prompt

    refused, _no_supersede = compose.refusals(store.drafts(cycle.workspace))
    denied: dict[str, list[dict[str, Any]]] = {}
    for op in draft["operations"]:
        if op.get("status") == "denied" and not op.get("forgotten"):
            denied.setdefault(str(op.get("topic") or ""), []).append(op)
    operations: list[dict[str, Any]] = []
    dropped: list[dict[str, str]] = []
    failures: list[str] = []
    for topic, ops in denied.items():
        ids = [i for op in ops for i in op.get("source_short_ids", [])]
        pile = [short[i] for i in dict.fromkeys(ids) if i in short]
        if not pile:
            continue
        # Words a review refused as a core's go last: a small model picks the first ones.
        pile.sort(key=lambda f: f["id"] in refused)
        text = "\n".join(str(f["content"]) for f in pile)
        near = core_notes.nearest(list(live.values()), text, cycle.settings.candidate_cores)
        named = [live[t] for op in ops if (t := str(op.get("target_core_id") or "")) in live]
        near = list({c.id: c for c in [*named, *near]}.values())  # the cores they named first
        prompt = render_prompt(
            cycle.pass_("rechoose"),
            {
                "critiques": "\n".join(_critique(op) for op in ops),
                "fragments": drafting.fragments_text(pile),
                "cores": choices.cores_text(near),
            },
        )
        reply = backend.complete(
            voice.block(cycle)[0] + prompt, json_schema=choices.schema(len(pile), near)
        )
        raw, cut = salvage_operations(reply.text, cut_off=reply.cut_off)
        if not raw:
            if not empty_answer(reply.text):
                failures.append(drafting.failure(cycle, reply.text, cut))
            continue
        made, lost = choices.compose_choices(
            raw, pile, near, topic, by=drafting.model_name(cycle), refused=refused
        )
        dropped += [{"topic": topic, **d} for d in lost]
        for new in compose.shifted(made, len(operations)):
            # the denied operation its first fragment came from (the review shows its history)
            first = new["source_short_ids"][0]
            new["redraft_of"] = next(
                (op["index"] for op in ops if first in op.get("source_short_ids", [])),
                ops[0]["index"],
            )
        operations += made
    if not operations:
        if failures:
            raise HippoError(f"the redraft of {draft['id']} failed: {failures[0]}")
        draft.setdefault("extra", {}).update(redraft="nothing came back", redraft_dropped=dropped)
        draft["terminal"] = True  # nothing more will come: the chain ends at the next cull
        store.save_draft(cycle.workspace, draft)
        return None
    result = drafting.Drafted("drafted", dropped=dropped)
    return drafting.submit(cycle, operations, None, live, chain_of=draft, result=result)


def _mechanical_redraft(
    cycle: Cycle,
    draft: dict[str, Any],
    short: dict[str, dict[str, Any]],
    live: dict[str, core_notes.Core],
) -> dict[str, Any] | None:
    refused, no_supersede = compose.refusals(store.drafts(cycle.workspace))
    operations, dropped = compose.redraft(draft, short, live, refused, no_supersede)
    for fragment_id, why in dropped:
        store.prune(cycle.workspace, [fragment_id], f"{draft['id']} {why}", store.DROPPED)
    if not operations:
        draft.setdefault("extra", {})["redraft"] = "nothing came back"
        draft["terminal"] = True  # nothing more will come: the chain ends at the next cull
        store.save_draft(cycle.workspace, draft)
        return None
    return drafting.submit(cycle, operations, None, live, chain_of=draft)


def _drop(cycle: Cycle, draft: dict[str, Any], denied: list[dict[str, Any]]) -> None:
    """The fragments of ``denied`` operations, dropped as the review decided."""
    for op in denied:
        why = f"{draft['id']} {compose.dropped_because(op)}"
        store.prune(cycle.workspace, list(op.get("source_short_ids", [])), why, store.DROPPED)


def _critique(op: dict[str, Any]) -> str:
    lines = [f"kind: {op.get('kind')}"]
    if op.get("target_core_id"):
        lines.append(f"target_core_id: {op['target_core_id']}")
    lines += [f"content: {op.get('content')}", f"critique: {op.get('critique')}"]
    return "\n".join(lines) + "\n"


def catching_up(cycle: Cycle, state: dict[str, Any]) -> bool:
    """Whether the next sleep is a catch-up: no sleep has run here yet, or the last one is
    more than ``gap_grace_intervals`` bedtimes (``interval_seconds``) ago."""
    last = state.get("last_sleep")
    gap = cycle.settings.gap_grace_intervals * cycle.settings.interval_seconds
    return not isinstance(last, (int, float)) or store.now() - float(last) > gap


def tidy(cycle: Cycle, state: dict[str, Any], *, catch_up: bool) -> dict[str, int]:
    """Age out old free fragments, drop expired intents, sweep the pruned archive.

    The tidy of a catch-up sleep (``catch_up``: its own, or when its chain closes) only
    drops expired intents, so nothing that never had its chance goes; and so does any tidy
    while the catch-up sleep is still to come (:func:`catching_up`): the first tick back
    from a month away may close a chain opened before it, and what waited a month is not
    aged out before a sleep has drafted from it."""
    now = store.now()
    intents = store.intents(cycle.workspace)
    kept = [i for i in intents if not (i.get("expires_at") and float(i["expires_at"]) < now)]
    if len(kept) != len(intents):
        store.save_intents(cycle.workspace, kept)
    done = {"aged_out": 0, "expired": len(intents) - len(kept), "pruned_swept": 0}
    if catch_up or catching_up(cycle, state):
        return done
    held = drafting.held_fragments(cycle)
    old = [
        f["id"]
        for f in store.fragments(cycle.workspace)
        if f["id"] not in held
        and not f.get("verbatim")
        and now - float(f.get("created") or now) > cycle.settings.short_term_seconds
    ]
    aged = store.prune(cycle.workspace, old, "aged out", store.AGED_OUT)
    done["aged_out"] = len(aged)
    keep_for = cycle.settings.pruned_safety_days * 86400
    for path in store.folder(cycle.workspace, "pruned").glob("*.json"):
        record = store.records_one(path)
        if record and now - float(record.get("pruned_at") or now) > keep_for:
            path.unlink(missing_ok=True)
            done["pruned_swept"] += 1
    return done
