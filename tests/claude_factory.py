"""Claude Code transcripts written the way Claude Code 2.1 writes them, for tests and bench.

The shapes follow the real files in ``tests/fixtures/transcripts/claude-code``: a prompt is
a ``user`` record with string content; one assistant message is one record per content
block sharing ``message.id``; tool results are ``user`` records with ``toolUseResult``.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any


class ClaudeSession:
    """Builds the JSONL lines of one session; ``write`` appends them to its file."""

    def __init__(
        self,
        root: Path,
        cwd: str,
        session: str | None = None,
        branch: str = "main",
        start: datetime | None = None,
    ):
        self.session = session or str(uuid.uuid4())
        self.cwd = cwd
        self.branch = branch
        slug = "".join(c if c.isalnum() else "-" for c in cwd)
        self.path = root / "projects" / slug / f"{self.session}.jsonl"
        self.lines: list[str] = []
        self.parent: str | None = None
        self.clock = 0
        self.start = start

    def _stamp(self) -> str:
        self.clock += 1
        if self.start is not None:
            moment = self.start + timedelta(seconds=self.clock)
            return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        minutes, seconds = divmod(self.clock, 60)
        return f"2026-11-30T04:{minutes % 60:02d}:{seconds:02d}.000Z"

    def _record(self, kind: str, message: dict[str, Any], **extra: Any) -> str:
        record_id = str(uuid.uuid4())
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.332",
            "gitBranch": self.branch,
            "type": kind,
            "message": message,
            "uuid": record_id,
            "timestamp": self._stamp(),
            **extra,
        }
        self.parent = record_id
        self.lines.append(json.dumps(record, separators=(",", ":")))
        return record_id

    def prompt(self, text: str) -> ClaudeSession:
        self._record("user", {"role": "user", "content": text})
        return self

    def answer(self, text: str) -> ClaudeSession:
        message = {
            "id": f"msg_{uuid.uuid4().hex[:20]}",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "output_tokens": 20},
        }
        self._record("assistant", message, requestId=f"req_{uuid.uuid4().hex[:12]}")
        return self

    def tool(self, name: str, result: str = "ok", **tool_input: Any) -> ClaudeSession:
        call = f"toolu_{uuid.uuid4().hex[:20]}"
        message = {
            "id": f"msg_{uuid.uuid4().hex[:20]}",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [{"type": "tool_use", "id": call, "name": name, "input": tool_input}],
            "usage": {"input_tokens": 10, "output_tokens": 20},
        }
        self._record("assistant", message)
        content = [{"type": "tool_result", "tool_use_id": call, "content": result}]
        self._record(
            "user",
            {"role": "user", "content": content},
            toolUseResult={"type": "text", "file": {"filePath": tool_input.get("file_path", "")}},
        )
        return self

    def write(self) -> Path:
        """Append the lines built so far to the file; return its path."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in self.lines))
        self.lines = []
        return self.path
