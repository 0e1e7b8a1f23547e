"""docs/writing-a-pack.md, followed step by step: every command the chapter shows runs, in
order, in a temporary folder, and prints what the chapter says it prints.

The chapter's convention:

- A ```` ```console ```` block holds commands, each on a line starting with ``$ ``, each
  followed by what it prints (stdout and stderr, as a terminal shows them). A line ``...``
  stands for any number of lines, and ``...`` inside a line for any text. A command whose
  output has a line starting with ``error:`` must fail; every other command must succeed.
- A block whose info string ends in ``file=PATH`` (```` ```toml file=x/pack.toml ````) is a
  file the reader writes: its text becomes the whole of PATH, relative to the current folder.
- There is no other kind of fenced block: the chapter shows nothing that is not run here.

The commands run in a virtual environment made as tests/test_pack_wheel.py makes it, with a
stand-in for ``claude`` on PATH that answers like the scripted model. A ``pip`` step needs a
setuptools that builds wheels; without one the chapter runs up to its first ``pip`` step and
the rest is skipped.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_steps import matches, steps
from tests.models import SCRIPTED
from tests.venvs import ROOT, make_venv, offline_env, wheel_backend_missing

CHAPTER = ROOT / "docs" / "writing-a-pack.md"
SESSION = "3c6f1a52-8d4e-4b7a-9f21-6e0d5c8b7a14"
PROPOSAL = {
    "note": "Deploy.md",
    "kind": "append",
    "old": "",
    "new": "- 2026-11-30: Run `make assets` before `make deploy`; the deploy fails without "
    "the built assets.\n",
    "reason": "The session's deploy failed until make assets had built the assets.",
    "evidence": [{"session": SESSION, "ordinal": 0}],
}
RULES = [
    {
        "when": ["# Task: add to one note what recent agent sessions learned about its subject"],
        "reply": json.dumps([PROPOSAL]),
    },
    {
        "when": ["You are the reviewer for the gotchas pass."],
        "reply": json.dumps({"verdict": "confirm", "notes": "Turn 0 shows the failed deploy."}),
    },
]
CLAUDE = """\
#!{python}
# A stand-in for `claude -p --system-prompt-file FILE`: the scripted model answers.
import subprocess, sys
system = sys.argv[sys.argv.index("--system-prompt-file") + 1]
sys.exit(subprocess.call([{python!r}, {scripted!r}, {script!r}, "--system-file", system]))
"""


def fake_claude(folder: Path) -> Path:
    """A folder holding ``claude``: the scripted model with ``RULES``."""
    folder.mkdir()
    script = folder / "model.json"
    script.write_text(json.dumps({"rules": RULES}), encoding="utf-8")
    claude = folder / "claude"
    claude.write_text(
        CLAUDE.format(python=sys.executable, scripted=str(SCRIPTED), script=str(script)),
        encoding="utf-8",
    )
    claude.chmod(0o755)
    return folder


def test_the_chapter_reads_as_the_test_runs_it():
    found = steps(CHAPTER.read_text(encoding="utf-8"), CHAPTER.name)
    commands = [step.command.split()[0] for step in found if step.command]
    assert set(commands) <= {"hippo", "cd", "mkdir", "cat", "ls", "pip", "python"}
    assert sum(1 for step in found if step.path) >= 3


@pytest.mark.slow
def test_writing_a_pack_step_by_step(tmp_path: Path):
    venv = make_venv(tmp_path / "venv")
    env = offline_env(venv, fake_claude(tmp_path / "bin"))
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr in the order a terminal shows them
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude")
    cwd = tmp_path / "work"
    cwd.mkdir()
    missing = wheel_backend_missing()
    for step in steps(CHAPTER.read_text(encoding="utf-8"), CHAPTER.name):
        where = f"{CHAPTER.name}:{step.line}"
        if step.path:
            target = cwd / step.path
            assert target.parent.is_dir(), f"{where}: no folder {target.parent}"
            target.write_text("".join(line + "\n" for line in step.output), encoding="utf-8")
            continue
        args = shlex.split(step.command)
        if args[0] == "cd":
            cwd = (cwd / args[1]).resolve()
            assert cwd.is_dir() and not step.output, where
            continue
        if missing and "pip" in args[:3]:
            pytest.skip(f"{missing}; the chapter ran up to {where}")
        result = subprocess.run(
            args,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )
        fails = any(line.startswith("error:") for line in step.output)
        shown = f"{where}: $ {step.command}\n--- the chapter\n" + "\n".join(step.output)
        shown += f"\n--- printed (exit {result.returncode})\n{result.stdout}"
        assert (result.returncode != 0) == fails, shown
        assert matches(step.output, result.stdout), shown
