"""``hippo schedule``: the workspace's lines in the crontab, through a stand-in ``crontab``
program on PATH (the real one, and the real table, are never touched), and every line run
by a real shell to show its quoting holds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker

CRONTAB = """#!/bin/sh
# A stand-in for crontab(1): -l prints the table, - replaces it from stdin.
table="$FAKE_CRONTAB"
case "$1" in
  -l) [ -f "$table" ] || { echo "no crontab for $(id -un)" >&2; exit 1; }; cat "$table" ;;
  -) cat > "$table" ;;
  *) echo "usage: crontab -l | crontab -" >&2; exit 2 ;;
esac
"""


@pytest.fixture
def crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "crontab"
    program.write_text(CRONTAB)
    program.chmod(0o755)
    table = tmp_path / "crontab.txt"
    monkeypatch.setenv("FAKE_CRONTAB", str(table))
    hippo_bin = Path(sys.executable).parent  # where the hippo program is
    monkeypatch.setenv("PATH", f"{folder}:{hippo_bin}:/usr/bin:/bin")
    return table


def test_install_show_uninstall_one_block_per_workspace(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, crontab: Path, tmp_path: Path
) -> None:
    crontab.write_text("MAILTO=me\n0 1 * * * backup\n")
    ws = make_workspace()
    run = hippo("schedule", "install", "--dream-every", "6h", cwd=ws)
    assert run.code == 0 and run.out.startswith("installed in the crontab:")
    again = hippo("schedule", "install", "--dream-every", "6h", cwd=ws)
    assert again.out.startswith("already installed")
    table = crontab.read_text().splitlines()
    assert table[:2] == ["MAILTO=me", "0 1 * * * backup"]  # what was there stays
    [line] = [row for row in table[2:] if not row.startswith("#")]  # the one job
    assert line.startswith("0 */6 * * * ")
    other = make_workspace()
    hippo("schedule", "install", "--dream-at", "02:30", "--sleep-tick", cwd=other)
    shown = hippo("schedule", "show", cwd=other).out.splitlines()
    assert shown[0].startswith("30 2 * * * ") and shown[1].startswith("*/5 * * * * ")
    assert hippo("schedule", "install", "--dream-at", "04:00", cwd=ws).code == 0  # replaced
    assert [t for t in crontab.read_text().splitlines() if t.startswith("0 4 * * *")]
    assert not [t for t in crontab.read_text().splitlines() if t.startswith("0 */6")]
    assert hippo("schedule", "uninstall", cwd=ws).out == "removed 1 line(s) from the crontab\n"
    nothing = hippo("schedule", "uninstall", cwd=ws)
    assert nothing.code == 0 and "nothing to remove" in nothing.out
    remaining = crontab.read_text()
    assert "MAILTO=me" in remaining and str(other) in remaining and f" {ws}\n" not in remaining


def test_a_path_with_spaces_and_quotes_runs_as_written(
    hippo: HippoRunner, crontab: Path, tmp_path: Path
) -> None:
    """The line, run by sh as cron runs it (fields cut off), reaches hippo in the folder."""
    root = tmp_path / 'it\'s a "shop" $HOME'
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text("")
    (root / "notes").mkdir()
    (root / "notes" / "Home.md").write_text("# Home\n\nHi.\n")
    assert hippo("schedule", "install", cwd=root).code == 0
    [line] = hippo("schedule", "show", cwd=root).out.splitlines()
    assert line.startswith("0 3 * * * ")
    command = line.split(" ", 5)[5].replace(" dream ", " doctor ", 1)
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    log = (root / ".hippo" / "reports" / "schedule.log").read_text()
    assert done.returncode in (0, 1) and "notes" in log, (done.stderr, log)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--dream-at", "25:00"), "--dream-at '25:00': give a local time as HH:MM"),
        (("--dream-every", "0s"), "--dream-every '0s': give a span such as 30m, 6h or 1d"),
        (("--dream-every", "0m"), "(not 0)"),
        (("--dream-every", "7h"), "cron can run every few minutes dividing an hour"),
        (("--dream-every", "1h", "--dream-at", "01:00"), "not both"),
    ],
)
def test_bad_spans_are_usage_errors_and_write_nothing(
    hippo: HippoRunner,
    make_workspace: WorkspaceMaker,
    crontab: Path,
    args: tuple[str, ...],
    said: str,
) -> None:
    run = hippo("schedule", "install", *args, cwd=make_workspace())
    assert run.code == 2 and said in run.err and not crontab.exists()


def test_without_crontab_it_says_what_to_do(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    run = hippo("schedule", "install", cwd=make_workspace())
    assert run.code == 1 and "needs the crontab program, which is not on PATH" in run.err
    nothing = hippo("schedule", "uninstall", cwd=make_workspace())
    assert nothing.code == 0 and "nothing to remove" in nothing.out


def test_doctor_says_when_a_configured_model_has_no_schedule(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, crontab: Path
) -> None:
    ws = make_workspace('model_command = ["sh", "-c", "cat"]\n')
    assert (
        "info: schedule: a model is configured but nothing runs hippo dream"
        in hippo("doctor", cwd=ws).out
    )
    hippo("schedule", "install", cwd=ws)
    assert (
        "info: schedule: dreaming runs from the crontab: 0 3 * * * " in hippo("doctor", cwd=ws).out
    )
