"""``hippo schedule``: the workspace's jobs in the crontab, in launchd agents and in systemd
user timers, through stand-in ``crontab``, ``launchctl`` and ``systemctl`` programs on PATH
and a temporary home (the real programs, tables and folders are never touched). The files
are read back the way their scheduler reads them: crontab lines run by a real shell, plists
by :mod:`plistlib`, units by ``systemd-analyze verify`` (without it that test skips, and
fails under CI: tests/requires.py)."""

from __future__ import annotations

import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.plugin_site import make_distribution, run_hippo
from tests.requires import missing

CRONTAB = """#!/bin/sh
# A stand-in for crontab(1): -l prints the table, - replaces it from stdin.
table="$FAKE_CRONTAB"
case "$1" in
  -l) [ -f "$table" ] || { echo "no crontab for $(id -un)" >&2; exit 1; }; cat "$table" ;;
  -) cat > "$table" ;;
  *) echo "usage: crontab -l | crontab -" >&2; exit 2 ;;
esac
"""

LAUNCHCTL = """#!/bin/sh
# A stand-in for launchctl: loaded labels are files in $FAKE_LAUNCHD.
echo "$*" >> "$FAKE_LAUNCHD/calls"
case "$1" in
  print) [ -f "$FAKE_LAUNCHD/${2##*/}" ] ;;
  bootstrap) plutil=$(basename "$3" .plist); [ -f "$3" ] && touch "$FAKE_LAUNCHD/$plutil" ;;
  bootout) [ -f "$FAKE_LAUNCHD/${2##*/}" ] && rm "$FAKE_LAUNCHD/${2##*/}" ;;
  *) exit 64 ;;
esac
"""

SYSTEMCTL = """#!/bin/sh
# A stand-in for systemctl --user: enabled timers are files in $FAKE_SYSTEMD.
echo "$*" >> "$FAKE_SYSTEMD/calls"
[ "$1" = --user ] || exit 64
shift
case "$1" in
  show-environment) [ -z "$FAKE_NO_MANAGER" ] ;;
  daemon-reload) ;;
  enable) shift 2; for t in "$@"; do touch "$FAKE_SYSTEMD/$t"; done ;;
  disable) shift 2; for t in "$@"; do rm -f "$FAKE_SYSTEMD/$t"; done ;;
  *) exit 64 ;;
esac
"""

ODD = 'it\'s a "shop" $HOME 100%'


def _program(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text)
    (folder / name).chmod(0o755)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of programs on PATH (with hippo and a few tools, and no scheduler); the home
    is the test's own (conftest's ``isolated_home``)."""
    programs = tmp_path / "bin"
    programs.mkdir()
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    hippo_bin = Path(sys.executable).parent  # where the hippo program is
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("sh", "cat", "basename", "touch", "rm", "id", "mkdir"):
        found = shutil.which(tool)
        assert found, tool
        (tools / tool).symlink_to(found)
    monkeypatch.setenv("PATH", f"{programs}:{hippo_bin}:{tools}")
    return programs


@pytest.fixture
def crontab(machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _program(machine, "crontab", CRONTAB)
    table = tmp_path / "crontab.txt"
    monkeypatch.setenv("FAKE_CRONTAB", str(table))
    return table


@pytest.fixture
def launchd(machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _program(machine, "launchctl", LAUNCHCTL)
    state = tmp_path / "launchd"
    state.mkdir()
    monkeypatch.setenv("FAKE_LAUNCHD", str(state))
    return state


@pytest.fixture
def systemd(machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _program(machine, "systemctl", SYSTEMCTL)
    state = tmp_path / "systemd"
    state.mkdir()
    monkeypatch.setenv("FAKE_SYSTEMD", str(state))
    analyze = shutil.which("systemd-analyze", path="/usr/bin:/bin")
    if analyze:  # the real one checks what is written
        (machine / "systemd-analyze").symlink_to(analyze)
    return state


def _odd_workspace(tmp_path: Path) -> Path:
    root = tmp_path / ODD
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text("")
    (root / "notes").mkdir()
    (root / "notes" / "Home.md").write_text("# Home\n\nHi.\n")
    return root


def with_sleep(hippo: HippoRunner, root: Path) -> Path:
    """``root`` with the sleep pack, which ``--sleep-tick`` needs."""
    assert hippo("pack", "add", "sleep", cwd=root).code == 0
    return root


def test_sleep_tick_without_the_sleep_pack_is_refused_and_nothing_installed(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, crontab: Path
) -> None:
    """The job would fail every five minutes: say so at install (newcomer defect 5)."""
    crontab.write_text("MAILTO=me\n")
    root = make_workspace()
    run = hippo("schedule", "install", "--cron", "--dream-at", "03:30", "--sleep-tick", cwd=root)
    assert (run.code, run.out) == (1, "")
    assert run.err == (
        "error: --sleep-tick runs `hippo sleep tick`, which needs the sleep pack in this "
        "workspace (.hippo/packs/sleep/); add it first with `hippo pack add sleep`\n"
    )
    assert crontab.read_text() == "MAILTO=me\n"
    assert hippo("schedule", "install", "--cron", "--dream-at", "03:30", cwd=root).code == 0


def test_cron_one_block_per_workspace(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, crontab: Path
) -> None:
    crontab.write_text("MAILTO=me\n0 1 * * * backup\n")
    ws = make_workspace()
    run = hippo("schedule", "install", "--cron", "--dream-every", "6h", cwd=ws)
    assert run.code == 0 and run.out.startswith("installed with cron:\n  cron: 0 */6 * * * ")
    again = hippo("schedule", "install", "--cron", "--dream-every", "6h", cwd=ws)
    assert again.out.startswith("already installed with cron:")
    table = crontab.read_text().splitlines()
    assert table[:2] == ["MAILTO=me", "0 1 * * * backup"]  # what was there stays
    [line] = [row for row in table[2:] if not row.startswith("#")]  # the one job
    assert line.startswith("0 */6 * * * ")
    other = with_sleep(hippo, make_workspace())
    hippo("schedule", "install", "--dream-at", "02:30", "--sleep-tick", cwd=other)
    shown = hippo("schedule", "show", cwd=other).out.splitlines()
    assert shown[0].startswith("cron: 30 2 * * * ") and shown[1].startswith("cron: */5 * * * * ")
    assert hippo("schedule", "install", "--dream-at", "04:00", cwd=ws).code == 0  # replaced
    assert [t for t in crontab.read_text().splitlines() if t.startswith("0 4 * * *")]
    assert not [t for t in crontab.read_text().splitlines() if t.startswith("0 */6")]
    assert hippo("schedule", "uninstall", cwd=ws).out == "removed from cron: hippo dream\n"
    nothing = hippo("schedule", "uninstall", cwd=ws)
    assert nothing.code == 0 and "nothing to remove" in nothing.out
    remaining = crontab.read_text()
    assert "MAILTO=me" in remaining and str(other) in remaining and f" {ws}\n" not in remaining


def test_a_cron_line_runs_as_written_from_an_odd_path(
    hippo: HippoRunner, crontab: Path, tmp_path: Path
) -> None:
    """The line, run by sh as cron runs it (fields cut off), reaches hippo in the folder."""
    root = _odd_workspace(tmp_path)
    assert hippo("schedule", "install", cwd=root).code == 0
    [line] = hippo("schedule", "show", cwd=root).out.splitlines()
    assert line.startswith("cron: 0 3 * * * ")
    command = line.split(" ", 6)[6].replace(" dream ", " doctor ", 1).replace("\\%", "%")
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    log = (root / ".hippo" / "reports" / "schedule.log").read_text()
    # Doctor's first finding is about this folder's own note, and all it said went to the log.
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), log
    lines = log.splitlines()
    assert lines[0] == "notes/Home.md:1: warning: missing frontmatter", log
    assert lines[-1] == "0 errors, 1 warning", log


def test_launchd_agents_read_back_as_meant(
    hippo: HippoRunner, launchd: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "hippo home"))
    root = with_sleep(hippo, _odd_workspace(tmp_path))
    run = hippo("schedule", "install", "--launchd", "--dream-at", "02:30", "--sleep-tick", cwd=root)
    assert run.code == 0 and run.out.startswith("installed with launchd:\n"), run.err
    agents = sorted((tmp_path / "home" / "Library" / "LaunchAgents").glob("*.plist"))
    assert [p.name.rsplit(".", 2)[1] for p in agents] == ["dream", "sleep-tick"]
    dream = plistlib.loads(agents[0].read_bytes())
    assert dream["ProgramArguments"][1:] == ["dream"]
    assert Path(dream["ProgramArguments"][0]).is_file()
    assert dream["WorkingDirectory"] == str(root)
    assert dream["StartCalendarInterval"] == {"Hour": 2, "Minute": 30}
    assert dream["EnvironmentVariables"]["HIPPO_HOME"] == str(tmp_path / "hippo home")
    assert dream["StandardOutPath"] == str(root / ".hippo" / "reports" / "schedule.log")
    tick = plistlib.loads(agents[1].read_bytes())
    assert tick["ProgramArguments"][1:] == ["sleep", "tick"] and tick["StartInterval"] == 300
    assert sorted(p.name for p in launchd.iterdir() if p.name != "calls") == [
        p.stem for p in agents
    ]  # both loaded
    again = hippo(
        "schedule", "install", "--launchd", "--dream-at", "02:30", "--sleep-tick", cwd=root
    )
    assert again.out.startswith("already installed with launchd:")
    assert (
        "launchd: hippo dream, StartCalendarInterval 02:30: "
        in hippo("schedule", "show", cwd=root).out
    )
    hippo("schedule", "install", "--launchd", "--dream-every", "30m", cwd=root)  # tick dropped
    [agent] = (tmp_path / "home" / "Library" / "LaunchAgents").glob("*.plist")
    assert plistlib.loads(agent.read_bytes())["StartInterval"] == 1800
    assert "bootout gui/" in (launchd / "calls").read_text()
    gone = hippo("schedule", "uninstall", cwd=root)
    assert gone.out == "removed from launchd: hippo dream\n"
    assert not list(agent.parent.glob("*.plist"))
    assert [p.name for p in launchd.iterdir()] == ["calls"]  # nothing left loaded


def _words(line: str) -> list[str]:
    """A unit file's command line, read as systemd reads it: quoted words, $$ and %% halved."""
    return [word.replace("$$", "$").replace("%%", "%") for word in shlex.split(line)]


def test_systemd_units_are_persistent_and_read_back_as_meant(
    hippo: HippoRunner, systemd: Path, tmp_path: Path
) -> None:
    root = with_sleep(hippo, _odd_workspace(tmp_path))
    run = hippo("schedule", "install", "--systemd", "--dream-every", "6h", "--sleep-tick", cwd=root)
    assert run.code == 0 and run.out.startswith("installed with systemd:\n"), run.err
    units = tmp_path / "home" / ".config" / "systemd" / "user"
    names = sorted(p.name for p in units.iterdir())
    assert [n.split("-", 2)[0] for n in names] == ["hippo"] * 4
    [dream_timer] = [units / n for n in names if n.endswith("-dream.timer")]
    timer = dream_timer.read_text()
    assert "OnCalendar=*-*-* 00/6:00:00\nPersistent=true\n" in timer
    service = dream_timer.with_suffix(".service").read_text().splitlines()
    [exec_start] = [line for line in service if line.startswith("ExecStart=")]
    program, *args = _words(exec_start.removeprefix("ExecStart="))
    assert Path(program).is_file() and args == ["dream"]
    [directory] = [line for line in service if line.startswith("WorkingDirectory=")]
    assert directory.removeprefix("WorkingDirectory=").replace("%%", "%") == str(root)
    [env] = [line for line in service if line.startswith("Environment=")]
    assert _words(env.removeprefix("Environment="))[0].startswith("PATH=")
    enabled = sorted(p.name for p in systemd.iterdir() if p.name != "calls")
    assert enabled == [n for n in names if n.endswith(".timer")]
    again = hippo(
        "schedule", "install", "--systemd", "--dream-every", "6h", "--sleep-tick", cwd=root
    )
    assert again.out.startswith("already installed with systemd:")
    shown = hippo("schedule", "show", cwd=root).out
    assert "systemd: hippo dream, OnCalendar=*-*-* 00/6:00:00: " in shown
    assert "systemd: hippo sleep tick, OnCalendar=*-*-* *:00/5:00: " in shown
    gone = hippo("schedule", "uninstall", cwd=root)
    assert gone.out == "removed from systemd: hippo dream\nremoved from systemd: hippo sleep tick\n"
    assert not list(units.iterdir()) and [p.name for p in systemd.iterdir()] == ["calls"]


def test_systemd_analyze_verifies_the_units_as_written(
    hippo: HippoRunner, systemd: Path, tmp_path: Path
) -> None:
    """systemd's own parser on the units of a folder whose name has quotes, $ and %: an
    escape wrong there is a unit systemd refuses, which reading them back in Python misses."""
    if shutil.which("systemd-analyze", path="/usr/bin:/bin") is None:
        missing("no systemd-analyze: .ci/systemd.sh installs Debian's systemd package")
    root = with_sleep(hippo, _odd_workspace(tmp_path))
    run = hippo("schedule", "install", "--systemd", "--dream-every", "6h", "--sleep-tick", cwd=root)
    assert run.code == 0, run.err
    units = sorted((tmp_path / "home" / ".config" / "systemd" / "user").iterdir())
    assert len(units) == 4
    done = subprocess.run(
        ["systemd-analyze", "verify", *map(str, units)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stdout


def test_the_platforms_own_scheduler_by_default_and_one_schedule_a_workspace(
    hippo: HippoRunner,
    make_workspace: WorkspaceMaker,
    crontab: Path,
    systemd: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = make_workspace()
    monkeypatch.setenv("FAKE_NO_MANAGER", "1")  # systemctl here, but no user manager
    assert hippo("schedule", "install", cwd=ws).out.startswith("installed with cron:")
    monkeypatch.delenv("FAKE_NO_MANAGER")
    moved = hippo("schedule", "install", cwd=ws)
    assert moved.out.startswith("removed from cron: hippo dream\ninstalled with systemd:")
    assert str(ws) not in crontab.read_text()
    shown = hippo("schedule", "show", cwd=ws).out.splitlines()
    assert len(shown) == 1 and shown[0].startswith("systemd: hippo dream, ")


def test_macos_default_is_launchd(
    launchd: Path, crontab: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hippo_core import schedule

    monkeypatch.setattr(sys, "platform", "darwin")
    assert schedule.default().name == "launchd"
    monkeypatch.setattr(sys, "platform", "linux")
    assert schedule.default().name == "cron"


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("--launchd", "launchd is macOS's scheduler and this machine has no launchctl: use --cron"),
        ("--systemd", "systemd's systemctl is not on PATH: use --cron"),
    ],
)
def test_a_scheduler_this_machine_lacks_names_the_alternatives(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, crontab: Path, flag: str, said: str
) -> None:
    ws = make_workspace()
    run = hippo("schedule", "install", flag, cwd=ws)
    assert run.code == 1 and said in run.err and not crontab.exists()


def test_without_any_scheduler_it_says_what_to_do(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, machine: Path
) -> None:
    run = hippo("schedule", "install", cwd=make_workspace())
    assert run.code == 1
    assert run.err == (
        "error: the crontab program is not on PATH (cron is not installed), and neither "
        "launchd nor systemd can run here: install cron\n"
    )
    nothing = hippo("schedule", "uninstall", cwd=make_workspace())
    assert nothing.code == 0 and "nothing to remove" in nothing.out
    assert "no schedule for this workspace" in hippo("schedule", "show", cwd=make_workspace()).out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--dream-at", "25:00"), "--dream-at '25:00': give a local time as HH:MM"),
        (("--dream-every", "0s"), "--dream-every '0s': give a span such as 30m, 6h or 1d"),
        (("--dream-every", "0m"), "(not 0)"),
        (("--dream-every", "7h"), "a schedule runs every few minutes dividing an hour"),
        (("--dream-every", "1h", "--dream-at", "01:00"), "not both"),
        (("--cron", "--systemd"), "give one scheduler, not --systemd and --cron"),
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


def test_doctor_says_when_a_configured_model_has_no_schedule(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, crontab: Path
) -> None:
    ws = make_workspace('model_command = ["sh", "-c", "cat"]\n')
    assert (
        "info: schedule: a model is configured but nothing runs hippo dream"
        in hippo("doctor", cwd=ws).out
    )
    hippo("schedule", "install", cwd=ws)
    assert "info: schedule: dreaming runs from cron: 0 3 * * *\n" in hippo("doctor", cwd=ws).out


def test_a_scheduler_program_that_cannot_run_is_one_line(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, machine: Path
) -> None:
    _program(machine, "launchctl", "not a program\x00")
    _program(machine, "systemctl", "not a program\x00")  # probed: no user manager, then
    run = hippo("schedule", "install", "--launchd", cwd=make_workspace())
    assert run.code == 1 and run.err.startswith("error: ") and "cannot run it" in run.err
    assert len(run.err.splitlines()) == 1


BACKUP = """
from hippo_core import hookimpl


@hookimpl
def hippo_register_schedule_jobs(register):
    register("backup", "1h", ("backup", "now"), "Also back the notes up every hour.")
"""
WRONG = """
from hippo_core import hookimpl


@hookimpl
def hippo_register_schedule_jobs(register):
    register("dream", "1h", ("dream",), "A second dream.")
"""


def _site(tmp_path: Path) -> Path:
    """Two third-party plugins, installed: one offers a job, one a job that takes a name
    hippo's own."""
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "hippo_backup", "hippo_backup", BACKUP)
    make_distribution(site, "hippo_wrong", "hippo_wrong", WRONG)
    return site


def _hippo(site: Path, load: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real ``hippo`` in a process of its own, with ``HIPPO_LOAD_PLUGINS=load``."""
    return run_hippo(list(args), cwd, site, load, COLUMNS="100")


def test_jobs_come_from_plugins_and_are_read_back_by_their_words(
    make_workspace: WorkspaceMaker, crontab: Path, systemd: Path, tmp_path: Path
) -> None:
    site, ws = _site(tmp_path), make_workspace()

    def options(load: str) -> list[str]:
        shown = _hippo(site, load, "schedule", "install", "--help", cwd=ws)
        assert shown.returncode == 0, shown.stderr
        return [line.split()[0] for line in shown.stdout.splitlines() if line.startswith("  --")]

    assert "--sleep-tick" not in options("")  # no plugin: no job of one
    assert options("sleep")[-2:] == ["--sleep-tick", "--help"]
    assert options("sleep,hippo_backup")[-3:] == ["--backup", "--sleep-tick", "--help"]

    done = _hippo(site, "hippo_backup", "schedule", "install", "--cron", "--backup", cwd=ws)
    assert done.returncode == 0, done.stderr
    [backup] = [line for line in crontab.read_text().splitlines() if " backup now >> " in line]
    assert backup.startswith("0 * * * * ")
    # Read back by the words of the command it runs, whichever plugin is loaded now.
    shown = _hippo(site, "", "schedule", "show", cwd=ws).stdout.splitlines()
    assert [line.split(": ", 1)[0] for line in shown] == ["cron", "cron"]
    done = _hippo(site, "hippo_backup", "schedule", "install", "--systemd", "--backup", cwd=ws)
    assert done.stdout.splitlines()[:2] == [
        "removed from cron: hippo dream",
        "removed from cron: hippo backup now",
    ], done.stderr
    shown = _hippo(site, "", "schedule", "show", cwd=ws).stdout
    assert "systemd: hippo backup now, OnCalendar=*-*-* 00/1:00:00: " in shown
    gone = _hippo(site, "", "schedule", "uninstall", cwd=ws)
    assert (
        gone.stdout == "removed from systemd: hippo backup now\nremoved from systemd: hippo dream\n"
    )

    wrong = _hippo(site, "hippo_wrong", "schedule", "install", "--help", cwd=ws)
    assert wrong.returncode == 0 and "--dream-every" in wrong.stdout
    assert wrong.stderr == (
        "warning: plugin hippo_wrong (hippo_wrong) registered the schedule job 'dream', which "
        "is left out: a name is lower-case letters, digits and -, and not dream\n"
    )


@pytest.mark.parametrize("flag", ["--launchd", "--cron", "--systemd"])
def test_a_control_character_in_the_path_is_one_line_and_nothing_installed(
    hippo: HippoRunner,
    launchd: Path,
    crontab: Path,
    systemd: Path,
    tmp_path: Path,
    flag: str,
) -> None:
    """Finding SC1: plistlib raised on \\x01 (a traceback); cron and systemd wrote it."""
    root = tmp_path / "ws\x01y"
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text("")
    run = hippo("schedule", "install", flag, cwd=root)
    assert run.code == 1 and run.out == "", run.err
    assert run.err == (
        f"error: {str(root)!r}: a folder whose path has a control character cannot be "
        "scheduled; rename it\n"
    )
    assert not (tmp_path / "home" / "Library" / "LaunchAgents").exists()
    assert not crontab.exists()
    assert not (tmp_path / "home" / ".config" / "systemd").exists()


def test_a_control_character_in_the_environment_a_run_gets_is_one_line(
    hippo: HippoRunner,
    launchd: Path,
    make_workspace: WorkspaceMaker,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "hippo\x1bhome"))
    run = hippo("schedule", "install", "--launchd", cwd=make_workspace())
    assert run.code == 1 and "Traceback" not in run.err
    assert run.err.startswith("error: HIPPO_HOME (") and "has a control character" in run.err
    assert not (tmp_path / "home" / "Library" / "LaunchAgents").exists()
