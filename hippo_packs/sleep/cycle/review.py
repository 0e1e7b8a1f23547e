"""Checking a review of a draft: every decision is checked before any lands.

The messages are those of the store the cycle comes from, word for word, so a main model
that learnt them there reads them here. The result of :func:`check` is the final shape
of each approved operation (its kind, text, target and restatement after the reviewer's
edits), which :mod:`.landing` writes. Every text a reviewer gives (a critique, a note, an
edit) is redacted here, the one place every way of reviewing goes through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, note_digest, redact_text
from hippo_packs.sleep.cycle.operations import KINDS, TARGETED
from hippo_packs.sleep.records import cores as core_notes

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle

TERMINAL_ONLY = "deny with a critique and let the hippocampus redraft"
_WORD = re.compile(r"[a-z0-9']+")


class ReviewError(HippoError):
    """A decision that cannot be taken; nothing of the review landed."""


@dataclass
class Decision:
    op: int
    verdict: str
    critique: str = ""
    note: str = ""
    kind: str = ""
    content: str = ""
    target: str = ""
    target_op: int | None = None
    restated: str = ""
    edits: dict[str, Any] = field(default_factory=dict)
    edited_content: str = ""


def restate_problem(core: str, restated: str, episode: str) -> str | None:
    """Why replacing ``core``'s words with ``restated`` would lose it, or None."""
    if not restated.strip() or restated.strip() == core.strip():
        return None
    if restated.strip() == episode.strip():
        return "is the episode's own text, not the core reworded"
    core_words = {w for w in _WORD.findall(core.lower()) if len(w) >= 4}
    if core_words:
        kept = len(core_words & set(_WORD.findall(restated.lower()))) / len(core_words)
        if kept < 0.5:
            return f"keeps only {int(kept * 100)}% of the core's words"
    if len(restated.strip()) * 2 < len(core.strip()):
        return "is less than half the length of the core it replaces"
    return None


def check(cycle: Cycle, draft: dict[str, Any], given: Any) -> list[Decision]:
    """Every decision of one review, checked against the draft and the cores as they are
    now; raises :class:`ReviewError` with the first problem."""
    draft_id = draft["id"]
    if not isinstance(given, list) or not given:
        raise ReviewError("'decisions' must be a non-empty list of {op, verdict, critique?}")
    if draft.get("status") == "reviewed":
        raise ReviewError(f"draft '{draft_id}' is already reviewed")
    operations = draft.get("operations", [])
    terminal = bool(draft.get("terminal"))
    live = {c.id: c for c in core_notes.all_cores(cycle.workspace, cycle.cores_dir)}
    decided: dict[int, Decision] = {}
    for raw in given:
        if not isinstance(raw, dict):
            raise ReviewError("'decisions' must be a non-empty list of {op, verdict, critique?}")
        index = raw.get("op")
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < len(operations)
        ):
            raise ReviewError(f"no operation {index} on draft '{draft_id}'")
        if index in decided:
            raise ReviewError(f"operation {index} is decided twice in one review")
        op = operations[index]
        if op.get("status") in ("approved", "denied"):
            raise ReviewError(f"operation {index} is already {op['status']}")
        decided[index] = _one(cycle, raw, index, op, terminal, live)
    for decision in decided.values():
        _dependency(decision, decided, operations)
    return [decided[i] for i in sorted(decided)]


def _one(
    cycle: Cycle,
    raw: dict[str, Any],
    index: int,
    op: dict[str, Any],
    terminal: bool,
    live: dict[str, core_notes.Core],
) -> Decision:
    verdict = str(raw.get("verdict", "")).strip().lower()
    if verdict not in ("approve", "deny"):
        raise ReviewError(f"operation {index}: verdict must be approve or deny")
    critique = redact_text(str(raw.get("critique") or "").strip())
    note = redact_text(str(raw.get("note") or "").strip())
    if verdict == "deny":
        if not critique:
            raise ReviewError(f"operation {index}: a critique is required to deny")
        return Decision(index, "deny", critique=critique)
    restate = raw.get("restate")
    if restate is not None and not isinstance(restate, bool):
        raise ReviewError(f'operation {index}: "restate" must be true or false')
    edited = raw.get("edited_content")
    if edited is not None:
        if not terminal:
            raise ReviewError(
                f"edited_content is only allowed on a terminal draft; {TERMINAL_ONLY}"
            )
        if not isinstance(edited, str) or not edited.strip():
            raise ReviewError("edited_content must be non-empty; omit it to apply as-is")
        edited = redact_text(edited)
    edit_keys = ("edited_kind", "edited_target_core_id", "edited_restated_content")
    if any(raw.get(k) is not None for k in edit_keys) and not terminal:
        raise ReviewError(
            f"operation {index}: edited_kind, edited_target_core_id and edited_restated_content "
            f"are only allowed on a terminal draft; {TERMINAL_ONLY}"
        )
    kind = op.get("kind")
    edits: dict[str, Any] = {}
    if raw.get("edited_kind") is not None:
        if raw["edited_kind"] not in KINDS:
            raise ReviewError(f"operation {index}: edited_kind must be one of {', '.join(KINDS)}")
        if raw["edited_kind"] != kind:
            edits["kind"] = kind
        kind = raw["edited_kind"]
    target = str(op.get("target_core_id") or "")
    target_op = op.get("target_op")
    if raw.get("edited_target_core_id") is not None:
        if str(raw["edited_target_core_id"]) != target:
            edits["target_core_id"] = target or None
        if target_op is not None:
            edits["target_op"] = target_op
        target, target_op = str(raw["edited_target_core_id"]).strip(), None
    if kind not in TARGETED:
        if target:
            edits.setdefault("target_core_id", target)
        target, target_op = "", None
    elif not target and target_op is None:
        raise ReviewError(f"operation {index}: a {kind} needs a core; give edited_target_core_id")
    if target:
        _target(cycle, index, op, target, live)
    content = (edited if isinstance(edited, str) else str(op.get("content") or "")).strip()
    restated = ""
    if kind == "attach":
        restated = redact_text(
            str(
                raw.get("edited_restated_content")
                if raw.get("edited_restated_content") is not None
                else op.get("restated_content") or ""
            ).strip()
        )
        if raw.get("edited_restated_content") is not None:
            edits["restated_content"] = op.get("restated_content")
        if restate is False and restated:
            edits["restated_content"] = restated
            restated = ""
        if not content and not restated:
            raise ReviewError(
                f"operation {index}: an attach with no episode text and no rewording does "
                "nothing; give edited_content, or deny it"
            )
        if restated and restate is not True:
            core_text = live[target].text if target in live else ""
            where = target or "in this draft"
            why = restate_problem(core_text, restated, content) if target else None
            if why:
                raise ReviewError(
                    f"operation {index}: approving this would REPLACE the wording of core "
                    f'{where} with text that {why}. Approve with "restate": false to keep '
                    'the core\'s words and land the episode as evidence, or with "restate": '
                    "true to replace them anyway, or deny it."
                )
    elif not content:
        raise ReviewError(f"operation {index}: a {kind} needs content; give edited_content")
    return Decision(
        index,
        "approve",
        note=note,
        kind=str(kind),
        content=content,
        target=target,
        target_op=target_op if isinstance(target_op, int) else None,
        restated=restated,
        edits=edits,
        edited_content=edited.strip() if isinstance(edited, str) else "",
    )


def _target(
    cycle: Cycle, index: int, op: dict[str, Any], target: str, live: dict[str, core_notes.Core]
) -> None:
    core = live.get(target)
    if core is None:
        raise ReviewError(f"operation {index}: no long-term entry '{target}'")
    drafted = op.get("target_digest")
    if target == op.get("target_core_id") and drafted and drafted != note_digest(core.raw):
        raise ReviewError(
            f"operation {index}: core '{target}' ({core.path}) was edited after this draft was "
            "written; deny it with a critique so that it is drafted again against the core "
            "as it is now"
        )


def _dependency(
    decision: Decision, decided: dict[int, Decision], operations: list[dict[str, Any]]
) -> None:
    if decision.verdict != "approve" or decision.target_op is None:
        return
    core = decision.target_op
    verb = "attaches to" if decision.kind == "attach" else "supersedes"
    status = operations[core].get("status") if 0 <= core < len(operations) else None
    chosen = decided.get(core)
    if status == "approved" or (chosen is not None and chosen.verdict == "approve"):
        return
    if status == "denied" or (chosen is not None and chosen.verdict == "deny"):
        raise ReviewError(
            f"operation {decision.op} {verb} operation {core}'s new core, and operation {core} "
            f"was denied, so that core does not exist; deny operation {decision.op}"
        )
    raise ReviewError(
        f"operation {decision.op} {verb} operation {core}'s new core; approve operation "
        f"{core} too, or deny operation {decision.op}"
    )
