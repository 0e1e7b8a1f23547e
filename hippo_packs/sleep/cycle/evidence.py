"""Repeated facts: a fragment in a core's own words is counted as that core's evidence.

Remembered again and again (``deploys run from main after CI is green``, on eight nights of
a month), a fact would otherwise become a dated satellite of its core each night: the same
line eight times under ``## Evidence``, each an operation to review. It says nothing the
core does not, so a sleep counts it instead, before it drafts: the core's
``evidence_count`` goes up by one and its ``updated`` to the day, through hippo's applier
(a proposal of the ``evidence`` kind, with a receipt and a snapshot, so ``hippo revert``
undoes it), and the fragment moves to the pruned archive as ``in a core``. No draft holds
it: no word of a core changes, so there is nothing for a reviewer to weigh.

**The core's own words.** Read as words (letters and digits, without case, punctuation or
spacing), the fragment is a run of the words of the core's title, of its text, or of one
of its satellites, in their order: ``Deploys run from main.`` is the core's own in
``deploys run from main after CI is green``, and so is ``CI is green``, which says nothing
the core does not. ``CI is green, deploys run from main`` is not (not in the core's order),
nor is a fragment with one word the core does not have. A fragment that states a new value
for what the core states (the old value of a satellite, say) is never counted: it may be a
change, which the draft's rules supersede with.

Crash-safe: the change's id is the fragment's (``<fragment id>-evidence``). A sleep killed
after the count and before the fragment moved leaves a receipt, and the next sleep only
moves the fragment; one killed while the note was written is settled by the lock's
``reconcile`` first.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hippo_core import (
    Proposal,
    Verdict,
    note_digest,
    proposal_record,
    receipt_record,
    record_proposal,
    settle,
)
from hippo_packs.sleep.cycle import compose
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle
    from hippo_packs.sleep.records.cores import Core

KIND = "evidence"
#: Who confirms a count in its receipt: the rule, not a reviewer.
COUNTER = "the sleep cycle (a repeated fact, in the core's own words)"
_WORD = re.compile(r"[a-z0-9]+")
_DATED = re.compile(r"\d{4}-\d{2}-\d{2}:\s*")


def phrase(text: str) -> str:
    """``text`` as its words: lower case, letters and digits, one space between."""
    return " ".join(_WORD.findall(text.lower()))


def own_words(text: str, core: Core) -> bool:
    """Whether ``text`` is in ``core``'s own words: a run of the words of its title, its
    text or one of its satellites (their dates left out), stating no new value."""
    wanted = phrase(text)
    if not wanted:
        return False
    satellites = [s[m.end() :] if (m := _DATED.match(s)) else s for s in core.satellites]
    if not any(f" {wanted} " in f" {phrase(t)} " for t in (core.title, core.text, *satellites)):
        return False
    return not compose.restates_with_new_value(text, core.text)


def owner(fragment: dict[str, Any], cores: list[Core]) -> Core | None:
    """The live core ``fragment`` repeats: of those whose own words it is in, one of its
    topic first, then the one with the fewest words (the closest), then by path."""
    text = str(fragment["content"])
    found = [c for c in cores if not c.superseded_by and own_words(text, c)]
    if not found:
        return None
    mine = compose.topic_key(str(fragment.get("topic") or ""))
    return min(
        found, key=lambda c: (compose.topic_key(c.topic) != mine, len(phrase(c.text)), c.path)
    )


def count(cycle: Cycle, fragments: list[dict[str, Any]], cores: list[Core]) -> list[dict[str, str]]:
    """Count each of ``fragments`` that repeats one of ``cores`` as its evidence (verbatim
    ones are kept word for word, never counted); what was counted: the fragment, the core
    and the change's id."""
    counted = []
    for fragment in fragments:
        if fragment.get("verbatim"):
            continue
        change = f"{fragment['id']}-{KIND}"
        settled = receipt_record(cycle.workspace, change)
        if settled is None:  # not counted yet (a receipt: a killed sleep counted it)
            core = owner(fragment, cores)
            if core is None:
                continue
            settled = _land(cycle, fragment, core, change)
        if settled.get("state") != "applied":
            continue  # the core changed under it, or is gone: it is drafted as any other
        core_id = str(settled.get("note")).rsplit("/", 1)[-1].removesuffix(".md")
        store.prune(
            cycle.workspace,
            [fragment["id"]],
            f"counted as evidence by {change}",
            store.IN_A_CORE,
            counted_in=core_id,
        )
        counted.append({"fragment": fragment["id"], "core": core_id, "change": change})
    return counted


def _land(cycle: Cycle, fragment: dict[str, Any], core: Core, change: str) -> dict[str, Any]:
    """Count ``fragment`` in ``core`` through hippo's applier; the receipt."""
    workspace = cycle.workspace
    try:
        raw = (workspace.notes_dir / core.path).read_bytes()
    except OSError:
        return {}
    proposal = Proposal(
        id=change,
        pass_key="sleep/draft",
        note=core.path,
        kind=KIND,
        old="",
        new=str(fragment["content"]),
        reason="a repeated fact, in the core's own words: counted as its evidence",
        evidence=(),
        extra={
            "fragments": [fragment["id"]],
            "date": store.day(store.now()),
            "evidence_count": 1,
        },
    )
    digest = note_digest(raw)
    if proposal_record(workspace, change) is None:
        record_proposal(workspace, proposal, prompt_digest=digest, review="none", persona="")
    done = settle(
        workspace,
        cycle.plugins,
        proposal,
        Verdict(COUNTER, "confirm"),
        prompt_digest=digest,
        persona="",
        invocation={"command": "hippo sleep", "fragment": fragment["id"]},
    )
    return done.record
