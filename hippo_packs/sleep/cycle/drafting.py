"""A sleep: the free fragments, grouped by topic, drafted into one draft of operations.

First, a fragment in a core's own words (a repeated fact) is counted as that core's
evidence (:mod:`.evidence`), with no operation. Then each cluster whose fragments reach its
topic's threshold goes to the drafting model with the nearest cores and the brief as the
steer (or, in mechanical mode, is composed by rule: :mod:`.compose`). Fragments marked
``--verbatim`` become ``verbatim`` operations word for word. What the model writes is
checked (:mod:`.operations`); the draft is submitted once, and a review intent left for the
session that reviews it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo_core import note_digest, redact_text
from hippo_packs.sleep.cycle import choices, compose, evidence, voice
from hippo_packs.sleep.cycle.compose import NO_TOPIC, topic_key
from hippo_packs.sleep.cycle.operations import check_operations, empty_answer, salvage_operations
from hippo_packs.sleep.model.lifecycle import backend_for
from hippo_packs.sleep.records import cores as core_notes
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import ModelBackend
    from hippo_packs.sleep.cycle import Cycle

REVIEW_TOPIC = "hippocampus, review"
MAIN_MODEL, PULLED = "the main model", "the fragments"


@dataclass
class Cluster:
    topic: str
    fragments: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(f["content"] for f in self.fragments)


@dataclass
class Drafted:
    """What one sleep did."""

    outcome: str  # drafted, counted, quiet, nothing to draft, failed
    draft: dict[str, Any] | None = None
    counted: list[dict[str, str]] = field(default_factory=list)
    """Fragments counted as evidence of the core whose words they repeat (no operation)."""
    calls: int = 0
    cut_off: int = 0
    model_failures: list[dict[str, str]] = field(default_factory=list)
    chosen: int = 0
    """Choices the model made (extractive drafting), kept or dropped."""
    dropped: list[dict[str, str]] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    error: str = ""


def clusters(fragments: list[dict[str, Any]]) -> list[Cluster]:
    grouped: dict[str, Cluster] = {}
    for fragment in fragments:
        key = topic_key(str(fragment.get("topic") or ""))
        grouped.setdefault(key, Cluster(key)).fragments.append(fragment)
    return list(grouped.values())


def _matches(hint: str, cluster: Cluster) -> bool:
    wanted = hint.strip().lower()
    return bool(wanted) and (
        wanted in cluster.topic.lower()
        or any(wanted in f["content"].lower() for f in cluster.fragments)
    )


def threshold(cluster: Cluster, brief: dict[str, Any] | None, minimum: int) -> int | None:
    """How many fragments the cluster needs to be drafted: a matched noise hint makes it
    unreachable (None), a matched promote hint drops it to one, else ``minimum``."""
    if brief and any(_matches(h, cluster) for h in brief.get("noise_hints", [])):
        return None
    if brief and any(_matches(h, cluster) for h in brief.get("promote_hints", [])):
        return 1
    return minimum


def held_fragments(cycle: Cycle) -> dict[str, str]:
    """Fragments a draft holds, with the draft: cited by a pending operation of a pending
    draft, or by a denied operation of a reviewed, non-terminal draft that is the last
    attempt of its chain (its redraft has not come yet)."""
    held: dict[str, str] = {}
    every = store.drafts(cycle.workspace)
    latest: dict[str, int] = {}
    for draft in every:
        cluster = str(draft.get("cluster_id"))
        latest[cluster] = max(latest.get(cluster, 0), int(draft.get("attempt", 1)))
    for draft in every:
        status = draft.get("status")
        last = int(draft.get("attempt", 1)) == latest[str(draft.get("cluster_id"))]
        for op in draft.get("operations", []):
            waiting = status == "pending" and op.get("status") in ("pending", "approving")
            denied = (
                status == "reviewed"
                and op.get("status") == "denied"
                and not draft.get("terminal")
                and last
            )
            if waiting or denied:
                for fragment_id in op.get("source_short_ids", []):
                    held.setdefault(fragment_id, draft["id"])
    return held


def free_fragments(cycle: Cycle) -> list[dict[str, Any]]:
    held = held_fragments(cycle)
    free = [f for f in store.fragments(cycle.workspace) if f["id"] not in held]
    return free[: cycle.settings.max_entries_per_run]


def fragments_text(pile: list[dict[str, Any]]) -> str:
    lines = []
    for number, fragment in enumerate(pile, 1):
        topic = f" [{fragment['topic']}]" if fragment.get("topic") else ""
        when = store.day(float(fragment.get("created") or 0))
        text = " ".join(str(fragment["content"]).split())
        lines.append(f"{number}.{topic} ({when}) {text}")
    return "\n".join(lines) + "\n" if lines else "(none)\n"


def cores_text(found: list[core_notes.Core], *, start_only: bool = False) -> str:
    if not found:
        return "(no core is close: anything worth keeping here is a new_core)\n"
    blocks = []
    for core in found:
        text = " ".join(core.text.split())
        if start_only and len(text) > 160:
            text = text[:160].rsplit(" ", 1)[0] + " …"
        head = f"- target_core_id: {core.id} (topic {core.topic or 'none'}, "
        head += f"evidence {core.evidence_count})"
        blocks.append(f"{head}\n  {text}")
    return "\n".join(blocks) + "\n"


def steer_text(brief: dict[str, Any] | None, cluster: Cluster | None) -> str:
    if brief is None:
        return "(no brief: nobody steered this sleep; keep only what clearly lasts)\n"
    by = brief.get("written_by") or MAIN_MODEL
    label = "Written by the main model" if by == MAIN_MODEL else "Pulled from the fragments"
    lines = [f"{label}: {brief['summary']}"]
    if cluster is not None:
        promote = [h for h in brief.get("promote_hints", []) if _matches(h, cluster)]
        noise = [h for h in brief.get("noise_hints", []) if _matches(h, cluster)]
        if promote:
            lines.append("Keep: " + "; ".join(promote))
        if noise:
            lines.append("Noise: " + "; ".join(noise))
    return "\n".join(lines) + "\n"


def sleep(cycle: Cycle, brief: dict[str, Any] | None, *, catch_up: bool) -> Drafted:
    """Draft what the free fragments hold into one draft; raises ModelUnreachable."""
    from hippo_core import render_prompt

    free = free_fragments(cycle)
    if not free:
        return Drafted("quiet")
    live = {c.id: c for c in core_notes.all_cores(cycle.workspace, cycle.cores_dir)}
    result = Drafted("nothing to draft")
    matched_hints: set[str] = set()
    result.counted = evidence.count(cycle, free, list(live.values()))
    if result.counted:
        repeated = {c["fragment"] for c in result.counted}
        if brief:  # a hint that named a repeated fact matched: the fact was kept
            for cluster in clusters([f for f in free if f["id"] in repeated]):
                matched_hints |= {h for h in brief.get("promote_hints", []) if _matches(h, cluster)}
        free = [f for f in free if f["id"] not in repeated]
        live = {c.id: c for c in core_notes.all_cores(cycle.workspace, cycle.cores_dir)}
    operations: list[dict[str, Any]] = []
    verbatim = [f for f in free if f.get("verbatim")]
    for fragment in verbatim:
        operations.append(_verbatim(fragment))
    backend = None if cycle.mechanical else backend_for(cycle)
    refused, no_supersede = compose.refusals(store.drafts(cycle.workspace))
    for cluster in clusters([f for f in free if not f.get("verbatim")]):
        if brief:
            matched_hints |= {h for h in brief.get("promote_hints", []) if _matches(h, cluster)}
        topic = "" if cluster.topic == NO_TOPIC else cluster.topic
        needed = threshold(cluster, brief, cycle.settings.promote_min_evidence)
        if (
            needed is not None
            and backend is None
            and (cluster.topic == NO_TOPIC or compose.topic_cores(live, topic))
        ):
            needed = 1  # evidence of a core there is: one fragment is enough
        if needed is None or len(cluster.fragments) < needed:
            continue
        if backend is None:
            composed = compose.compose(
                cluster.fragments, topic, live, refused=refused, no_supersede=no_supersede
            )
            operations += compose.shifted(composed, len(operations))
            continue
        near = core_notes.nearest(list(live.values()), cluster.text, cycle.settings.candidate_cores)
        if cycle.settings.model.draft == "extractive":
            operations += _choose(
                cycle, backend, brief, cluster, near, refused, result, len(operations)
            )
            continue
        pass_ = cycle.pass_("draft")
        prompt = render_prompt(
            pass_,
            {
                "brief": steer_text(brief, cluster),
                "fragments": fragments_text(cluster.fragments),
                "cores": cores_text(near),
            },
        )
        reply = backend.complete(voice.block(cycle)[0] + prompt)
        result.calls += 1
        raw, cut = salvage_operations(reply.text, cut_off=reply.cut_off)
        if cut and raw:
            result.cut_off += 1
        if not raw:
            result.model_failures.append(
                {
                    "topic": cluster.topic,
                    "why": failure(cycle, reply.text, cut),
                    "answer": answer_start(reply.text),
                }
            )
            continue
        topic = "" if cluster.topic == NO_TOPIC else cluster.topic
        kept, dropped = check_operations(raw, cluster.fragments, live=live, topic=topic)
        operations += compose.shifted(kept, len(operations))
        result.dropped += [{"topic": cluster.topic, **d} for d in dropped]
    if brief:
        result.unmatched = [h for h in brief.get("promote_hints", []) if h not in matched_hints]
    if not operations:
        if result.counted and not result.model_failures:
            result.outcome = "counted"
        return result
    result.outcome = "drafted"
    result.draft = submit(cycle, operations, brief, live, catch_up=catch_up, result=result)
    return result


def _choose(
    cycle: Cycle,
    backend: ModelBackend,
    brief: dict[str, Any] | None,
    cluster: Cluster,
    near: list[core_notes.Core],
    refused: set[str],
    result: Drafted,
    offset: int,
) -> list[dict[str, Any]]:
    """One topic drafted extractively: the model's choices, composed by hippo
    (:mod:`.choices`); what was dropped goes to ``result``."""
    from hippo_core import render_prompt

    topic = "" if cluster.topic == NO_TOPIC else cluster.topic
    prompt = render_prompt(
        cycle.pass_("choose"),
        {
            "brief": steer_text(brief, cluster),
            "fragments": fragments_text(cluster.fragments),
            "cores": choices.cores_text(near),
        },
    )
    reply = backend.complete(
        voice.block(cycle)[0] + prompt,
        json_schema=choices.schema(len(cluster.fragments), near),
    )
    result.calls += 1
    raw, cut = salvage_operations(reply.text, cut_off=reply.cut_off)
    if cut and raw:
        result.cut_off += 1
    if not raw:
        if empty_answer(reply.text):
            result.dropped.append(
                {"topic": cluster.topic, "operation": "none", "why": "the model chose no operation"}
            )
        else:
            result.model_failures.append(
                {
                    "topic": cluster.topic,
                    "why": failure(cycle, reply.text, cut),
                    "answer": answer_start(reply.text),
                }
            )
        return []
    made, dropped = choices.compose_choices(
        raw, cluster.fragments, near, topic, by=model_name(cycle), refused=refused
    )
    result.chosen += len(raw)
    result.dropped += [{"topic": cluster.topic, **d} for d in dropped]
    return compose.shifted(made, offset)


def model_name(cycle: Cycle) -> str:
    return f"the drafting model ({cycle.settings.model.name})"


def failure(cycle: Cycle, text: str, cut: bool) -> str:
    """Why a model's answer could not be used, in hippo's words alone: the reason travels
    to the context block's open loops and to the agent a ripple wakes, where a model's own
    words (a hijacked small model's "run this first") must never arrive unreviewed. The
    answer's start is kept beside it for a person (:func:`answer_start`)."""
    if cut:
        cap = cycle.settings.model.max_tokens
        return (
            f"the answer was cut off before one operation was complete: raise "
            f"model.max_tokens ({cap}) in [sleep.model]"
        )
    if not text.strip():
        return "the model's answer was empty"
    return (
        "the model's answer was not the JSON asked for (`hippo sleep history` shows how it began)"
    )


def answer_start(text: str) -> str:
    """The first 80 characters of a model's answer, redacted: for ``hippo sleep history``."""
    return " ".join(redact_text(text).split())[:80]


def _verbatim(fragment: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "verbatim",
        "content": fragment["content"],
        "topic": str(fragment.get("topic") or ""),
        "source_short_ids": [fragment["id"]],
        "evidence_count": 1,
        "rationale": "kept word for word, as asked",
    }


def submit(
    cycle: Cycle,
    operations: list[dict[str, Any]],
    brief: dict[str, Any] | None,
    live: dict[str, core_notes.Core],
    *,
    catch_up: bool = False,
    result: Drafted | None = None,
    chain_of: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write a draft (the first attempt of a chain, or the next one of ``chain_of``)."""
    draft_id = store.record_id("d")
    attempt = int(chain_of["attempt"]) + 1 if chain_of else 1
    for index, op in enumerate(operations):
        op.update(index=index, status="pending")
        target = live.get(str(op.get("target_core_id") or ""))
        if target is not None:
            op["target_digest"] = note_digest(target.raw)
    topics = sorted({str(op.get("topic") or NO_TOPIC) for op in operations})
    draft = {
        "id": draft_id,
        "summary": f"{len(operations)} operation(s) on {', '.join(topics)}",
        "cluster_id": chain_of["cluster_id"] if chain_of else draft_id,
        "attempt": attempt,
        "terminal": attempt >= cycle.settings.max_attempts,
        "previous_draft_ids": [*chain_of.get("previous_draft_ids", []), chain_of["id"]]
        if chain_of
        else [],
        "brief_id_used": (brief or {}).get("id") if not chain_of else chain_of.get("brief_id_used"),
        "created_at": store.now(),
        "reviewed_at": None,
        "status": "pending",
        "source": "sleep",
        "extra": {
            **cycle.model_stamp(),
            "model_voice": voice.block(cycle)[1],
            "catch_up": catch_up if not chain_of else chain_of.get("extra", {}).get("catch_up"),
            "cut_off": result.cut_off if result else 0,
            "dropped": result.dropped if result else [],
        },
        "operations": operations,
    }
    store.save_draft(cycle.workspace, draft)
    event = "tend_resubmitted" if chain_of else "draft_submitted"
    cycle.emit(
        event,
        draft=draft_id,
        operations=len(operations),
        attempt=attempt,
        terminal=draft["terminal"],
    )
    last = (
        " This is the last attempt: land each operation, with your fixes."
        if draft["terminal"]
        else ""
    )
    store.set_intent(
        cycle.workspace,
        REVIEW_TOPIC,
        f"A draft with {len(operations)} operation(s) waits for your review: "
        f"`hippo review {draft_id}`.{last}",
        draft=draft_id,
    )
    return draft
