"""Reading a drafting model's answer into operations, and the rules every operation meets.

An answer is one JSON object ``{"operations": [...]}`` (a bare list is read too, and a code
fence around it is taken off). An answer cut off mid-operation keeps the operations it
finished (:func:`salvage_operations`). Then each operation is checked against the pile of
fragments it was drawn from (:func:`check_operations`):

- its text is drawn from the fragments (else it is dropped: ``not in the fragments``);
- it keeps only the fragments its text came from (``cited_fragments``);
- an ``attach`` whose ``restated_content`` is its ``content`` loses the restatement;
- an ``attach`` or ``supersede`` names a core that exists, or a ``new_core`` of the same
  draft (``target_op``);
- a pile of N fragments yields at most N+1 operations.

What the model wrote is redacted like any text that comes in: it was drawn from redacted
fragments, but a model may write a secret's shape of its own.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hippo_core import redact_text
from hippo_packs.sleep.records.cores import words

KINDS = ("new_core", "attach", "supersede", "verbatim")
TARGETED = ("attach", "supersede")
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.S)


def salvage_operations(text: str, *, cut_off: bool = False) -> tuple[list[Any], bool]:
    """The operations an answer holds, and whether it was cut off before it ended.

    A complete answer gives ``(operations, False)``; one cut off mid-operation gives the
    finished ones and True; text with no JSON list at all gives ``([], False)``.
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    elif body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""  # a fence never closed: cut
    key = re.search(r'"operations"\s*:\s*\[', body)
    start = key.end() if key else (body.find("[") + 1 if body.lstrip().startswith("[") else 0)
    if not start:
        return [], bool(cut_off and body.lstrip().startswith("{"))
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position = start
    while True:
        while position < len(body) and body[position] in " \t\r\n,":
            position += 1
        if position >= len(body):
            return found, True
        if body[position] == "]":
            return found, False
        try:
            value, position = decoder.raw_decode(body, position)
        except RecursionError:
            return found, False
        except json.JSONDecodeError as exc:
            ended = exc.pos >= len(body.rstrip()) - 1 or "Unterminated" in exc.msg
            return found, bool(cut_off or ended)
        found.append(value)


def empty_answer(text: str) -> bool:
    """True for an answer that is, as asked, no operation at all: ``{"operations": []}`` or
    ``[]`` (in a code fence or not)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    try:
        value = json.loads(fenced.group(1) if fenced else body)
    except ValueError:
        return False
    return bool(value == [] or value == {"operations": []})


def check_operations(
    raw: list[Any],
    pile: list[dict[str, Any]],
    *,
    live: dict[str, Any],
    topic: str,
    redraft: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The operations that meet the rules, and what was dropped with why.

    ``pile`` is the fragments the model was shown, numbered from 1; ``live`` the cores by
    id. ``target_op`` indexes count within ``raw``'s kept operations.
    """
    kept: list[dict[str, Any]] = []
    dropped: list[dict[str, str]] = []
    pile_words = set().union(*(words(f["content"]) for f in pile)) if pile else set()
    for position, value in enumerate(raw):
        op, why = _one(value, position, pile, pile_words, live, topic, redraft, kept)
        if op is None:
            dropped.append({"operation": str(position), "why": redact_text(why)})
        else:
            kept.append(op)
    limit = len(pile) + 1
    for extra in kept[limit:]:
        dropped.append({"operation": str(extra["_from"]), "why": f"more than {limit} operations"})
    kept = kept[:limit]
    for op in kept:
        op.pop("_from", None)
    return kept, dropped


def _one(
    value: Any,
    position: int,
    pile: list[dict[str, Any]],
    pile_words: set[str],
    live: dict[str, Any],
    topic: str,
    redraft: bool,
    kept: list[dict[str, Any]],
) -> tuple[dict[str, Any] | None, str]:
    if not isinstance(value, dict):
        return None, "not an operation object"
    kind = value.get("kind")
    if kind not in KINDS:
        return None, f"kind {kind!r} is not one of {', '.join(KINDS)}"
    content = value.get("content")
    content = redact_text(content.strip()) if isinstance(content, str) else ""
    restated = value.get("restated_content")
    restated = (
        redact_text(restated.strip()) if isinstance(restated, str) and kind == "attach" else ""
    )
    if redraft or restated == content:
        restated = ""
    if not content and not (kind == "attach" and restated):
        return None, f"a {kind} needs content"
    if content and not _drawn(content, pile, pile_words, kind):
        return None, "not in the fragments"
    if restated and not _drawn(restated, pile, pile_words, kind):
        restated = ""
    if any(op["content"] == content and content for op in kept):
        return None, "repeats an earlier operation"
    op: dict[str, Any] = {
        "kind": kind,
        "content": content,
        "topic": redact_text(str(value.get("topic") or topic).strip()) or topic,
        "source_short_ids": _cited(value.get("source_indexes"), content, pile),
        "evidence_count": 1,
        "rationale": redact_text(str(value.get("rationale") or ""))[:1000],
        "_from": position,
    }
    if restated:
        op["restated_content"] = restated
    if kind in TARGETED:
        target = value.get("target_core_id")
        target_op = value.get("target_op")
        if isinstance(target, str) and target.strip():
            if target.strip() not in live:
                return None, f"no core '{target.strip()}'"
            op["target_core_id"] = target.strip()
        elif isinstance(target_op, int) and not isinstance(target_op, bool):
            if not 0 <= target_op < len(kept) or kept[target_op]["kind"] != "new_core":
                return None, f"target_op {target_op} is not a new_core of this draft"
            op["target_op"] = target_op
        else:
            return None, f"a {kind} needs target_core_id (or target_op)"
    op["evidence_count"] = max(1, len(op["source_short_ids"]))
    return op, ""


def _drawn(text: str, pile: list[dict[str, Any]], pile_words: set[str], kind: str) -> bool:
    """True when ``text`` comes from the fragments: a verbatim is one of them word for word;
    otherwise at least half its words (four letters or more) are theirs."""
    if kind == "verbatim":
        return any(text == f["content"].strip() for f in pile)
    own = words(text)
    if not own:
        return any(text.lower() in f["content"].lower() for f in pile)
    return len(own & pile_words) * 2 >= len(own)


def _cited(indexes: Any, content: str, pile: list[dict[str, Any]]) -> list[str]:
    """The ids of the fragments an operation came from: those it cites, less those its
    text shares nothing with (a single citation, or empty text, is left alone)."""
    given = indexes if isinstance(indexes, list) else []
    cited = [
        pile[i - 1]
        for i in given
        if isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= len(pile)
    ]
    cited = list({f["id"]: f for f in cited}.values()) or list(pile)
    if len(cited) > 1 and content:
        own = words(content)
        sharing = [f for f in cited if own & words(f["content"])]
        cited = sharing or cited
    return [f["id"] for f in cited]
