"""What the reviewer is shown, and how its reply becomes a verdict.

The reviewer sees the note, the change and the evidence turns; never the proposing run's
reasoning or the proposal's ``reason``. Its reply must be exactly one JSON object,
``{"verdict": "confirm"|"reject", "notes": "..."}``: anything else is a rejection.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hippo_core.dream.blocks import as_material, fence, token_field
from hippo_core.dream.model import ReviewRequest, Verdict
from hippo_core.files.jsontext import loads

VERDICTS = ("confirm", "reject")


def review_prompt(request: ReviewRequest) -> str:
    """The reviewer's input: the note in full, the change, and each evidence turn."""
    from hippo_core.dream.readers import turn_block

    proposal = request.proposal
    parts = [
        f"## The note `{request.note_path}`\n\n" + fence(request.note_text, "markdown"),
        f"## The proposed change\n\nkind: {proposal.kind}\n",
    ]
    if proposal.old:
        parts.append(
            "old (the text to be replaced, exactly as in the note):\n" + fence(proposal.old)
        )
    if proposal.old:
        label = "new (the text that replaces old):"
    elif not request.note_text:
        label = "new (the whole new note):"
    else:
        label = "new (the text added):"
    parts.append(f"{label}\n" + fence(proposal.new))
    for key, value in proposal.extra.items():
        parts.append(f"{key}:\n" + fence(value if isinstance(value, str) else json.dumps(value)))
    turns = "\n".join(turn_block(turn) for turn in request.evidence) or "(none found)\n"
    parts.append("## The evidence turns\n\n" + as_material(turns))
    if request.handoffs:
        handed = "\n".join(
            f"### Session {token_field(session)}\n" + fence(text, "markdown")
            for session, text in request.handoffs
        )
        parts.append(
            "## The handoffs of the evidence sessions (each session's own words about what it "
            "did: a claim to check against the turns, not evidence on its own)\n\n"
            + as_material(handed)
        )
    parts.append(
        '## Your reply\n\nReply with exactly one JSON object: {"verdict": "confirm" or '
        '"reject", "notes": "..."}.\n'
    )
    return "\n".join(parts)


#: A reply that is one code fence and nothing else (the info string may name a language).
_FENCED = re.compile(r"```[\w-]*[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)


def parse_verdict(text: str) -> tuple[str, str, str]:
    """``(verdict, notes, problem)``: the reply is the one object, alone or as the only thing
    inside one code fence; anything else is a rejection (it fails closed)."""
    stripped = text.strip()
    fenced = _FENCED.fullmatch(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        value: Any = loads(stripped)
    except ValueError:
        return "reject", "", f"the reply is not one JSON object: {_preview(stripped)}"
    if not isinstance(value, dict):
        return "reject", "", f"the reply is JSON {type(value).__name__}, not one object"
    if set(value) != {"verdict", "notes"}:
        keys = ", ".join(sorted(map(str, value))) or "none"
        return "reject", "", f"the reply's keys are {keys}; verdict and notes were asked for"
    verdict, notes = value["verdict"], value["notes"]
    if verdict not in VERDICTS or not isinstance(notes, str):
        return "reject", "", f"verdict {verdict!r} is not confirm or reject, or notes not text"
    return verdict, notes, ""


def _preview(text: str) -> str:
    line = " ".join(text.split()) or "(empty)"
    return repr(line if len(line) <= 80 else line[:77] + "...")


def verdict_record(
    proposal_id: str, verdict: Verdict, persona: str, at: str, **more: Any
) -> dict[str, Any]:
    """``.hippo/reviews/<proposal id>.json``: the verdict that decided, every step of a
    chain of reviewers (``steps``), and ``more`` (where the persona came from)."""
    record = {
        "proposal": proposal_id,
        "reviewer": verdict.reviewer,
        "persona": persona,
        **more,
        "verdict": verdict.verdict,
        "notes": verdict.notes,
        "problem": verdict.problem,
        "reply": verdict.reply,
        "call": verdict.call.as_dict() if verdict.call else None,
        "at": at,
    }
    if verdict.steps:
        record["steps"] = [step_record(step) for step in verdict.steps]
    return record


def step_record(verdict: Verdict) -> dict[str, Any]:
    """One reviewer's verdict in a chain, as the review record and the receipt keep it."""
    found: dict[str, Any] = {
        "reviewer": verdict.reviewer,
        "verdict": verdict.verdict,
        "notes": verdict.notes,
    }
    if verdict.problem:
        found["problem"] = verdict.problem
    if verdict.call is not None:
        found["call"] = verdict.call.as_dict()
    return found


def steps_from(record: dict[str, Any]) -> tuple[Verdict, ...]:
    """The steps a review record keeps, as verdicts (what ``hippo review`` adds to)."""
    found = []
    for step in record.get("steps") or ():
        if isinstance(step, dict) and step.get("verdict") in ("confirm", "reject", "pending"):
            found.append(
                Verdict(
                    str(step.get("reviewer", "")),
                    step["verdict"],
                    str(step.get("notes", "")),
                    problem=str(step.get("problem", "")),
                )
            )
    return tuple(found)
