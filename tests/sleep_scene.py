"""A workspace with the sleep pack added, driven through the CLI like a person or an agent."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import HippoRunner, Run


@dataclass
class Sleepy:
    root: Path
    hippo: HippoRunner

    def run(self, *args: str) -> Run:
        return self.hippo(*args, cwd=self.root)

    def ok(self, *args: str) -> Run:
        run = self.run(*args)
        assert run.code == 0, (args, run.out, run.err)
        return run

    def as_person(self, *args: str) -> str:
        """``hippo ARGS`` as a person at a terminal, typing back the code it shows: what a
        verbatim, a core from one fragment and ``review = "person"`` need."""
        from tests.terminal import in_a_terminal

        code, said = in_a_terminal(self.root, *args)
        assert code == 0, (args, said)
        return said

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "--json").out)

    def failed(self, *args: str) -> Any:
        """A command whose sleep or tend failed: exit 1, the reason on stderr as one
        ``error:`` line, and the record still printed with ``--json``."""
        run = self.run(*args, "--json")
        assert run.code == 1, (args, run.out, run.err)
        assert run.err.startswith("error: the ") and "Traceback" not in run.err, run.err
        return json.loads(run.out)

    def remember(self, text: str, topic: str = "", *flags: str) -> str:
        args = ["remember", text, *(["--topic", topic] if topic else []), *flags]
        return str(self.json(*args)["id"])

    def drafts(self) -> list[dict[str, Any]]:
        folder = self.root / ".hippo/sleep/drafts"
        return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]

    def draft(self) -> dict[str, Any]:
        return self.drafts()[-1]

    def cores(self) -> dict[str, str]:
        folder = self.root / "notes/cores"
        return {p.stem: p.read_text() for p in sorted(folder.glob("*.md"))}

    def events(self) -> list[str]:
        return [e["event"] for e in reversed(self.json("sleep", "events"))]

    def state(self) -> dict[str, Any]:
        return json.loads((self.root / ".hippo/sleep/state.json").read_text())

    def set_state(self, **values: Any) -> None:
        path = self.root / ".hippo/sleep/state.json"
        state = json.loads(path.read_text()) if path.exists() else {}
        state.update(values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(state))

    def core_note(self, name: str, text: str, topic: str = "deploy", evidence: int = 2) -> Path:
        path = self.root / "notes/cores" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'---\ntype: core\nstatus: current\ntopic: "{topic}"\nevidence_count: {evidence}\n'
            f"updated: 2026-11-01\ncreated: 2026-11-01\n---\n# {text}\n\n{text}\n"
        )
        return path


def model_settings(url: str, draft: str = "abstractive", **sleep: Any) -> str:
    """Settings for a drafting model at ``url``: abstractive unless ``draft`` says (the
    scripted answers of most tests are written operations; extractive ones are choices)."""
    lines = ["[sleep]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in sleep.items()]
    lines += ["[sleep.model]", f"url = {json.dumps(url)}", "timeout_seconds = 10"]
    lines += [f"draft = {json.dumps(draft)}"]
    return "\n".join(lines) + "\n"


def make_sleepy(root: Path, hippo: HippoRunner, settings: str = "") -> Sleepy:
    scene = Sleepy(root, hippo)
    scene.ok("init")
    scene.ok("pack", "add", "sleep")
    if settings:
        with (root / ".hippo/settings.toml").open("a", encoding="utf-8") as handle:
            handle.write("\n" + settings)
    return scene
