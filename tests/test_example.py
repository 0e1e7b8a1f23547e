"""The example workspace the README runs: it stays healthy and shows what hippo does."""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import HippoRunner

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "ledger"


def test_the_readme_main_job_on_the_example(
    tmp_path: Path, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
):
    root = tmp_path / "ledger"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("cache", ".demo", "reports"))
    doctor = hippo("doctor", cwd=root)
    assert doctor.code == 0, doctor.out
    assert "dangling link: [[Refund webhooks]]" in doctor.out
    assert "notes/On-call.md:1: warning: overdue: review_after 2026-09-01" in doctor.out
    assert "error" not in doctor.out.replace("0 errors", "")

    run = hippo("context", "--task", "fix the flaky migration test", cwd=root)
    assert run.code == 0
    assert run.err == ""
    lines = run.out.splitlines()
    assert lines[0] == "# Ledger team notes"
    assert "required: Policies/Money handling.md" in lines
    relevant = lines[lines.index("relevant:") + 1 :]
    assert relevant[0].startswith("- Testing: ")
    assert relevant[-1].startswith("linter: overdue=")

    seeded = subprocess.run(
        [sys.executable, str(root / "seed.py")], capture_output=True, text=True, check=True
    )
    assert seeded.stdout.startswith("wrote 2 sample Claude Code sessions to ")
    monkeypatch.setenv("HIPPO_HOME", str(root / ".demo" / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root / ".demo" / "claude"))
    ingest = hippo("ingest", cwd=root)
    assert ingest.out.startswith("ingested 2 of 2 transcript files, 2 new turns, 2 new sessions")
    dream = hippo("dream", "--dry-run", cwd=root)
    assert dream.code == 0, dream.err
    [report] = (root / ".hippo" / "reports").iterdir()
    assert dream.out == f"dream ok: report .hippo/reports/{report.name}\n"
    text = report.read_text()
    assert "- dry run: nothing was written but this report" in text
    # What README.md says the report holds (newcomer defect 2): a verify prompt for each of
    # seven of the twelve notes, the two the sessions read among them; none from consolidate.
    readme = " ".join((EXAMPLE.parent.parent / "README.md").read_text().split())
    assert (
        "seven of the example's twelve notes, the two the sessions read (`Testing.md`, "
        "`Runbooks/Rotate credentials.md`) and five that share their words. Consolidate "
        "builds no prompt, since neither session handed off to a note."
    ) in readme
    assert len(list((root / "notes").rglob("*.md"))) == 12
    verified = re.findall(r"core/verify, note `([^`]+)`: prompt of ", text)
    assert len(verified) == 7
    assert {"Testing.md", "Runbooks/Rotate credentials.md"} <= set(verified)
    assert "core/consolidate: 1 prompt with no notes (no model call)" in text
    assert ": done, 2 sessions, 7 prompts built" in text
    # Seeding again writes the same two sessions anew: the dream still sees two (defect 27).
    subprocess.run([sys.executable, str(root / "seed.py")], capture_output=True, check=True)
    again = hippo("ingest", cwd=root)
    assert ", 0 new sessions" in again.out, again.out
    assert hippo("dream", "--dry-run", cwd=root).code == 0
    assert ": done, 2 sessions, 7 prompts built" in report.read_text()
    assert sorted(os.listdir(root / ".hippo")) == [
        "cache",
        "packs",
        "packs.lock",
        "reports",
        "sessions",
        "settings.toml",
    ]


def test_the_example_ships_the_core_pack_as_hippo_init_writes_it():
    from hippo_core.packs.listing import list_packs
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.workspace.folder import Workspace

    source = load_plugins().packs()["core"].directory
    shipped = EXAMPLE / ".hippo" / "packs" / "core"
    names = sorted(
        p.relative_to(source) for p in source.rglob("*.*") if "__pycache__" not in p.parts
    )
    assert names == sorted(p.relative_to(shipped) for p in shipped.rglob("*.*"))
    assert all(filecmp.cmp(source / name, shipped / name, shallow=False) for name in names)
    # ... and its lock entry says so, so that `hippo pack list` shows it unedited.
    assert list_packs(Workspace.open(EXAMPLE), load_plugins())[0][0].edited == []
