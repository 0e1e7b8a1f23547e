"""What ``hippo eval`` measures: each case's counts, and the rates over the cases that ran.

docs/eval.md defines every figure. A change matches an expectation when it is to the same
note, of the same kind, and its ``new`` holds every string of ``contains``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from hippo_core.packs.evals_case import Case, Expect
    from hippo_core.plugins.events import Event
    from hippo_core.workspace.folder import Workspace

Mode = Literal["live", "record", "replay"]


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``total``; no value when there is nothing to count."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None


@dataclass
class CaseResult:
    """What one case did, or why it could not run."""

    name: str
    status: str = "ok"
    error: str = ""
    transcripts: int = 0
    """Transcript files ingested."""
    sessions: int = 0
    invalid: int = 0
    proposals: int = 0
    applied: int = 0
    not_applied: int = 0
    matched: int = 0
    """Applied changes that match an expected change, each expectation used once."""
    expected: int = 0
    verdicts: int = 0
    agreed: int = 0
    pending: int = 0
    calls: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        """``failed: why``, or the case's counts on one line."""
        if self.status != "ok":
            return f"failed: {self.error}"
        calls = f"{self.calls} call{'s' if self.calls != 1 else ''}"
        return (
            f"ok: {self.proposals} of {self.proposals + self.invalid} proposals valid, "
            f"{self.applied} applied, {self.matched} of {self.expected} expected; {calls}"
        )


@dataclass
class EvalResult:
    """Every case's result; the rates add up the cases that ran."""

    pack: str
    root: Path
    mode: Mode
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(case.status == "ok" for case in self.cases)

    def _sum(self, name: str) -> Any:
        return sum(getattr(case, name) for case in self.cases if case.status == "ok")

    def rates(self) -> dict[str, Rate]:
        parsed = self._sum("proposals") + self._sum("invalid")
        return {
            "validity": Rate(self._sum("proposals"), parsed),
            "precision": Rate(self._sum("matched"), self._sum("applied")),
            "recall": Rate(self._sum("matched"), self._sum("expected")),
            "agreement": Rate(self._sum("agreed"), self._sum("verdicts")),
        }

    def totals(self) -> dict[str, Any]:
        names = ("calls", "bytes_in", "bytes_out", "seconds")
        return {name: self._sum(name) for name in names}

    def as_dict(self) -> dict[str, Any]:
        rates = {
            name: {
                "rate": None if rate.value is None else round(rate.value, 4),
                "hits": rate.hits,
                "total": rate.total,
            }
            for name, rate in self.rates().items()
        }
        totals = self.totals()
        totals["seconds"] = round(totals["seconds"], 3)
        cases = [{**asdict(case), "seconds": round(case.seconds, 3)} for case in self.cases]
        return {
            "pack": self.pack,
            "mode": self.mode,
            "ok": self.ok,
            **rates,
            **totals,
            "cases": cases,
        }


def score(result: CaseResult, case: Case, workspace: Workspace, events: list[Event]) -> None:
    """Fill in ``result`` from the dream's events and the proposals it wrote."""
    from hippo_core.files.jsonfiles import json_objects_in

    records = {
        str(record.get("id")): record
        for _path, record in json_objects_in(workspace.hippo_dir / "proposals")
    }

    def proposal(event: Event) -> dict[str, Any]:
        return records.get(str(event.data.get("proposal")), {})

    applied = [proposal(e) for e in events if e.name == "applied"]
    result.invalid = sum(e.name == "invalid" for e in events)
    result.proposals = sum(e.name == "proposal" for e in events)
    result.applied = len(applied)
    result.not_applied = sum(e.name == "not-applied" for e in events)
    result.expected = len(case.expect)
    result.matched = _matching(applied, case.expect)
    for event in (e for e in events if e.name == "verdict"):
        verdict = event.data.get("verdict")
        if verdict == "pending":
            result.pending += 1
            continue
        wanted = any(_matches(expect, proposal(event)) for expect in case.expect)
        result.verdicts += 1
        result.agreed += (verdict == "confirm") == wanted


def _matches(expect: Expect, record: dict[str, Any]) -> bool:
    return expect.matches(str(record.get("note")), str(record.get("kind")), str(record.get("new")))


def _matching(applied: list[dict[str, Any]], expect: tuple[Expect, ...]) -> int:
    """The most pairs of an applied change and an expectation it matches, each used once."""
    owner: dict[int, int] = {}  # expectation -> applied change

    def place(change: int, seen: set[int]) -> bool:
        for number, wanted in enumerate(expect):
            if number in seen or not _matches(wanted, applied[change]):
                continue
            seen.add(number)
            if number not in owner or place(owner[number], seen):
                owner[number] = change
                return True
        return False

    return sum(place(change, set()) for change in range(len(applied)))
