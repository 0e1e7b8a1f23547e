"""Operations composed from a topic's fragments by rule: what mechanical mode drafts.

Every fragment of the pile goes into exactly one operation, so no fact's words are dropped
before a reviewer has seen them:

- **A topic with no live core.** Its core is the fragment that best represents the pile:
  the one sharing the most words with the others (ties: the longest, then the newest),
  one whose text redaction changed only when none other may be, never one a review
  already denied as a core. It
  becomes a ``new_core``; a fragment whose words are mostly in it is evidence of it (one of
  its sources); a fragment that shares a word with it is an ``attach`` to it (a dated
  satellite on landing); the fragments that share none are another fact of the topic, and
  are composed the same way into a core of their own.
- **A topic with a live core.** Each fragment that shares a word with one of the topic's
  cores is an ``attach`` to the one it shares most with, unless it states a new value for
  what that core states (:func:`restates_with_new_value`: the same subject words, a
  different number, version, name or path): then a ``supersede`` of it. The fragments that
  share no word with any are composed into a new core, as above.
- **No topic** (a handoff that links no note, a fragment remembered without one): a
  fragment goes to the live core of any topic it shares at least :data:`MATCH` words with,
  as above; one that matches none waits in short-term. Without a topic, words are all
  mechanical mode has to judge what a fact is about, and a pile of unrelated facts is not
  a core.

A redraft of a denied mechanical operation (:func:`redraft`) composes again without what a
review refused for itself: a core denied for its words gives way to the next-best
fragment; an attach denied on its own (not with its core) is offered as a core of its own,
once; a supersede denied comes back as an attach. What a review denied again is dropped,
with the critique as its reason. A dependant of a denied core (its attach) is composed
again, not dropped.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hippo_packs.sleep.records import cores as core_notes

if TYPE_CHECKING:
    from hippo_packs.sleep.records.cores import Core

NO_TOPIC = "(no topic)"
#: The words a fragment with no topic must share with a core to go to it.
MATCH = 2
#: A fragment is evidence of a core when this share of its words are the core's already.
COVERED = 0.75
#: Marks of a value a fact states: a number or version, a path or URL, a name (a word with a
#: capital letter inside the sentence), a span in backticks.
_VALUE = re.compile(r"`[^`]+`|\b\w*\d[\w.:-]*|\S*/\S+|(?<=[a-z0-9,;] )[A-Z][A-Za-z0-9]+")
REDACTED = "[redacted:"
#: Words that say a value changed, so that a fact naming the old value and the new one
#: ("moved from port 6380 to port 6390") restates the core with the new one.
_CHANGED = re.compile(
    r"\b(now|moved|switched|changed|replaced|migrated|renamed|instead|no longer)\b"
    r"|\bfrom\b.+\bto\b",
    re.IGNORECASE,
)


def topic_key(topic: str) -> str:
    """A fragment's cluster: its first tag, lower case (``deploy, ci`` is ``deploy``)."""
    first = topic.split(",", 1)[0].strip().lower()
    return first or NO_TOPIC


def words(text: str) -> set[str]:
    """The words that count (four letters or more), a plural's ``s`` off so that
    ``deploys`` meets ``deploy``."""
    return {
        w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith(("ss", "us")) else w
        for w in core_notes.words(text)
    }


def values(text: str) -> set[str]:
    """What a fact's text states as values: numbers, versions, paths, names, code."""
    return {found.strip("`.,;:").lower() for found in _VALUE.findall(text) if found.strip()}


def subject(text: str) -> set[str]:
    """The words a fact is about: its words without its values."""
    stated = set().union(*(words(v) for v in values(text))) if values(text) else set()
    return words(text) - stated


def restates_with_new_value(fragment: str, core: str) -> bool:
    """True when ``fragment`` says again what ``core`` says with another value: most of the
    subject words shared, and a value of each that the other does not have (``port 6380``
    then ``port 6390``; ``through Mailgun`` then ``through Postmark``), or a new value and
    words that say it changed (``moved from port 6380 to port 6390``)."""
    mine, theirs = subject(fragment), subject(core)
    shared = mine & theirs
    if len(shared) < max(2, (min(len(mine), len(theirs)) + 1) // 2):
        return False
    new, old = values(fragment), values(core)
    return bool(new - old) and (bool(old - new) or bool(_CHANGED.search(fragment)))


def covered(fragment: str, by: str, *, share: float = COVERED) -> bool:
    """True when ``share`` of ``fragment``'s words (most of them) are in ``by`` already."""
    own = words(fragment)
    return bool(own) and len(own & words(by)) >= share * len(own)


def representative(pile: list[dict[str, Any]], refused: set[str]) -> dict[str, Any] | None:
    """The fragment of ``pile`` that best stands for it, or None when none may: the
    ``refused`` ids (denied as a core before) are never chosen, and a fragment whose text
    redaction changed only when no other may be. Its words are safe to keep, the secret's
    marker in place of the secret: a fact remembered beside a key is still a fact."""
    fit = [f for f in pile if f["id"] not in refused]
    if not fit:
        return None
    clean = [f for f in fit if REDACTED not in str(f["content"])]
    fit = clean or fit

    def shared(fragment: dict[str, Any]) -> int:
        own = words(fragment["content"])
        return sum(len(own & words(other["content"])) for other in pile if other is not fragment)

    return max(fit, key=lambda f: (shared(f), len(f["content"]), str(f.get("created") or "")))


def compose(
    pile: list[dict[str, Any]],
    topic: str,
    live: dict[str, Core],
    *,
    refused: set[str] = frozenset(),  # type: ignore[assignment]
    no_supersede: set[str] = frozenset(),  # type: ignore[assignment]
    why: str = "mechanical mode",
) -> list[dict[str, Any]]:
    """The operations for one topic's ``pile``, every fragment in at most one of them (one
    with no topic that matches no core is in none: it waits).

    ``live`` holds the cores by id; the topic's own (same first tag) are the targets.
    ``refused`` are fragments a review denied as a core; ``no_supersede`` fragments whose
    supersede was denied (they come back as attaches)."""
    if topic_key(topic) == NO_TOPIC:
        cores = [c for c in live.values() if not c.superseded_by]
        return [
            _onto(fragment, [core], topic, no_supersede, why)
            for fragment in pile
            if (core := _nearest(fragment, cores, MATCH)) is not None
        ]
    own = topic_cores(live, topic)
    operations: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for fragment in pile:
        core = _nearest(fragment, own, 1)
        if core is None:
            rest.append(fragment)
        else:
            operations.append(_onto(fragment, [core], topic, no_supersede, why))
    while rest:
        made, rest = _new_core(rest, topic, refused, why)
        if not made:
            break
        operations += shifted(made, len(operations))
    return operations


def shifted(operations: list[dict[str, Any]], offset: int) -> list[dict[str, Any]]:
    """``operations`` placed after ``offset`` others in a draft: each ``target_op`` moved
    by as much (in place; returned for appending)."""
    for op in operations:
        if "target_op" in op:
            op["target_op"] += offset
    return operations


def _new_core(
    pile: list[dict[str, Any]], topic: str, refused: set[str], why: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A ``new_core`` of the fragment that best represents ``pile``, its evidence and the
    attaches of the fragments that share a word with it; and the fragments that share none
    (another fact of the topic). Nothing, and the whole pile, when no fragment may be a
    core."""
    core = representative(pile, refused)
    if core is None:
        return [], pile
    mine = words(core["content"])
    sources = [core] + [f for f in pile if f is not core and covered(f["content"], core["content"])]
    attached = [f for f in pile if f not in sources and words(f["content"]) & mine]
    placed = {id(f) for f in sources + attached}
    operations = [
        {
            "kind": "new_core",
            "content": core["content"],
            "topic": topic,
            "source_short_ids": [f["id"] for f in sources],
            "evidence_count": len(sources),
            "core_fragment": core["id"],
            "rationale": f"{len(pile)} fragment(s) on {topic or 'no topic'} ({why}): the one "
            "sharing most words with the others",
        }
    ]
    for fragment in attached:
        operations.append(
            {
                "kind": "attach",
                "content": fragment["content"],
                "topic": topic,
                "target_op": 0,
                "source_short_ids": [fragment["id"]],
                "evidence_count": 1,
                "rationale": f"a fact of {topic or 'no topic'} the core does not say ({why})",
            }
        )
    return operations, [f for f in pile if id(f) not in placed]


def _nearest(fragment: dict[str, Any], cores: list[Core], least: int) -> Core | None:
    """The core of ``cores`` that shares most words with ``fragment``, when it shares at
    least ``least``; the newest of those that share as many."""
    mine = words(str(fragment["content"]))
    best, most = None, least - 1
    for core in cores:
        shared = len(mine & words(f"{core.title} {core.text}"))
        if shared > most:
            best, most = core, shared
    return best


def topic_cores(live: dict[str, Core], topic: str) -> list[Core]:
    """The live cores of ``topic`` (the first tag of each, lower case), newest first."""
    wanted = topic_key(topic)
    found = [c for c in live.values() if not c.superseded_by and topic_key(c.topic) == wanted]
    return sorted(found, key=lambda c: str(c.meta.get("updated") or ""), reverse=True)


def _onto(
    fragment: dict[str, Any], cores: list[Core], topic: str, no_supersede: set[str], why: str
) -> dict[str, Any]:
    """An attach of ``fragment`` to the core of its topic it says most about, or the
    supersede of that core when it states a new value for what the core states."""
    text = str(fragment["content"])
    mine = words(text)
    target = max(cores, key=lambda c: len(mine & words(f"{c.title} {c.text}")))
    kind = "attach"
    if fragment["id"] not in no_supersede and restates_with_new_value(text, target.text):
        kind = "supersede"
    return {
        "kind": kind,
        "content": text,
        "topic": topic,
        "target_core_id": target.id,
        "source_short_ids": [fragment["id"]],
        "evidence_count": 1,
        "rationale": (
            f"it states a new value for what {target.id} states ({why})"
            if kind == "supersede"
            else f"evidence of {target.id} ({why})"
        ),
    }


def refusals(drafts: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """What reviews refused, from every draft: the fragments denied as a core's words, and
    the fragments whose supersede was denied. Mechanical mode never proposes them so again."""
    refused: set[str] = set()
    no_supersede: set[str] = set()
    for draft in drafts:
        for op in draft.get("operations", []):
            if op.get("status") != "denied":
                continue
            if op.get("core_fragment"):
                refused.add(str(op["core_fragment"]))
            if op.get("kind") == "supersede":
                no_supersede |= set(op.get("source_short_ids", []))
    return refused, no_supersede


def denied_alone(draft: dict[str, Any]) -> list[dict[str, Any]]:
    """The denied operations of ``draft`` refused for their own words: an attach or a
    verbatim not denied with its core (an attach whose new core was denied too is a
    dependant), and a core a fragment was offered as on its own (:func:`redraft`). Not a
    core of a pile (its fragments go to the next-best), not a supersede (it comes back as
    an attach)."""
    ops = draft["operations"]
    found = []
    for op in ops:
        if op.get("status") != "denied":
            continue
        if op.get("kind") not in ("attach", "verbatim") and not op.get("on_its_own"):
            continue
        target = op.get("target_op")
        if target is not None and ops[int(target)].get("status") == "denied":
            continue
        found.append(op)
    return found


def dropped_because(op: dict[str, Any]) -> str:
    """Why a fragment of the denied ``op`` is dropped: the operation and the critique."""
    critique = " ".join(str(op.get("critique") or "").split())
    return f"op {op['index']}: denied" + (f": {critique}" if critique else "")


def redraft(
    draft: dict[str, Any],
    short: dict[str, dict[str, Any]],
    live: dict[str, Core],
    refused: set[str],
    no_supersede: set[str],
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The next attempt of a mechanical draft's denied operations, and the fragments the
    review dropped for themselves, each with the critique (their fate, as decided).

    A core denied for its own words gives way to the next-best fragment; an attach denied
    because its core was is composed again; an attach denied on its own is offered as a
    core of its own, once (the reviewer said it is not evidence of that core), and what is
    denied on its own after that is dropped; a supersede denied comes back as an attach."""
    alone = {id(op) for op in denied_alone(draft)}
    again: dict[str, list[dict[str, Any]]] = {}
    operations: list[dict[str, Any]] = []
    dropped: list[tuple[str, str]] = []
    for op in draft["operations"]:
        if op.get("status") != "denied":
            continue
        for fragment_id in op.get("source_short_ids", []):
            if fragment_id not in short:
                continue
            if id(op) not in alone:
                again.setdefault(str(op.get("topic") or ""), []).append(short[fragment_id])
            elif op.get("kind") == "attach" and fragment_id not in refused:
                operations.append(_on_its_own(short[fragment_id], op))
            else:
                dropped.append((fragment_id, dropped_because(op)))
    for topic, pile in again.items():
        composed = compose(
            pile, topic, live, refused=refused, no_supersede=no_supersede, why="a redraft"
        )
        operations += shifted(composed, len(operations))
        placed = {i for new in composed for i in new["source_short_ids"]}
        dropped += [
            (f["id"], "denied: no fragment of its topic may be its core")
            for f in pile
            if f["id"] not in placed
        ]
    return operations, dropped


def _on_its_own(fragment: dict[str, Any], denied: dict[str, Any]) -> dict[str, Any]:
    """The fragment of an attach a review denied on its own, as a core of its own."""
    return {
        "kind": "new_core",
        "content": fragment["content"],
        "topic": denied.get("topic") or "",
        "source_short_ids": [fragment["id"]],
        "evidence_count": 1,
        "core_fragment": fragment["id"],
        "on_its_own": True,
        "rationale": f"denied as evidence of {denied.get('target_core_id') or 'its core'}: "
        "a fact of its own (a redraft)",
    }
