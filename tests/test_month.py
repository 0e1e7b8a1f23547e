"""A short month of a team (bench/month.py, issue 35): three days of work, ten away, two
back, two sessions a member a day, on a real PostgreSQL team index, with this venv's hippo.

Carol's third-evening session reaches the server only on the first day back, after alice's
catch-up dream; alice's fragments are ten days old when the team comes back. The bench
itself says what failed: it exits 1 when a confirmed change is dropped, a handoff reaches
no dream, a fragment is aged out by the days away, or a hippo command fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.postgres import binaries
from tests.requires import missing

BENCH = Path(__file__).resolve().parent.parent / "bench" / "month.py"


@pytest.mark.slow
def test_a_short_month_loses_nothing(tmp_path: Path) -> None:
    if binaries() is None:
        missing("no PostgreSQL: .ci/postgres.sh installs Debian's and sets HIPPO_TEST_PG_BIN")
    hippo = Path(sys.executable).parent / "hippo"
    argv = [sys.executable, str(BENCH), "--days", "3", "--away", "10", "--sessions", "2"]
    done = subprocess.run(
        [*argv, "--hippo", str(hippo), "--root", str(tmp_path / "month")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr[-3000:]
    assert out.rstrip().endswith("every invariant held"), out
    figures = {line[:44].strip(): line[44:].split()[0] for line in out.splitlines() if line[44:]}
    assert figures["...of them dropped (never landed later)"] == "0"
    assert figures["...read by no dream"] == "0"
    assert figures["fragments aged out by the month away"] == "0"
    assert int(figures["sessions with a handoff"]) > 0
    # Five nights: three worked, two back (the first with the catch-up).
    rows = [line.split() for line in out.splitlines()]
    nights = [row[0] for row in rows if len(row) == 14 and row[0].isdigit()]
    assert nights == ["1", "2", "3", "14", "15"]
