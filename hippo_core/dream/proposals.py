"""A model's reply, parsed leniently and validated strictly into proposals.

Lenient: the JSON array may sit inside a code fence or between other text. Strict: each
element must be an object with exactly the keys of a proposal (plus its kind's own), of
the right types. What fails is reported, element by element, and never reviewed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hippo_core.dream.model import Evidence, Proposal, ProposalKind
from hippo_core.files.jsontext import loads

_FENCE = re.compile(r"```[\w-]*[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)
COMMON_KEYS = ("note", "kind", "old", "new", "reason", "evidence")


class EvidenceModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    session: str = Field(min_length=1)
    ordinal: int = Field(ge=0, le=2**63 - 1)  # what an index's INTEGER holds


class ProposalModel(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    note: str
    kind: str
    old: str
    new: str
    reason: str
    evidence: list[EvidenceModel] = Field(min_length=1)


@dataclass(frozen=True)
class Rejected:
    """An element of a reply that is not a proposal, and why."""

    index: int
    problem: str
    note: str = ""


def parse_reply(text: str) -> tuple[list[Any], str]:
    """The JSON array in ``text``, or ``([], problem)`` saying why there is none."""
    stripped = text.strip()
    if not stripped:
        return [], "the reply is empty"
    value, found = _first_json(stripped)
    if not found:
        cut = stripped.count("[") > stripped.count("]") or stripped.count("{") > stripped.count("}")
        why = "it looks cut off" if cut else "no JSON array found"
        return [], f"the reply is not JSON ({why}): {_preview(stripped)}"
    if not isinstance(value, list):
        return [], f"the reply is JSON {type(value).__name__}, not the array of proposals asked for"
    return value, ""


def _first_json(text: str) -> tuple[Any, bool]:
    candidates = [text, *_FENCE.findall(text)]
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return loads(candidate), True
        except ValueError:
            continue
    return None, False


def _preview(text: str) -> str:
    line = " ".join(text.split())
    return repr(line if len(line) <= 80 else line[:77] + "...")


def to_proposals(
    elements: list[Any], *, pass_key: str, kinds: dict[str, ProposalKind], ids: Any
) -> tuple[list[Proposal], list[Rejected]]:
    """Validate each element; ``ids()`` gives each valid proposal its id."""
    valid: list[Proposal] = []
    rejected: list[Rejected] = []
    for index, element in enumerate(elements, start=1):
        note = element.get("note", "") if isinstance(element, dict) else ""
        problem = _problem(element, kinds)
        if problem:
            rejected.append(Rejected(index, problem, note if isinstance(note, str) else ""))
            continue
        model = ProposalModel.model_validate(element)
        extra = {k: v for k, v in element.items() if k not in COMMON_KEYS}
        valid.append(
            Proposal(
                id=ids(),
                pass_key=pass_key,
                note=model.note,
                kind=model.kind,
                old=model.old,
                new=model.new,
                reason=model.reason,
                evidence=tuple(Evidence(e.session, e.ordinal) for e in model.evidence),
                extra=extra,
            )
        )
    return valid, rejected


def _problem(element: Any, kinds: dict[str, ProposalKind]) -> str:
    if not isinstance(element, dict):
        return f"a proposal is a JSON object, found {type(element).__name__}"
    try:
        ProposalModel.model_validate(element)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        if error["type"] == "missing":
            return f"missing key '{where}'"
        return f"{where}: {error['msg'][:1].lower()}{error['msg'][1:]}"
    kind = kinds.get(element["kind"])
    allowed = set(COMMON_KEYS) | (set(kind.fields) if kind else set())
    for key in element:
        if key not in allowed:
            close = difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.6)
            hint = f" - did you mean '{close[0]}'?" if close else ""
            return f"unknown key '{key}'{hint}"
    return ""
