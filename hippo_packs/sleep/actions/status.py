"""What the cycle is doing, in records and in plain words (``hippo sleep status``), and
the audit of every chain with per-model rates (``hippo sleep audit``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_packs.sleep.cycle import drafting
from hippo_packs.sleep.cycle.purge import flagged
from hippo_packs.sleep.cycle.tend import outcome, waiting_redrafts
from hippo_packs.sleep.cycle.tick import bedtime, brief_wanted, open_chain
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle


def status(cycle: Cycle) -> dict[str, Any]:
    state = store.state(cycle.workspace)
    now = store.now()
    due = bedtime(cycle, state)
    brief = store.open_brief(cycle.workspace)
    chain = open_chain(cycle)
    held = drafting.held_fragments(cycle)
    short = store.fragments(cycle.workspace)
    waiting = waiting_redrafts(cycle)
    last_tend = state.get("last_tend") or {}
    found: dict[str, Any] = {
        "mode": cycle.settings.mode,
        "mechanical": cycle.mechanical,
        "model_url": cycle.settings.model.url,
        "model_lifecycle": _lifecycle(cycle),
        "bedtime_at": store.iso(due),
        "past_bedtime": now >= due,
        "brief_wanted": brief_wanted(cycle, state),
        "misses": int(state.get("misses") or 0),
        "brief": brief,
        "open_chain": None,
        "fragments": {"short_term": len(short), "held": sum(f["id"] in held for f in short)},
        "flagged": [r["core"] for r in flagged(cycle)],
        "tend_cycle": cycle.settings.tend_cycle,
        "redrafts_waiting": [d["id"] for d in waiting],
        "last_sleep": (state.get("sleeps") or [None])[-1],
        "last_check": state.get("last_check"),
        "last_tend": last_tend,
        "heartbeat_seconds": cycle.settings.heartbeat,
    }
    if chain is not None:
        found["open_chain"] = {
            "cluster_id": chain["cluster_id"],
            "draft": chain["id"],
            "attempt": chain.get("attempt", 1),
            "terminal": bool(chain.get("terminal")),
            "outcome": outcome(cycle, chain),
        }
    found["say"] = say(cycle, found, state)
    return found


def say(cycle: Cycle, found: dict[str, Any], state: dict[str, Any]) -> str:
    """The state in plain words: what happened last, what waits, what to do."""
    lines = []
    if cycle.mechanical:
        lines.append(
            "Mechanical mode: no drafting model is set ([sleep.model] url), so each "
            "topic is composed by rule: a core of the fragment that best represents it, "
            "the others its satellites, a changed value a supersede."
        )
    last = found["last_sleep"]
    if last and last.get("outcome") == "failed":
        lines.append(
            f"The last sleep failed: {last.get('error')}. Its brief is spent: put that right, "
            "then write a fresh one (`hippo brief`)."
        )
    elif last:
        lines.append(f"The last sleep ({last.get('at')}) was {last.get('outcome')}.")
    else:
        lines.append("No sleep has run here yet.")
    chain = found["open_chain"]
    if chain:
        if chain["outcome"] == "under review":
            lines.append(f"Draft {chain['draft']} waits for review: hippo review {chain['draft']}.")
        else:
            lines.append(f"Chain {chain['cluster_id']}: {chain['outcome']}.")
    if found["redrafts_waiting"] and not cycle.settings.tend_cycle:
        lines.append(
            "Redrafts are waiting and the tend cycle is off: they run at bedtime, when a new "
            "brief arrives, or now with `hippo sleep tend` (tend_now)."
        )
    elif found["redrafts_waiting"]:
        lines.append("Redrafts are waiting: the next tend writes them (or `hippo sleep tend`).")
    if found["brief"] and not chain:
        lines.append("A brief is open: the next tick sleeps on it (or `hippo nudge` now).")
    elif found["brief_wanted"]:
        lines.append(
            f"Past bedtime ({found['bedtime_at']}) with no brief: write one with "
            "`hippo brief --summary TEXT`."
        )
    else:
        lines.append(f"Bedtime: {found['bedtime_at']}.")
    landing = [
        d["id"]
        for d in store.drafts(cycle.workspace)
        if any(op.get("status") == "approving" for op in d.get("operations", []))
    ]
    if landing:
        lines.append(
            f"The review of {', '.join(landing)} was interrupted while it landed; the next "
            "`hippo sleep tick` (or any review) finishes it."
        )
    if found["flagged"]:
        lines.append(f"Flagged to forget at the next tick: {', '.join(found['flagged'])}.")
    return " ".join(lines)


def history(cycle: Cycle) -> list[dict[str, Any]]:
    return list(reversed(store.state(cycle.workspace).get("sleeps") or []))


def audit(cycle: Cycle, limit: int = 20) -> dict[str, Any]:
    chains: dict[str, list[dict[str, Any]]] = {}
    for draft in store.drafts(cycle.workspace):
        chains.setdefault(str(draft.get("cluster_id")), []).append(draft)
    briefs = {b["id"]: b for b in store.briefs(cycle.workspace)}
    items: list[dict[str, Any]] = []
    models: dict[str, dict[str, Any]] = {}
    for cluster, attempts in chains.items():
        attempts.sort(key=lambda d: int(d.get("attempt", 1)))
        last = attempts[-1]
        ops = [op for a in attempts for op in a.get("operations", [])]
        # The store's order: a terminal attempt with a denial has ended, reviewed or not.
        denied = any(op.get("status") == "denied" for op in last["operations"])
        ended = "ended denied" if last.get("terminal") and denied else outcome(cycle, last)
        brief_id = attempts[0].get("brief_id_used")
        brief = briefs.get(brief_id) if brief_id else None
        items.append(
            {
                "cluster_id": cluster,
                "outcome": ended,
                "started_at": attempts[0].get("created_at"),
                "landed": sum(op.get("status") == "approved" for op in ops),
                "approved_by": _approvers(ops),
                "brief": _brief(brief, brief_id),
                "attempts": [
                    {
                        k: a.get(k)
                        for k in (
                            "id",
                            "attempt",
                            "terminal",
                            "status",
                            "created_at",
                            "reviewed_at",
                            "summary",
                        )
                    }
                    | {"model": model_key(a), "operations": len(a.get("operations", []))}
                    for a in attempts
                ],
            }
        )
        _count(models, attempts, ended)
    items.sort(key=lambda c: c["started_at"] or 0, reverse=True)
    return {
        "chains": items[:limit],
        "chain_count": len(items),
        "models": list(models.values()),
        "fragments": fragment_fates(cycle),
    }


def fragment_fates(cycle: Cycle) -> dict[str, Any]:
    """What became of every fragment ever remembered here: ``counts`` by state (pending,
    in a core, dropped, aged out, purged), the ``dropped`` ones with the decision and its
    critique, ``lost``: fragments in no state, and ``aged_early``: fragments aged out
    before a catch-up sleep had drafted from them (:func:`aged_early`). The last two are
    bugs of hippo's."""
    short = {f["id"] for f in store.fragments(cycle.workspace)}
    critiques = {
        f"{d['id']} op {op['index']}": str(op.get("critique") or "")
        for d in store.drafts(cycle.workspace)
        for op in d.get("operations", [])
        if op.get("status") == "denied"
    }
    counts = dict.fromkeys(("pending", "in a core", "dropped", "aged out", "purged"), 0)
    dropped, lost, aged = [], [], []
    for fragment_id, last in sorted(store.fates(cycle.workspace).items()):
        fate = str(last.get("fate"))
        if fragment_id in short:
            counts["pending"] += 1
        elif fate in (store.IN_A_CORE, store.DROPPED, store.AGED_OUT, store.PURGED):
            counts[fate] += 1
            if fate == store.DROPPED:
                why = str(last.get("why") or "")
                decision = why.split(":", 1)[0]
                dropped.append({"id": fragment_id, "why": why, "critique": critiques.get(decision)})
            elif fate == store.AGED_OUT:
                aged.append(last)
        else:
            lost.append({"id": fragment_id, "last": fate})
    early = aged_early(cycle, aged)
    return {"counts": counts, "dropped": dropped, "lost": lost, "aged_early": early}


def aged_early(cycle: Cycle, aged: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fates of ``aged`` (aged out) that broke the catch-up rule: aged out when the
    last sleep before was more than ``gap_grace_intervals`` bedtimes old (or there was
    none), so before a catch-up sleep had drafted from them. Each with when it went, the
    sleep before it, and where its words still are (the pruned archive, until swept).
    Judged from the ``sleep_done`` events; with none at all there is nothing to judge by."""
    from bisect import bisect_left
    from datetime import datetime

    sleeps = sorted(
        datetime.fromisoformat(str(e["at"]).replace("Z", "+00:00")).timestamp()
        for e in store.events(cycle.workspace)
        if e.get("event") == "sleep_done" and isinstance(e.get("at"), str)
    )
    if not sleeps:
        return []
    gap = cycle.settings.gap_grace_intervals * cycle.settings.interval_seconds
    found = []
    for fate in aged:
        went = float(fate.get("at") or 0)
        # A sleep's own tidy comes before its sleep_done, in the same second: the sleep
        # before an ageing is one that was done before that second.
        before = bisect_left(sleeps, int(went))
        last = sleeps[before - 1] if before else None
        if last is not None and went - last <= gap:
            continue
        pruned = store.folder(cycle.workspace, "pruned", f"{fate['id']}.json")
        found.append(
            {
                "id": fate["id"],
                "at": store.iso(went),
                "last_sleep": store.iso(last),
                "days_after": None if last is None else int((went - last) // 86400),
                "kept_in": cycle.workspace.relative(pruned) if pruned.is_file() else None,
            }
        )
    return found


def _brief(brief: dict[str, Any] | None, brief_id: str | None) -> dict[str, Any] | None:
    if brief_id is None:
        return None
    if brief is None:
        return {"id": brief_id, "missing": True}
    keys = ("id", "summary", "promote_hints", "noise_hints", "created_at", "consumed_at")
    return {k: brief.get(k) for k in keys}


def model_key(draft: dict[str, Any]) -> str:
    extra = draft.get("extra") or {}
    if extra.get("model_mode") == "mechanical":
        return "mechanical (no model)"
    name = extra.get("model_served") or extra.get("model_name")
    if not name:
        return "unknown (before model stamps)"
    prompt = extra.get("model_prompt")
    return f"{name} · prompt {prompt}" if prompt else str(name)


def _count(models: dict[str, dict[str, Any]], attempts: list[dict[str, Any]], ended: str) -> None:
    previous_denied: set[str] = set()
    for draft in attempts:
        key = model_key(draft)
        row = models.setdefault(
            key,
            {
                "model": key,
                "drafts": 0,
                "operations": 0,
                "reviewed": 0,
                "approved": 0,
                "first_reviewed": 0,
                "first_approved": 0,
                "landed": 0,
                "chains": 0,
                "attempts": 0,
                "edited_on_approval": 0,
                "redrafts_reviewed": 0,
                "repeated_denials": 0,
                "chains_ended_denied": 0,
            },
        )
        row["drafts"] += 1
        denied_now: set[str] = set()
        for op in draft.get("operations", []):
            row["operations"] += 1
            decided = op.get("status") in ("approved", "denied")
            row["reviewed"] += decided
            row["approved"] += op.get("status") == "approved"
            row["edited_on_approval"] += bool(op.get("edited_content"))
            if int(draft.get("attempt", 1)) == 1:
                row["first_reviewed"] += decided
                row["first_approved"] += op.get("status") == "approved"
            elif decided:
                row["redrafts_reviewed"] += 1
            if op.get("status") == "denied":
                sources = set(op.get("source_short_ids", []))
                if sources & previous_denied:
                    row["repeated_denials"] += 1
                denied_now |= sources
        previous_denied = denied_now
    row = models[model_key(attempts[0])]
    row["chains"] += 1
    row["attempts"] += len(attempts)
    row["landed"] += ended == "landed"
    row["chains_ended_denied"] += ended == "ended denied"
    for row in models.values():
        row["first_pass_rate"] = _rate(row["first_approved"], row["first_reviewed"])
        row["mean_attempts"] = _rate(row["attempts"], row["chains"])
        row["repeat_rate"] = _rate(row["repeated_denials"], row["redrafts_reviewed"])


def _approvers(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """Who approved what landed: how many by a person at a terminal, how many by an agent
    (through its tools, or a command with no terminal), and each one in words."""
    from hippo_core import describe_decider

    landed = [op for op in ops if op.get("status") == "approved"]
    deciders = [op.get("decided_by") or {} for op in landed]
    return {
        "person": sum(bool(by.get("person")) for by in deciders),
        "agent": sum(not by.get("person") for by in deciders),
        "who": sorted({describe_decider(by) for by in deciders if by}),
    }


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _lifecycle(cycle: Cycle) -> Any:
    """What ``/status`` says of the drafting model's server."""
    from hippo_packs.sleep.model import lifecycle

    if cycle.mechanical:
        return "mechanical (no model)"
    if not lifecycle.managed(cycle):
        return "not managed"
    return lifecycle.status(cycle)
