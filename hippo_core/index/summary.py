"""What one ``hippo ingest`` did: its counts, for the one-line summary and ``--json``."""

from __future__ import annotations

from hippo_core.base.records import Struct

_COUNTS = (
    "files",
    "read",
    "unchanged",
    "vanished",
    "reread",
    "turns",
    "duplicates",
    "sessions",
    "corrupt",
    "redacted",
    "private_sessions",
    "model_calls",
    "bytes",
)


class IngestSummary(Struct):
    """What one ingest did, for its one-line summary and ``--json``: counts, the seconds it
    took, whether the index was rebuilt, and the problems it met."""

    __slots__ = (*_COUNTS, "seconds", "rebuilt", "problems")
    files: int
    read: int
    unchanged: int
    vanished: int
    reread: int
    turns: int
    duplicates: int
    sessions: int
    corrupt: int
    redacted: int
    private_sessions: int
    model_calls: int
    """Sessions that were hippo's own model calls (their prompts carry its marker)."""
    bytes: int
    seconds: float
    rebuilt: bool
    problems: list[str]

    def __init__(self) -> None:
        self._set(**dict.fromkeys(_COUNTS, 0), seconds=0.0, rebuilt=False, problems=[])

    def line(self) -> str:
        parts = [
            f"ingested {self.read} of {self.files} transcript files",
            _count(self.turns, "new turn"),
            _count(self.sessions, "new session"),
        ]
        for count, thing, verb in (
            (self.duplicates, "duplicate turn", "skipped"),
            (self.corrupt, "corrupt line", "skipped"),
            (self.redacted, "secret", "redacted"),
            (self.private_sessions, "private session", "left out"),
            (self.model_calls, "hippo model call", "left out"),
            (self.vanished, "file", "vanished"),
            (len(self.problems), "problem", ""),
        ):
            if count:
                parts.append(f"{_count(count, thing)} {verb}".rstrip())
        return ", ".join(parts) + f" ({self.seconds:.1f} s)"


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"
