"""Files only their owner reads: ``$HIPPO_HOME`` (the index, hooks.log, locks, caches), the
session records and the sleep pack's store are 0700 folders and 0600 files whatever the
umask, and those an earlier hippo left open are tightened when hippo next writes there;
settings, notes and packs, shared through git, follow the umask. The real ``hippo`` runs in
a subprocess under each umask (finding P1).

``atomic_write`` never sets the process umask, which races with every thread creating files
(finding P2).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.claude_factory import ClaudeSession

OWNER_ONLY = (".hippo/sessions", ".hippo/sleep")


def _modes(top: Path) -> dict[str, int]:
    """The permission bits of ``top`` and everything below it, by path relative to it (a
    folder's ending with ``/``)."""
    found = {"./": stat.S_IMODE(top.stat().st_mode)}
    for path in top.rglob("*"):
        name = path.relative_to(top).as_posix() + ("/" if path.is_dir() else "")
        found[name] = stat.S_IMODE(path.lstat().st_mode)
    return found


class Machine:
    """A home, a workspace and a Claude Code transcript; ``run`` is the real ``hippo`` in a
    subprocess under ``umask``."""

    def __init__(self, tmp_path: Path, umask: int) -> None:
        self.umask = umask
        self.home = tmp_path / "home"
        self.hippo_home = self.home / "hippo"
        self.root = tmp_path / "ws"
        self.claude = tmp_path / "claude"
        for folder in (self.root, self.claude):
            folder.mkdir(mode=0o755)
            folder.chmod(0o755)
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "HIPPO_HOME": str(self.hippo_home),
            "CLAUDE_CONFIG_DIR": str(self.claude),
            "HIPPO_LOAD_PLUGINS": "sleep",
        }

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        # -P: not the workspace on sys.path, as `python -m` puts the current folder there. A
        # folder of sys.path changed in the last two seconds (the workspace, as the day's
        # work fills it) keeps the entry points' cache from being written, and the cache is
        # one of the files whose mode is checked; the agents run hippo's script, which puts
        # its own folder there.
        done = subprocess.run(
            [sys.executable, "-P", "-m", "hippo_core", *args],
            cwd=self.root,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            umask=self.umask,
            check=False,
        )
        assert done.returncode == 0 or args[0] == "hook", (args, done.stdout, done.stderr)
        return done

    def a_day_of_work(self) -> None:
        subprocess.run(["git", "init", "-q"], cwd=self.root, check=True, umask=self.umask)
        self.run("init")
        self.run("pack", "add", "sleep")
        session = ClaudeSession(self.claude, str(self.root))
        session.prompt("why does the deploy stall").answer("The queue pauses.").write()
        self.run("ingest")  # the index, its lock, a derived session record
        self.run("session", "start", "--id", "s1", "--task", "fix the deploy")
        self.run("session", "end", "--id", "s1", "--handoff", "The queue is fixed.")
        self.run("hook", "session-start", stdin="not json")  # a problem: hooks.log
        self.run("remember", "deploys pause on Saturdays", "--topic", "deploy")
        self.run("brief", "--summary", "the deploy queue")
        self.run("nudge")  # state, events
        self.run("search", "--local", "deploy")
        self.run("dream", "--dry-run")  # the dream's lock in $HIPPO_HOME/locks/


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_what_hippo_keeps_of_turns_and_agents_is_owner_only_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    machine = Machine(tmp_path, umask)
    machine.a_day_of_work()

    home = _modes(machine.hippo_home)
    for name in ("index.sqlite", "hooks.log", "ingest.lock"):
        assert name in home, sorted(home)
    assert any(name.startswith("locks/dream-") for name in home)
    assert any(name.startswith("cache/entry-points-") for name in home)
    assert "./" in home and "locks/" in home
    stores = {
        f"{where}/{name}": mode
        for where in OWNER_ONLY
        for name, mode in _modes(machine.root / where).items()
    }
    assert {".hippo/sessions/s1.json", ".hippo/sessions/.lock"} <= set(stores)
    assert any(name.startswith(".hippo/sleep/fragments/f") for name in stores)
    assert {".hippo/sleep/events.jsonl", ".hippo/sleep/state.json"} <= set(stores)
    for name, mode in {**home, **stores}.items():
        assert mode == (0o700 if name.endswith("/") else 0o600), (name, oct(mode))

    # What is shared through git follows the umask; folders hippo did not make are left be.
    shared = 0o666 & ~umask
    assert stat.S_IMODE((machine.root / ".hippo/settings.toml").stat().st_mode) == shared
    assert stat.S_IMODE((machine.root / "notes/Home.md").stat().st_mode) == shared
    assert stat.S_IMODE((machine.root / ".hippo/packs/sleep/pack.toml").stat().st_mode) == shared
    assert stat.S_IMODE((machine.root / ".hippo/packs").stat().st_mode) == 0o777 & ~umask
    assert stat.S_IMODE(machine.root.stat().st_mode) == 0o755
    assert stat.S_IMODE(machine.claude.stat().st_mode) == 0o755


def test_sqlite_makes_the_index_s_wal_and_shm_with_the_index_s_mode(tmp_path: Path) -> None:
    """The -wal and -shm files exist only while a connection is open: look at them then."""
    import sqlite3

    machine = Machine(tmp_path, 0o022)
    session = ClaudeSession(machine.claude, str(machine.root))
    session.prompt("a prompt").answer("an answer").write()
    (machine.root / ".hippo").mkdir()
    machine.run("ingest")
    index = machine.hippo_home / "index.sqlite"
    conn = sqlite3.connect(index)
    try:
        conn.execute("SELECT count(*) FROM turns").fetchone()
        made = sorted(p.name for p in machine.hippo_home.glob("index.sqlite*"))
        assert made == ["index.sqlite", "index.sqlite-shm", "index.sqlite-wal"]
        for path in machine.hippo_home.glob("index.sqlite*"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        conn.close()


def test_what_an_earlier_hippo_left_readable_is_tightened_at_the_next_write(
    tmp_path: Path,
) -> None:
    machine = Machine(tmp_path, 0o022)
    machine.a_day_of_work()
    # As an earlier hippo left them under umask 022.
    for top in (machine.hippo_home, *(machine.root / where for where in OWNER_ONLY)):
        for path in (top, *top.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
    fragment = next((machine.root / ".hippo/sleep/fragments").iterdir())

    session = ClaudeSession(machine.claude, str(machine.root))
    session.prompt("one more prompt").answer("one more answer").write()
    machine.run("ingest")
    machine.run("session", "start", "--id", "s2", "--task", "another session")
    machine.run("hook", "session-start", stdin="not json")
    machine.run("remember", "a second fragment")
    machine.run("nudge")

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    for folder in (machine.hippo_home, *(machine.root / where for where in OWNER_ONLY)):
        assert mode(folder) == 0o700, folder
    assert mode(machine.root / ".hippo/sleep/fragments") == 0o700
    for written in ("index.sqlite", "hooks.log", "ingest.lock"):
        assert mode(machine.hippo_home / written) == 0o600, written
    assert mode(machine.root / ".hippo/sessions/s2.json") == 0o600
    assert mode(machine.root / ".hippo/sleep/events.jsonl") == 0o600
    # A file hippo did not write again keeps its bits, in a folder only its owner enters.
    assert mode(fragment) == 0o644
    # What is shared is never changed.
    assert mode(machine.root / ".hippo") == 0o755
    assert mode(machine.root / ".hippo/settings.toml") == 0o644


RACE = """
import os, sys, threading, time
from hippo_core.files.atomic import atomic_write

folder = sys.argv[1]
stop = threading.Event()

def writer():
    n = 0
    while not stop.is_set():
        path = os.path.join(folder, "written", str(n))
        atomic_write(path, b"x", durable=False)  # a new file each time
        os.unlink(path)
        n += 1

os.makedirs(os.path.join(folder, "made"))
thread = threading.Thread(target=writer)
thread.start()
loose, made, deadline = 0, 0, time.monotonic() + 3
while time.monotonic() < deadline and made < 30000 and not loose:
    path = os.path.join(folder, "made", str(made % 100))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    loose += os.fstat(fd).st_mode & 0o777 != 0o600
    os.close(fd)
    os.unlink(path)
    made += 1
stop.set()
thread.join()
print(loose, made)
"""


def test_atomic_write_never_opens_the_umask_to_another_thread(tmp_path: Path) -> None:
    """Under umask 077 a thread's file is 0600 while another loops ``atomic_write`` on new
    files: setting the umask to 0 for a moment, as it did, let one come out 0666."""
    done = subprocess.run(
        [sys.executable, "-c", RACE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        umask=0o077,
        check=True,
    )
    loose, made = map(int, done.stdout.split())
    assert (loose, made > 1000) == (0, True), done.stdout


def test_no_module_of_hippo_reads_or_sets_the_umask() -> None:
    """Reading the umask means setting it (``os.umask``): the race above, wherever it is
    (``packs/scaffold.py`` had it too)."""
    import ast

    import hippo_core
    import hippo_packs

    calls = []
    for package in (hippo_core, hippo_packs):
        for path in Path(package.__file__).parent.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr == "umask":
                    calls.append(f"{path.name}:{node.lineno}")
    assert calls == []


MODES = """
import os, sys
from hippo_core.files.atomic import atomic_write

folder = sys.argv[1]
atomic_write(f"{folder}/new", "x")
atomic_write(f"{folder}/private", "x", mode=0o600)
with open(f"{folder}/kept", "w"):
    pass
os.chmod(f"{folder}/kept", 0o640)
atomic_write(f"{folder}/kept", "y")
atomic_write(f"{folder}/tightened", "x")
atomic_write(f"{folder}/tightened", "y", mode=0o600)
"""


def test_atomic_write_modes(tmp_path: Path) -> None:
    """A new file follows the umask, an existing one keeps its bits, ``mode`` is exact."""
    folder = tmp_path / "files"
    folder.mkdir()
    subprocess.run([sys.executable, "-c", MODES, str(folder)], umask=0o022, check=True)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes == {"new": 0o644, "private": 0o600, "kept": 0o640, "tightened": 0o600}


def test_owner_only_helpers_leave_folders_above_their_top_alone(tmp_path: Path) -> None:
    from hippo_core import owner_only_append, owner_only_write

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    owner_only_write(shared / "store" / "deep" / "record.json", "{}", top=shared / "store")
    owner_only_append(shared / "store" / "log.jsonl", b"{}\n", top=shared / "store")
    owner_only_append(shared / "store" / "log.jsonl", b"{}\n", top=shared / "store")
    assert _modes(shared) == {
        "./": 0o755,
        "store/": 0o700,
        "store/deep/": 0o700,
        "store/deep/record.json": 0o600,
        "store/log.jsonl": 0o600,
    }
    assert (shared / "store" / "log.jsonl").read_bytes() == b"{}\n{}\n"


class _Spy:
    """What ``atomic_write`` asks of the system: each ``os.open`` of a temporary file with
    its mode and the file's mode as created, each ``os.replace``, each ``os.fsync``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[tuple[str, int, int]] = []
        self.replaced: list[tuple[str, str]] = []
        self.fsyncs = 0
        real_open, real_replace, real_fsync = os.open, os.replace, os.fsync

        def spy_open(path, flags, mode=0o777, **kw):  # type: ignore[no-untyped-def]
            fd = real_open(path, flags, mode, **kw)
            if str(path).endswith(".tmp"):
                self.opened.append((str(path), mode, stat.S_IMODE(os.fstat(fd).st_mode)))
            return fd

        def spy_replace(source, target):  # type: ignore[no-untyped-def]
            self.replaced.append((os.fspath(source), os.fspath(target)))
            real_replace(source, target)

        def spy_fsync(fd):  # type: ignore[no-untyped-def]
            self.fsyncs += 1
            real_fsync(fd)

        monkeypatch.setattr(os, "open", spy_open)
        monkeypatch.setattr(os, "replace", spy_replace)
        monkeypatch.setattr(os, "fsync", spy_fsync)


def test_a_private_write_is_private_from_its_first_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary file of a write with a ``mode`` (transcripts, tokens) or over an existing
    file is created 0o600: the mode is set before the rename, and until then nobody else
    may read it. Only a new file with no mode is created 0o666, for the umask to narrow."""
    from hippo_core.files.atomic import atomic_write

    spy = _Spy(monkeypatch)
    atomic_write(tmp_path / "private", "secret", mode=0o600)
    atomic_write(tmp_path / "shared", "x", mode=0o644)
    atomic_write(tmp_path / "shared", "y")
    atomic_write(tmp_path / "new", "z")
    assert [mode for _, mode, _ in spy.opened] == [0o600, 0o600, 0o600, 0o666]
    assert all(created & 0o077 == 0 for _, _, created in spy.opened[:3])


def test_a_mode_is_the_file_s_mode_whatever_it_was(tmp_path: Path) -> None:
    """``mode`` other than 0o600 is set exactly, on a new file and over one with other bits;
    without one, an existing file keeps its bits."""
    from hippo_core.files.atomic import atomic_write

    folder = tmp_path / "files"
    atomic_write(folder / "a", "x", mode=0o640)
    (folder / "b").write_text("old")
    (folder / "b").chmod(0o600)
    atomic_write(folder / "b", "x", mode=0o644)
    atomic_write(folder / "b", "y")
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes == {"a": 0o640, "b": 0o644}


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hippo_core.files.atomic import atomic_write

    (tmp_path / "notes").mkdir()
    note = tmp_path / "notes" / "Note.md"
    note.write_text("old")

    def refuse(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        atomic_write(note, "new")
    assert [p.name for p in note.parent.iterdir()] == ["Note.md"]
    assert note.read_text() == "old"


def test_the_temporary_is_beside_its_file_and_named_as_leftovers_knows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside the target, whatever the current folder (a rename across filesystems fails),
    and named as ``hippo doctor`` and the next run find a killed write's temporary."""
    from hippo_core.files.atomic import atomic_write
    from hippo_core.files.leftovers import _TEMPORARY

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    spy = _Spy(monkeypatch)
    atomic_write(tmp_path / "notes" / "Deploy.md", "x")
    [(source, target)] = spy.replaced
    assert os.path.dirname(source) == os.path.dirname(target) == str(tmp_path / "notes")
    assert _TEMPORARY.fullmatch(os.path.basename(source))
    assert os.path.basename(source).startswith(".Deploy.md.")
    assert list(elsewhere.iterdir()) == []


def test_a_durable_write_syncs_the_file_and_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hippo_core.files.atomic import atomic_write

    spy = _Spy(monkeypatch)
    atomic_write(tmp_path / "a", "x")
    assert spy.fsyncs == 2
    atomic_write(tmp_path / "b", "x", durable=False)
    assert spy.fsyncs == 2
