"""docs/sleep.md, followed step by step: every ```console block runs in order in one
workspace and prints what the chapter says (``...`` stands for any text, as in
tests/test_tutorial.py); every ```toml block is a valid ``[sleep]`` table, every
```json block a valid list of review decisions, and the ```python block is the webhook
receiver's check, which tests/test_sleep_notify.py runs against real signed POSTs.

A draft id in a command (``d20261201T093000000000Z-1a2b``) stands for the draft the night
made: the chapter cannot know it, so the run puts the real one in its place.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

from hippo_core.workspace.folder import Workspace
from tests.conftest import HippoRunner
from tests.doc_steps import blocks, console, matches
from tests.terminal import in_a_terminal
from tests.venvs import ROOT

CHAPTER = ROOT / "docs" / "sleep.md"
DRAFT_ID = re.compile(r"d\d{8}T\d{12}Z-[0-9a-f]{4}")


def test_the_sleep_chapter_runs_as_written(tmp_path: Path, hippo: HippoRunner):
    root = tmp_path / "night"
    root.mkdir()
    assert hippo("init", cwd=root).code == 0
    ran = 0
    written: dict[str, object] = {}
    for start, info, body in blocks(CHAPTER.read_text(encoding="utf-8")):
        where = f"sleep.md:{start}"
        if info == "toml":
            from hippo_packs.sleep.config import SleepSettings

            table = tomllib.loads("\n".join(body))["sleep"]
            SleepSettings.model_validate(table)
            if "voice" in table:  # "opt in": the reader writes this block into the settings
                with (root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as out:
                    out.write("\n" + "\n".join(body) + "\n")
                written = table
            continue
        if info == "json":
            decisions = json.loads("\n".join(body))
            if isinstance(decisions, dict):  # an extractive answer: choices only
                from hippo_packs.sleep.cycle.choices import KINDS

                chosen = decisions["operations"]
                assert all(set(op) == {"kind", "fragments", "core"} for op in chosen), where
                assert all(op["kind"] in KINDS for op in chosen), where
                continue
            assert all({"op", "verdict"} <= set(d) for d in decisions), where
            continue
        if info == "python":
            code = "\n".join(body)
            assert code.startswith("import hashlib\n") and "def verified(" in code, where
            continue
        assert info == "console", f"{where}: a ```{info} block is not checked"
        for step in console(body, start + 1, "sleep.md"):
            command, output = step.command, step.output
            args = shlex.split(command)
            drafts = sorted((root / ".hippo/sleep/drafts").glob("*.json"))
            args = [DRAFT_ID.sub(drafts[-1].stem, a) if drafts else a for a in args]
            if args[0] == "cat":
                printed, failed = (root / args[1]).read_text(encoding="utf-8"), False
            else:
                assert args[0] == "hippo", where
                if args[1] == "review" and len(args) > 3:  # a decision, as a person makes it
                    code, printed = in_a_terminal(root, *args[1:])
                    failed = code != 0
                else:
                    run = hippo(*args[1:], cwd=root)
                    printed, failed = run.out + run.err, run.code != 0
            shown = f"{where}: $ {command}\n--- the chapter\n" + "\n".join(output)
            shown += f"\n--- printed\n{printed}"
            assert failed == any(line.startswith("error:") for line in output), shown
            assert matches(output, printed), shown
            ran += 1
    assert ran >= 15
    assert Workspace.open(root).settings.tables == {"sleep": written}
