"""The example workspace the README runs: it stays healthy and shows what hippo does."""

from __future__ import annotations

import shutil
from pathlib import Path

from .conftest import HippoRunner

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "ledger"


def test_the_readme_main_job_on_the_example(tmp_path: Path, hippo: HippoRunner):
    root = tmp_path / "ledger"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("cache"))
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
