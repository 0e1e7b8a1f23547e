"""docs/quick-start.md and the README's "A short tour", followed step by step: every command
they show runs, in order, in a temporary folder, with the real ``hippo`` program of this
environment.

The chapter follows the convention of tests/test_tutorial.py (docs/writing-a-pack.md):

- A ```` ```console ```` block holds commands, each on a line starting with ``$ ``, each
  followed by what it prints (stdout and stderr, as a terminal shows them). A line ``...``
  stands for any number of lines, and ``...`` inside a line for any text. A command whose
  output has a line starting with ``error:`` must fail; every other command must succeed.
- A block whose info string ends in ``file=PATH`` is a file the reader writes: its text
  becomes the whole of PATH, relative to the current folder.
- There is no other kind of fenced block.

The README's tour is a ```` ```sh ```` block of commands with comments: each line runs in
``sh`` and must exit 0; what it prints is not compared (a ```` ```console ```` block there
would be checked as in the chapter). ``RECEIPT`` and ``DRAFT`` stand for ids the tour cannot
know, so the run puts the newest receipt's and the newest sleep draft's in their place.

Commands run in ``sh`` with a fresh home (``HOME``, ``HIPPO_HOME`` and the agents' homes in
the temporary folder, only hippo's own plugins), this environment's scripts on ``PATH``, and
before them a stand-in ``claude`` that answers like the scripted model (tests/models/).
What a person does between the commands is done here too: the chapter's Claude Code session
runs the hooks ``hippo hooks install`` wrote and leaves its transcript, and the tour's
project has a recent session and an ``$EDITOR`` that writes its entry note.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.claude_factory import ClaudeSession
from tests.doc_steps import Step, matches, steps
from tests.models import SCRIPTED
from tests.pty_run import run_in_terminal
from tests.test_tutorial import CLAUDE
from tests.venvs import ROOT

CHAPTER = ROOT / "docs" / "quick-start.md"
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
"""Where this environment's ``hippo`` is (the venv's ``bin``)."""
SESSION = "3f2b9c41-7d0e-4a8b-9c55-1e2f3a4b5c6d"

pytestmark = pytest.mark.skipif(
    shutil.which("sh") is None or shutil.which("git") is None, reason="needs sh and git"
)

# The chapter's Claude Code session, and what the model answers when Shop dreams.
PROMPT = "Refunds queued on Saturday only went out on Monday. Why?"
ANSWER = (
    "The refund job runs from a cron entry that skips Saturday and Sunday, so refunds queued "
    "on a weekend wait until Monday."
)
APPEND = {
    "note": "Payments.md",
    "kind": "append",
    "old": "",
    # Dated with the day the session ended (today), in the handoff's words: a change brings
    # nothing its evidence does not say.
    "new": f"- {datetime.now(UTC):%Y-%m-%d}: Refunds queued on a weekend go out on Monday: "
    "the refund job's cron entry runs on weekdays only.\n",
    "reason": "The session found that the refund job runs on weekdays only.",
    "evidence": [{"session": SESSION, "ordinal": 0}],
}
CONFIRM = json.dumps({"verdict": "confirm", "notes": "Turn 0 shows it."})
SHOP_RULES: list[dict[str, Any]] = [
    {"when": ["# Task: fold what finished sessions learned"], "reply": json.dumps([APPEND])},
    {"when": ["# Task: check one note against transcript turns"], "reply": "[]"},
    {"when": ["You are the reviewer for hippo's consolidate pass."], "reply": CONFIRM},
]

# The tour's project: its entry note (what $EDITOR writes), its session, its model.
HOME_NOTE = """\
---
type: topic
status: current
---
# Ledger

Ledger is the payments service: it takes payments, sends refunds and keeps the books.

- The refund job runs every night at 03:00.
- Run the tests with `make test` before you open a pull request.

## Index
"""
TOUR_PROMPT = "Why did the Ledger refund for order 4411 wait until 09:00?"
TOUR_ANSWER = "Ledger's refund job runs every hour since last week; the 09:00 run sent it."
CORRECTION = {
    "note": "Home.md",
    "kind": "replace",
    "old": "runs every night at 03:00",
    "new": "runs every hour",
    "reason": "The session says the refund job runs every hour.",
    "evidence": [{"session": "SESSION", "ordinal": 0}],
}
EDITOR = """\
#!{python}
import sys
open(sys.argv[1], "w", encoding="utf-8").write({text!r})
"""


def tour() -> tuple[str, int]:
    """The README's "A short tour" section and the number of its first line."""
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## A short tour\n") + 1
    end = text.find("\n## ", start)
    return text[start : end if end >= 0 else None], text[:start].count("\n") + 1


@dataclass
class Shell:
    """A terminal: a current folder, an environment, and what happens between commands."""

    cwd: Path
    env: dict[str, str]
    page: str
    before: dict[str, Callable[[], None]] = field(default_factory=dict)
    """Run once before the first command that starts with the key."""
    ids: dict[str, Callable[[], str | None]] = field(default_factory=dict)
    """A word in a command that stands for an id the page cannot know."""
    terminal: tuple[str, ...] = ()
    """Commands a person runs at a terminal (a pseudo-terminal here) and not a script."""

    def follow(self, found: list[Step]) -> None:
        for step in found:
            where = f"{self.page}:{step.line}"
            if step.path:
                target = self.cwd / step.path
                assert target.parent.is_dir(), f"{where}: no folder {target.parent}"
                target.write_text("".join(line + "\n" for line in step.output), encoding="utf-8")
                continue
            command = step.command
            args = shlex.split(command, comments=True)
            if args[0] == "cd":
                self.cwd = (self.cwd / args[1]).resolve()
                assert len(args) == 2 and self.cwd.is_dir() and not step.output, where
                continue
            for start in [key for key in self.before if command.startswith(key)]:
                self.before.pop(start)()
            for word, value in self.ids.items():
                if re.search(rf"\b{word}\b", command):
                    found_id = value()
                    assert found_id, f"{where}: $ {command}: there is no {word} yet"
                    command = re.sub(rf"\b{word}\b", found_id, command)
            if step.command.startswith(self.terminal):
                code, out = run_in_terminal(["sh", "-c", command], self.cwd, self.env)
                out = out.replace("\r\n", "\n")
            else:
                result = subprocess.run(
                    ["sh", "-c", command],
                    cwd=self.cwd,
                    env=self.env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    check=False,
                )
                code, out = result.returncode, result.stdout
            shown = f"{where}: $ {command}\n--- the page\n" + "\n".join(step.output)
            shown += f"\n--- printed (exit {code})\n{out}"
            if not step.compared:
                assert code == 0, shown
                continue
            fails = any(line.startswith("error:") for line in step.output)
            assert (code != 0) == fails, shown
            assert matches(step.output, out), shown


def environment(home: Path, bin_dir: Path) -> dict[str, str]:
    """A shell's environment with nothing of this machine's agents, git or hippo settings."""
    own = ("HIPPO_", "CLAUDE_", "CODEX_", "GEMINI_", "DSH_", "XDG_", "GIT_", "EDITOR")
    env = {k: v for k, v in os.environ.items() if not k.startswith(own)}
    env.update(
        HOME=str(home),
        HIPPO_HOME=str(home / "hippo"),
        HIPPO_LOAD_PLUGINS="sleep",  # hippo's own plugins only, as tests/conftest.py does
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        PATH=os.pathsep.join([str(bin_dir), str(BIN), env.get("PATH", "")]),
        PYTHONUNBUFFERED="1",  # stdout and stderr in the order a terminal shows them
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Alice",
        GIT_AUTHOR_EMAIL="alice@example.org",
        GIT_COMMITTER_NAME="Alice",
        GIT_COMMITTER_EMAIL="alice@example.org",
    )
    return env


def fake_claude(folder: Path, rules: list[dict[str, Any]]) -> Path:
    """A folder holding ``claude``: the scripted model with ``rules``."""
    folder.mkdir()
    script = folder / "model.json"
    script.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    claude = folder / "claude"
    claude.write_text(
        CLAUDE.format(python=sys.executable, scripted=str(SCRIPTED), script=str(script)),
        encoding="utf-8",
    )
    claude.chmod(0o755)
    return folder


def git_repository(folder: Path, env: dict[str, str]) -> Path:
    folder.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=folder, env=env, check=True)
    return folder.resolve()


def claude_code_session(shop: Path, env: dict[str, str]) -> None:
    """A Claude Code session in ``shop``: the hooks in .claude/settings.json run as Claude
    Code runs them, and the transcript is written as it writes it."""
    hooks = json.loads((shop / ".claude" / "settings.json").read_text(encoding="utf-8"))["hooks"]
    session = ClaudeSession(
        Path(env["CLAUDE_CONFIG_DIR"]),
        str(shop),
        session=SESSION,
        start=datetime.now(UTC) - timedelta(minutes=20),
    )
    sent = {"session_id": SESSION, "transcript_path": str(session.path), "cwd": str(shop)}
    events = [
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": PROMPT, "permission_mode": "default"}),
        ("SessionEnd", {"reason": "prompt_input_exit"}),
    ]
    for event, extra in events:
        if event == "SessionEnd":
            session.prompt(PROMPT).answer(ANSWER).write()
        payload = json.dumps({**sent, "hook_event_name": event, **extra})
        [command] = [hook["command"] for entry in hooks[event] for hook in entry["hooks"]]
        ran = subprocess.run(
            ["sh", "-c", command], input=payload, cwd=shop, env=env, capture_output=True, text=True
        )
        assert ran.returncode == 0 and not ran.stderr, (event, ran)


def newest(folder: Path) -> str | None:
    """The id (the file's stem) of the last JSON file in ``folder``: receipts and drafts are
    named after their time, so it is the newest."""
    found = sorted(folder.glob("*.json"))
    return found[-1].stem if found else None


def pending(project: Path) -> str | None:
    """The proposal a dream left for a person: the entry note's correction, here."""
    for path in sorted((project / ".hippo" / "reviews").glob("*.json")):
        review = json.loads(path.read_text(encoding="utf-8"))
        if review["verdict"] == "pending":
            return str(review["proposal"])
    return None


def test_the_pages_read_as_the_test_runs_them() -> None:
    chapter = steps(CHAPTER.read_text(encoding="utf-8"), CHAPTER.name)
    commands = {step.command.split()[0] for step in chapter if step.command}
    assert commands <= {"hippo", "cd", "cat", "grep", "git"}
    assert sum(1 for step in chapter if step.path) >= 4
    section, first = tour()
    shown = steps(section, README.name, first, sh=True)
    assert len(shown) >= 20 and all(step.command for step in shown)
    assert shown[0].command.startswith("cd ")


def test_the_quick_start_step_by_step(isolated_home: Path, tmp_path: Path) -> None:
    env = environment(isolated_home, fake_claude(tmp_path / "bin", SHOP_RULES))
    shop = git_repository(tmp_path / "shop", env)
    shell = Shell(tmp_path, env, CHAPTER.name)
    shell.before["hippo ingest"] = lambda: claude_code_session(shop, env)
    shell.follow(steps(CHAPTER.read_text(encoding="utf-8"), CHAPTER.name))
    assert shell.cwd == shop and not shell.before
    assert (shop / ".hippo" / "receipts").is_dir()


def test_the_readme_tour_runs(isolated_home: Path, tmp_path: Path) -> None:
    rules: list[dict[str, Any]] = [
        {"when": ["# Task: check one note against transcript turns", "# Ledger"]},
        {"when": ["You are the reviewer for hippo's verify pass."], "reply": CONFIRM},
        {"when": ["# Task: "], "reply": "[]"},  # every other pass, the pack eval's included
    ]
    env = environment(isolated_home, fake_claude(tmp_path / "bin", rules))
    project = git_repository(tmp_path / "your-project", env)
    editor = tmp_path / "bin" / "editor"
    editor.write_text(EDITOR.format(python=sys.executable, text=HOME_NOTE), encoding="utf-8")
    editor.chmod(0o755)
    env["EDITOR"] = str(editor)
    # A session from an hour ago in the project, waiting for `hippo ingest`.
    session = ClaudeSession(
        Path(env["CLAUDE_CONFIG_DIR"]), str(project), start=datetime.now(UTC) - timedelta(hours=1)
    )
    session.prompt(TOUR_PROMPT).answer(TOUR_ANSWER).write()

    def model_knows_the_session() -> None:
        # The verify pass's correction cites the session by hippo's id for it, from ingest.
        [record] = (project / ".hippo" / "sessions").glob("*.json")
        sid = record.stem
        correction = {**CORRECTION, "evidence": [{"session": sid, "ordinal": 0}]}
        rules[0]["reply"] = json.dumps([correction])
        (tmp_path / "bin" / "model.json").write_text(json.dumps({"rules": rules}), "utf-8")

    section, first = tour()
    shell = Shell(tmp_path, env, README.name)
    shell.before["hippo dream --dry-run"] = model_knows_the_session
    shell.ids["PROPOSAL"] = lambda: pending(project)
    shell.terminal = ("hippo review PROPOSAL",)
    shell.ids["RECEIPT"] = lambda: newest(project / ".hippo" / "receipts")
    shell.ids["DRAFT"] = lambda: newest(project / ".hippo" / "sleep" / "drafts")
    shell.follow(steps(section, README.name, first, sh=True))
    assert shell.cwd == project and not shell.before
    assert "every night" in (project / "notes" / "Home.md").read_text(encoding="utf-8")
