"""tests/requires.py, run by a real pytest on a small test file whose program is missing:
under CI the run fails and says why; elsewhere the test skips and says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NEEDS = """
import shutil

import pytest

from tests.requires import missing

GONE = "hippo-test-a-program-nobody-has"


@pytest.fixture
def program():
    if shutil.which(GONE) is None:
        missing("no frobnicator: .ci/frobnicator.sh installs it")


def test_through_a_fixture(program):
    pass


def test_in_its_body():
    if shutil.which(GONE) is None:
        missing("no frobnicator here either")
"""


def line_of(text: str) -> int:
    [number] = [n for n, line in enumerate(NEEDS.splitlines(), 1) if text in line]
    return number


def run_pytest(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # this folder's pytest, not hippo's
    (tmp_path / "test_needs.py").write_text(NEEDS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-ra", "test_needs.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_a_missing_program_fails_the_run_with_the_reason(tmp_path: Path, ci: str) -> None:
    done = run_pytest(tmp_path, ci)
    assert done.returncode == 1, done.stdout + done.stderr
    why = f"(CI={ci}: a missing dependency fails, not skips)"
    summary = done.stdout.split(" short test summary info ", 1)[1].splitlines()[1:3]
    assert summary == [
        "ERROR test_needs.py::test_through_a_fixture - Failed: no frobnicator: "
        f".ci/frobnicator.sh installs it {why}",
        f"FAILED test_needs.py::test_in_its_body - Failed: no frobnicator here either {why}",
    ], done.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_elsewhere_a_missing_program_skips_with_the_reason(tmp_path: Path, ci: str | None) -> None:
    done = run_pytest(tmp_path, ci)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.split(" short test summary info ", 1)[1].splitlines()[1:3]
    # A skip is shown at the test that needs the program (the caller of missing(), for one
    # in a test's body), so -ra says where, as pytest.skip there would.
    test, body = (line_of("def test_through_a_fixture"), line_of('missing("no frobnicator here'))
    assert summary == [
        f"SKIPPED [1] test_needs.py:{test}: no frobnicator: .ci/frobnicator.sh installs it",
        f"SKIPPED [1] test_needs.py:{body}: no frobnicator here either",
    ], done.stdout
