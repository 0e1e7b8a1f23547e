"""What one ``hippo ingest`` did: its counts, for the one-line summary and ``--json``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class IngestSummary:
    """What one ingest did, for its one-line summary and ``--json``."""

    files: int = 0
    read: int = 0
    unchanged: int = 0
    vanished: int = 0
    reread: int = 0
    turns: int = 0
    duplicates: int = 0
    sessions: int = 0
    corrupt: int = 0
    redacted: int = 0
    private_sessions: int = 0
    bytes: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    problems: list[str] = field(default_factory=list)

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
            (self.vanished, "file", "vanished"),
            (len(self.problems), "problem", ""),
        ):
            if count:
                parts.append(f"{_count(count, thing)} {verb}".rstrip())
        return ", ".join(parts) + f" ({self.seconds:.1f} s)"


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"
