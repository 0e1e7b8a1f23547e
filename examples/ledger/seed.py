"""Write sample agent sessions for the ledger example, dated in the last few hours.

    python3 examples/ledger/seed.py

Claude Code records the folder a session ran in, and hippo counts a session as the
workspace's when it ran there. So the samples cannot be shipped as files: this script
writes them for wherever the example sits on your disk, into ``.demo/claude/``, in the
shape Claude Code 2.1 writes (one JSON line per message). Point ``CLAUDE_CONFIG_DIR`` at
that folder and ``hippo ingest`` reads them like any other transcript.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent

SESSIONS = [
    (
        "Fix the flaky migration test; it failed twice on CI today.",
        [
            ("Read", {"file_path": str(EXAMPLE / "notes" / "Testing.md")}),
            ("Bash", {"command": "uv run pytest tests/migrations -p no:randomly -x"}),
        ],
        "The Makefile is gone since the switch to uv, so `make test` no longer works. I ran "
        "the migrations suite with `uv run pytest tests/migrations -p no:randomly -x`: the "
        "roundtrip test fails only when another test holds the advisory lock. I serialised "
        "it with the `migrations` xdist group; the whole suite now runs with "
        "`uv run pytest -n auto` in about 5 minutes.",
    ),
    (
        "Rotate the database password for the staging cluster.",
        [
            ("Read", {"file_path": str(EXAMPLE / "notes" / "Runbooks" / "Rotate credentials.md")}),
            ("Bash", {"command": "ledgerctl secrets rotate --env staging --name db-password"}),
        ],
        "Rotated the staging database password with `ledgerctl secrets rotate --env staging "
        "--name db-password`; the pods picked the new secret up within two minutes.",
    ),
]


class Session:
    """The JSON lines of one Claude Code session."""

    def __init__(self, cwd: Path, start: datetime, number: int) -> None:
        # The same id on every run, so a second run replaces its sessions rather than adding
        # two more: the index keeps the turns of transcripts that are gone.
        self.id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{cwd.as_uri()}#session-{number}"))
        self.cwd, self.clock, self.parent = str(cwd), start, None
        self.lines: list[str] = []

    def record(self, kind: str, message: dict[str, object], **extra: object) -> None:
        self.clock += timedelta(seconds=20)
        record_id = str(uuid.uuid4())
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.id,
            "version": "2.1.332",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": record_id,
            "timestamp": self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            **extra,
        }
        self.parent = record_id
        self.lines.append(json.dumps(record, separators=(",", ":")))

    def assistant(self, block: dict[str, object]) -> None:
        message = {
            "id": f"msg_{uuid.uuid4().hex[:20]}",
            "role": "assistant",
            "model": "claude-opus-4-5",
            "content": [block],
        }
        self.record("assistant", message)

    def tool(self, name: str, arguments: dict[str, object]) -> None:
        call = f"toolu_{uuid.uuid4().hex[:20]}"
        self.assistant({"type": "tool_use", "id": call, "name": name, "input": arguments})
        result = [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]
        self.record("user", {"role": "user", "content": result}, toolUseResult={"type": "text"})


def main() -> None:
    home = EXAMPLE / ".demo" / "claude"
    folder = home / "projects" / "".join(c if c.isalnum() else "-" for c in str(EXAMPLE))
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.jsonl"):
        old.unlink()
    start = datetime.now(UTC) - timedelta(hours=len(SESSIONS) + 1)
    for number, (prompt, tools, answer) in enumerate(SESSIONS):
        session = Session(EXAMPLE, start + timedelta(hours=number), number)
        session.record("user", {"role": "user", "content": prompt})
        for name, arguments in tools:
            session.tool(name, arguments)
        session.assistant({"type": "text", "text": answer})
        path = folder / f"{session.id}.jsonl"
        path.write_text("".join(line + "\n" for line in session.lines), encoding="utf-8")
    print(f"wrote {len(SESSIONS)} sample Claude Code sessions to {home}")


if __name__ == "__main__":
    main()
