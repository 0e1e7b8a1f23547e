"""Extractive drafting: the model chooses, hippo writes.

For one topic the drafting model sees the numbered fragments and the candidate cores, and
answers under a JSON schema (:func:`schema`) with choices only: for each operation its
``kind``, the ``fragments`` (numbers) it is made of, and the ``core`` it attaches to or
supersedes (``"none"`` for a new core). The model never writes text, so a small one can do
it: hippo composes each operation's words from the fragments chosen, by mechanical mode's
rules (:mod:`.compose`):

- a ``new_core`` of fragments is the one that best represents them (its words the core's),
  the fragments mostly in it its evidence, the others its dated satellites (attaches);
- an ``attach`` to a core is one dated satellite per fragment;
- a ``supersede`` of a core is the fragment that best represents them as the new core's
  words, the others its evidence or satellites.

What the words contradict, the rules correct, and the operation's rationale says so: a
fragment that states a new value for what a candidate core states (:func:`compose.
restates_with_new_value`) supersedes that core whatever kind was chosen (once a draft:
what else restates it is the new core's satellite); fragments chosen as evidence of a core
they share no word with are a new core of their own; a supersede of a core the fragments
share no word with is dropped. A choice is dropped, with its reason in the sleep's record, when
its kind is not one of the three, it names no fragment, a fragment or a core the prompt did
not show, or only fragments an earlier choice took (so a choice of every fragment for every
kind lands once). A fragment no choice takes waits in short-term for the next sleep, unless
it states a new value for what a candidate core states and the model chose something for
the topic: then it supersedes that core by the rule (a changed fact never waits while the
old value stays current).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_packs.sleep.cycle import compose

if TYPE_CHECKING:
    from hippo_packs.sleep.records.cores import Core

KINDS = ("new_core", "attach", "supersede")
NONE = "none"


def schema(count: int, cores: list[Core]) -> dict[str, Any]:
    """The JSON schema of an answer for ``count`` fragments and the candidate ``cores``:
    a new core names no core; an attach or a supersede names one of the candidates. An
    answer holds at least one operation, a redraft's too: a small model held to a schema
    otherwise takes the empty list, the shortest answer there is. A topic reaches the model
    only past its threshold, and a chain ends at ``max_attempts`` (the reviewer denies what
    should not be kept)."""
    numbers = {
        "type": "array",
        "items": {"type": "integer", "enum": list(range(1, count + 1))},
        "minItems": 1,
        "maxItems": count,
    }

    def shape(kinds: list[str], targets: list[str]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": kinds},
                "fragments": numbers,
                "core": {"type": "string", "enum": targets},
            },
            "required": ["kind", "fragments", "core"],
            "additionalProperties": False,
        }

    shapes = [shape(["new_core"], [NONE])]
    if cores:
        shapes.append(shape(["attach", "supersede"], [c.id for c in cores]))
    return {
        "type": "object",
        "properties": {
            "operations": {
                "type": "array",
                "items": shapes[0] if len(shapes) == 1 else {"anyOf": shapes},
                "minItems": 1,
                "maxItems": count,
            }
        },
        "required": ["operations"],
        "additionalProperties": False,
    }


def cores_text(cores: list[Core]) -> str:
    if not cores:
        return '(none yet: every operation is a new_core, with "core": "none")\n'
    lines = []
    for core in cores:
        text = " ".join(core.text.split())
        if len(text) > 160:
            text = text[:160].rsplit(" ", 1)[0] + " …"
        lines.append(f"- {core.id}: {text}")
    return "\n".join(lines) + "\n"


def compose_choices(
    raw: list[Any],
    pile: list[dict[str, Any]],
    cores: list[Core],
    topic: str,
    *,
    by: str,
    refused: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The operations hippo writes from the model's choices ``raw`` over ``pile`` (the
    fragments as numbered in the prompt) and the candidate ``cores``, and the choices
    dropped, each with why. ``by`` names the model; ``refused`` are fragments a review
    denied as a core's words (never chosen as one again)."""
    live = {c.id: c for c in cores}
    taken: set[str] = set()
    operations: list[dict[str, Any]] = []
    dropped: list[dict[str, str]] = []
    for position, value in enumerate(raw):
        choice, why = _choice(value, pile, live, taken)
        if choice is None:
            dropped.append({"operation": str(position), "why": why})
            continue
        made, why = _compose(choice, cores, topic, by, refused, operations)
        if not made:
            dropped.append({"operation": str(position), "why": why})
            continue
        operations += made
        taken |= {f["id"] for f in choice["fragments"]}
    if operations:
        operations += _changes_left_out(pile, cores, topic, by, taken, operations)
    return operations, dropped


def _changes_left_out(
    pile: list[dict[str, Any]],
    cores: list[Core],
    topic: str,
    by: str,
    taken: set[str],
    operations: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """A fragment the model left out that states a new value for what a candidate core
    states supersedes it all the same (once a draft): a changed fact is never left to wait
    while the old value stays current. Only when the model chose something for the topic:
    an answer with nothing valid drafts nothing."""
    replaced = {str(op.get("target_core_id")) for op in operations if op["kind"] == "supersede"}
    made: list[dict[str, Any]] = []
    for number, fragment in enumerate(pile, 1):
        old = _restated(fragment, cores) if fragment["id"] not in taken else None
        if old is None or old.id in replaced:
            continue
        why = (
            f"{by} left fragment {number} out; it states a new value for what {old.id} "
            "states, so it supersedes it (hippo's rule)"
        )
        op = _op("supersede", fragment, topic, [fragment], why)
        op["target_core_id"] = old.id
        op["choice"] = {"kind": None, "fragments": [fragment["id"]], "core": None}
        made.append(op)
        replaced.add(old.id)
    return made


def _choice(
    value: Any, pile: list[dict[str, Any]], live: dict[str, Core], taken: set[str]
) -> tuple[dict[str, Any] | None, str]:
    if not isinstance(value, dict):
        return None, "not a choice (an object with kind, fragments and core)"
    kind = value.get("kind")
    if kind not in KINDS:
        return None, f"kind {kind!r} is not one of {', '.join(KINDS)}"
    numbers = value.get("fragments")
    if not isinstance(numbers, list) or not numbers:
        return None, "it chooses no fragment"
    chosen: list[dict[str, Any]] = []
    for number in numbers:
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(pile):
            return None, f"no fragment {number!r} (the fragments are 1 to {len(pile)})"
        if pile[number - 1] not in chosen:
            chosen.append(pile[number - 1])
    fresh = [f for f in chosen if f["id"] not in taken]
    if not fresh:
        return None, "its fragments are in an earlier operation"
    core = value.get("core")
    core = core.strip() if isinstance(core, str) else ""
    if kind == "new_core":
        core = ""
    elif not core or core == NONE:
        needs = "an attach names the core it attaches to"
        return None, needs if kind == "attach" else "a supersede names the core it replaces"
    elif core not in live:
        return None, f"no core {core!r} among the cores shown"
    numbered = [pile.index(f) + 1 for f in fresh]
    return {"kind": kind, "fragments": fresh, "numbers": numbered, "core": core}, ""


def _compose(
    choice: dict[str, Any],
    cores: list[Core],
    topic: str,
    by: str,
    refused: set[str],
    before: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], str]:
    """The operations of one valid choice, after the draft's operations ``before``: their
    ``target_op`` counts from the draft's first operation, and theirs start at
    ``len(before)``."""
    kind, pile = choice["kind"], choice["fragments"]
    base = len(before)
    # A core is superseded once in a draft: what else restates it is the new core's.
    superseding = {
        str(op["target_core_id"]): index
        for index, op in enumerate(before)
        if op["kind"] == "supersede"
    }
    target = next((c for c in cores if c.id == choice["core"]), None)
    said = f"{by} chose {kind} of fragment(s) {', '.join(map(str, choice['numbers']))}"
    said += f" onto {target.id}" if target else ""
    record = {"kind": kind, "fragments": [f["id"] for f in pile], "core": choice["core"] or None}
    operations: list[dict[str, Any]] = []
    early: list[dict[str, Any]] = []  # satellites of a supersede of an earlier choice
    rest: list[dict[str, Any]] = []
    # A fragment that states a new value for what a candidate core states supersedes it.
    for fragment in pile:
        old = _restated(fragment, [target] if target else cores)
        if old is not None and old.id in superseding:
            why = f"{said}; it states a new value for what {old.id} states: a satellite "
            why += "of its new core"
            early.append(_satellite(fragment, topic, why, superseding[old.id]))
        elif old is not None and not operations:
            why = f"it states a new value for what {old.id} states, so it supersedes it"
            operations.append(
                _op("supersede", fragment, topic, [fragment], f"{said}; {why} (hippo's rule)")
            )
            operations[0]["target_core_id"] = old.id
        else:
            rest.append(fragment)
    if target is not None and target.id in superseding and not operations:
        why = f"{said}; a satellite of the core that replaces {target.id}"
        # the core it names is replaced in this draft: the new one's
        early += [_satellite(f, topic, why, superseding[target.id]) for f in rest]
        rest = []
    if operations:
        # The others say more about the core the supersede writes, not the old one.
        _onto(operations, rest, topic, said, base)
    elif rest and kind == "attach" and target is not None:
        about = compose.words(f"{target.title} {target.text}")
        apart = [f for f in rest if not compose.words(f["content"]) & about]
        for fragment in rest:
            if fragment not in apart:
                operations.append(_op("attach", fragment, topic, [fragment], said))
                operations[-1]["target_core_id"] = target.id
        if apart:  # not evidence of that core: a core of their own
            why = f"{said}; sharing no word with {target.id}, a new core (hippo's rule)"
            operations += _grouped("new_core", apart, topic, why, refused, base + len(operations))
    elif rest and kind == "supersede" and target is not None:
        if any(compose.subject(f["content"]) & compose.subject(target.text) for f in rest):
            operations = _grouped("supersede", rest, topic, said, refused, base)
            for op in operations[:1]:
                op["target_core_id"] = target.id
        elif not early:
            return [], f"its fragments share no word with core {target.id}, which it would replace"
    elif rest:
        operations = _grouped("new_core", rest, topic, said, refused, base)
    if not operations and not early:
        return [], "none of its fragments may be a core's words (each was denied as one)"
    for op in operations + early:
        op["choice"] = record
    return operations + early, ""


def _grouped(
    kind: str, pile: list[dict[str, Any]], topic: str, said: str, refused: set[str], at: int
) -> list[dict[str, Any]]:
    """A ``new_core`` (or ``supersede``) of the fragment that best represents ``pile``,
    with the others as its evidence or its satellites; nothing when none may be a core.
    ``at`` is where in the draft the first operation goes."""
    core = compose.representative(pile, refused)
    if core is None:
        return []
    head = _op(kind, core, topic, [core], f"{said}; the fragment that best represents them")
    head["core_fragment"] = core["id"]
    operations = [head]
    _onto(operations, [f for f in pile if f is not core], topic, said, at)
    return operations


def _onto(
    operations: list[dict[str, Any]], pile: list[dict[str, Any]], topic: str, said: str, at: int
) -> None:
    """Each fragment of ``pile`` as evidence of the core ``operations[0]`` writes (operation
    ``at`` of the draft) when its words are mostly that core's already, else as a satellite
    of it."""
    head = operations[0]
    for fragment in pile:
        if compose.covered(fragment["content"], head["content"]):
            head["source_short_ids"].append(fragment["id"])
            head["evidence_count"] = len(head["source_short_ids"])
        else:
            operations.append(_satellite(fragment, topic, f"{said}; a satellite", at))


def _satellite(fragment: dict[str, Any], topic: str, why: str, at: int) -> dict[str, Any]:
    """An attach of ``fragment`` to the core operation ``at`` of the draft writes."""
    satellite = _op("attach", fragment, topic, [fragment], why)
    satellite["target_op"] = at
    return satellite


def _restated(fragment: dict[str, Any], cores: list[Core]) -> Core | None:
    text = str(fragment["content"])
    for core in cores:
        if not core.superseded_by and compose.restates_with_new_value(text, core.text):
            return core
    return None


def _op(
    kind: str, fragment: dict[str, Any], topic: str, sources: list[dict[str, Any]], why: str
) -> dict[str, Any]:
    """An operation whose words are ``fragment``'s, drawn from ``sources``."""
    return {
        "kind": kind,
        "content": fragment["content"],
        "topic": topic,
        "source_short_ids": [f["id"] for f in sources],
        "evidence_count": len(sources),
        "rationale": why,
    }
