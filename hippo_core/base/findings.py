"""A finding: one thing the linter or the doctor has to say about the workspace."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Level = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    """What was found (``code``), how bad it is, where, and the detail a person needs."""

    level: Level
    code: str
    detail: str = ""
    where: str = ""
    line: int | None = None

    def render(self) -> str:
        """``where:line: level: code: detail``, leaving out the parts that are empty."""
        place = self.where if self.line is None else f"{self.where}:{self.line}"
        parts = [p for p in (place, self.level, self.code, self.detail) if p]
        return ": ".join(parts)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def count_levels(findings: list[Finding]) -> tuple[int, int]:
    """The numbers of errors and warnings among ``findings``."""
    errors = sum(1 for f in findings if f.level == "error")
    warnings = sum(1 for f in findings if f.level == "warning")
    return errors, warnings
