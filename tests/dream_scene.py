"""A workspace ready to dream: notes, the core pack, a Claude Code transcript of the last
hours, and a scripted model whose replies each test chooses."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, Run, write_notes
from tests.models import calls, scripted_model

TESTING = """\
---
type: policy
status: current
---
# Testing

Run the tests with `make test` from the repository root.

The suite needs a local Postgres; start it with `docker compose up db` first, and keep
the fixtures small: each test builds only the rows it reads. Flaky tests are quarantined
with the `flaky` marker and fixed within the week.
"""

PROPOSER = "# Task: check one note against transcript turns"
CONSOLIDATOR = "# Task: fold what finished sessions learned into the notes they link"
VERIFY_REVIEWER = "You are the reviewer for hippo's verify pass"
CONSOLIDATE_REVIEWER = "You are the reviewer for hippo's consolidate pass"
CONFIRM = json.dumps({"verdict": "confirm", "notes": "The turn shows uv runs the tests."})
REJECT = json.dumps({"verdict": "reject", "notes": "The turn only plans the switch."})


def replace(note: str = "Testing.md", old: str = "", new: str = "", **extra: Any) -> dict:
    proposal = {
        "note": note,
        "kind": "replace",
        "old": old or "Run the tests with `make test` from the repository root.",
        "new": new or "Run the tests with `uv run pytest -q` from the repository root.",
        "reason": "SECRET-REASON: the Makefile is gone.",
        "evidence": [{"session": "SESSION", "ordinal": 0}],
    }
    return {**proposal, **extra}


@dataclass
class Scene:
    root: Path
    hippo: HippoRunner
    tmp_path: Path
    claude_home: Path
    session: str = ""
    script: Path | None = None
    rules: list[dict[str, Any]] = field(default_factory=list)

    @property
    def note(self) -> Path:
        return self.root / "notes" / "Testing.md"

    def transcript(self, hours_ago: float = 2.0, answer: str = "") -> str:
        start = datetime.now(UTC) - timedelta(hours=hours_ago)
        session = ClaudeSession(self.claude_home, str(self.root), start=start)
        session.prompt("How do we run the Testing suite now that the Makefile is gone?")
        session.answer(
            answer
            or "The Makefile was removed. I ran `uv run pytest -q` from the repository root "
            "and all 214 tests passed."
        )
        session.write()
        self.session = session.session
        return session.session

    def model(self, *rules: dict[str, Any], system_file: bool = True) -> Path:
        """Set ``model_command`` to a scripted model answering by ``rules``."""
        fixed = [_fill(rule, self.session) for rule in rules]
        argv, script = scripted_model(self.tmp_path, fixed, system_file=system_file)
        settings = self.root / ".hippo" / "settings.toml"
        lines = [
            line
            for line in settings.read_text(encoding="utf-8").splitlines()
            if not line.startswith("model_command")
        ]
        lines.insert(0, f"model_command = {json.dumps(argv)}")
        settings.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.script = script
        return script

    def proposer_replies(self, *proposals: dict[str, Any], verdict: str = CONFIRM) -> Path:
        return self.model(
            {"when": [PROPOSER], "reply": json.dumps(list(proposals))},
            {"when": [VERIFY_REVIEWER], "reply": verdict},
        )

    def calls(self) -> list[dict[str, Any]]:
        return calls(self.script) if self.script and self.script.exists() else []

    def dream(self, *args: str) -> Run:
        return self.hippo("dream", *args, cwd=self.root)

    def report(self) -> str:
        """The newest report (``<date>-2-dream.md`` is newer than ``<date>-dream.md``)."""
        from hippo_core.dream.state import reports
        from hippo_core.workspace.folder import Workspace

        return reports(Workspace.open(self.root))[-1].read_text(encoding="utf-8")

    def files(self, folder: str) -> list[Path]:
        return sorted((self.root / ".hippo" / folder).rglob("*.json"))

    def section(self, name: str) -> list[str]:
        lines = self.report().splitlines()
        start = lines.index(f"## {name}") + 2
        end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
        return [line for line in lines[start:end] if line]


def _fill(rule: dict[str, Any], session: str) -> dict[str, Any]:
    if isinstance(rule.get("reply"), str):
        return {**rule, "reply": rule["reply"].replace("SESSION", session)}
    return rule


def make_scene(root: Path, hippo: HippoRunner, tmp_path: Path, claude_home: Path) -> Scene:
    assert hippo("init", cwd=root).code == 0
    write_notes(root, {"Testing.md": TESTING})
    return Scene(root, hippo, tmp_path, claude_home)
