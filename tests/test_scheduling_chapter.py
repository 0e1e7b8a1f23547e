"""docs/scheduling.md, followed step by step on a stand-in machine: every command of its
```` ```console ```` blocks runs, in order, in a fresh workspace called ``shop``, and prints
what the chapter says (``...`` as in tests/test_tutorial.py). A ```` ```toml append=PATH ````
block is added to PATH, as the chapter asks the reader to. A ```` ```text ```` block is a
sample of a log, not a command. The machine has stand-ins for ``systemctl``, ``launchctl``
and ``crontab`` (tests/test_schedule.py's), so its own scheduler is systemd; nothing real is
scheduled."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.doc_steps import blocks, console, matches
from tests.test_schedule import CRONTAB, LAUNCHCTL, SYSTEMCTL
from tests.venvs import ROOT

CHAPTER = ROOT / "docs" / "scheduling.md"


def test_the_scheduling_chapter_step_by_step(tmp_path: Path) -> None:
    home, programs, state = tmp_path / "home", tmp_path / "bin", tmp_path / "state"
    for folder in (home, programs, state):
        folder.mkdir(exist_ok=True)
    for name, text in (("systemctl", SYSTEMCTL), ("launchctl", LAUNCHCTL), ("crontab", CRONTAB)):
        (programs / name).write_text(text)
        (programs / name).chmod(0o755)
    (programs / "launchctl").unlink()  # a Linux machine: no launchd
    env = {
        "HOME": str(home),
        "HIPPO_HOME": str(home / ".hippo"),
        "HIPPO_LOAD_PLUGINS": "sleep",
        "PATH": f"{programs}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "FAKE_SYSTEMD": str(state),
        "FAKE_LAUNCHD": str(state),
        "FAKE_CRONTAB": str(state / "crontab"),
        "LANG": "C.UTF-8",
    }
    shop = tmp_path / "shop"
    shop.mkdir()
    hippo = str(Path(sys.executable).parent / "hippo")
    subprocess.run([hippo, "init"], cwd=shop, env=env, check=True, capture_output=True)
    ran = 0
    for line, info, body in blocks(CHAPTER.read_text(encoding="utf-8")):
        where = f"{CHAPTER.name}:{line}"
        appended = re.fullmatch(r"toml append=(\S+)", info)
        if appended:
            with (shop / appended.group(1)).open("a", encoding="utf-8") as handle:
                handle.write("\n" + "".join(f"{text}\n" for text in body))
            continue
        if info in ("text", ""):
            assert not any(text.startswith("$ ") for text in body), f"{where}: a command in text"
            continue
        assert info == "console", f"{where}: a ```{info} block this test does not run"
        for step in console(body, line + 1, CHAPTER.name):
            command, output = step.command, step.output
            done = subprocess.run(
                ["sh", "-c", command],
                cwd=shop,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                check=False,
            )
            fails = any(text.startswith("error:") for text in output)
            shown = f"{where}: $ {command}\n--- the chapter\n" + "\n".join(output)
            shown += f"\n--- printed (exit {done.returncode})\n{done.stdout}"
            assert (done.returncode != 0) == fails, shown
            assert matches(output, done.stdout), shown
            ran += 1
    assert ran >= 10
