"""A watcher keeps the notes index fresh, and the hook then skips its scan, never its truth.

The watcher runs for real (inotify, its socket in $HIPPO_HOME/watch/): in a thread of the
test for the property test, as `hippo notes watch` in a subprocess for the command. What the
block says is checked against a reading of every file from scratch after every change.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from hippo_core.notes import index as notes_index
from hippo_core.notes.watched import socket_path, watched_fresh

from .conftest import HippoRunner, WorkspaceMaker, write_notes
from .test_notes_index import apply, reference_block, served_block, steps
from .watchers import WatcherThread, runtime_folder  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the watcher needs inotify")


class Watching:
    """A watcher of the workspace at ``root`` in a thread, and how often this (the main)
    thread scanned the notes itself."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scans = 0
        walk = notes_index._Survey.walk

        def counted(survey: notes_index._Survey) -> None:
            if threading.current_thread() is threading.main_thread():
                self.scans += 1
            walk(survey)

        monkeypatch.setattr(notes_index._Survey, "walk", counted)
        self.serving = WatcherThread(root, with_terms=False)
        self.watcher = self.serving.watcher

    def stop(self) -> None:
        self.serving.stop()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps)
def test_with_a_watcher_the_block_is_what_the_files_say_and_no_hook_scans(steps) -> None:
    task = "fix the refund queue"
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        root = Path(tmp) / "ws"
        (root / ".hippo").mkdir(parents=True)
        write_notes(root, {"Home.md": "# Home\n\nWelcome.\n"})
        watching = Watching(root, patch)
        try:
            for step in steps:
                apply(root, step, [time.time() - 100_000])
                assert served_block(root, task) == reference_block(root, task), step
            assert watching.scans == 0
        finally:
            watching.stop()
        assert not os.path.exists(watching.watcher.address)  # it took its socket away
        assert served_block(root, task) == reference_block(root, task)  # and hooks scan again
        assert watching.scans == 1


def test_a_change_just_before_the_question_is_never_missed(
    make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same size and second, in place: only the kernel's event tells the change apart.
    root = make_workspace("", {"Home.md": "# Home\n\nWelcome.\n", "a.md": "# Alpha\n\nOne.\n"})
    watching = Watching(root, monkeypatch)
    try:
        for word in ("Gamma", "Delta", "Omega"):
            with (root / "notes" / "a.md").open("r+", encoding="utf-8") as handle:
                handle.write(f"# {word}\n\nOne.\n")
            assert f"- {word}: One." in served_block(root, word.lower())
        assert watching.scans == 0
    finally:
        watching.stop()


def test_no_watcher_a_stale_socket_or_a_stranger_means_the_hook_scans(
    make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    root = make_workspace("", {"Home.md": "# Home\n\nWelcome.\n", "a.md": "# Alpha\n\nOne.\n"})
    index = str(root / ".hippo" / "cache" / "notes.sqlite")
    notes = str(root / "notes")
    assert not watched_fresh(index, notes, False)  # no socket at all
    where = socket_path(index)
    assert where is not None
    os.makedirs(os.path.dirname(where), mode=0o700, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(where)  # bound, never listening: what a watcher that died leaves
    stale.close()
    assert not watched_fresh(index, notes, False)
    os.unlink(where)
    stranger = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stranger.bind(where)
    stranger.listen(1)

    def answer() -> None:
        conn, _ = stranger.accept()
        conn.recv(4096)
        conn.sendall(b"fresh?\n")
        conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    assert not watched_fresh(index, notes, False)
    thread.join(5)
    stranger.close()
    # And a watcher of another notes folder says so: the hook scans.
    os.unlink(where)
    watching = Watching(root, monkeypatch)
    try:
        assert watched_fresh(index, notes, False)
        assert not watched_fresh(index, notes + "-other", False)
    finally:
        watching.stop()


def test_hippo_notes_watch_serves_until_stopped_and_only_once(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    root = make_workspace("", {"Home.md": "# Home\n\nWelcome.\n", "a.md": "# Alpha\n\nOne.\n"})
    command = [sys.executable, "-m", "hippo_core", "notes", "watch"]
    env = dict(os.environ)
    watcher = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert watcher.stdout is not None
        line = watcher.stdout.readline()
        assert (
            line == "watching notes: the hooks and hippo context skip their scan while this runs\n"
        )
        index = str(root / ".hippo" / "cache" / "notes.sqlite")
        deadline = time.time() + 30
        while not watched_fresh(index, str(root / "notes"), False):
            assert time.time() < deadline, "the watcher never answered"
            time.sleep(0.05)
        (root / "notes" / "b.md").write_text("# Beta\n\nTwo.\n")
        assert "- Beta: Two." in hippo("context", "--task", "beta", cwd=root).out
        again = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        assert (again.returncode, again.stdout) == (1, "")
        assert again.stderr == f"error: another watcher already keeps {index} fresh\n"
    finally:
        watcher.terminate()
        _, err = watcher.communicate(timeout=10)
    assert (watcher.returncode, err) == (0, "")
    where = socket_path(str(root / ".hippo" / "cache" / "notes.sqlite"))
    assert where is not None and not os.path.exists(where)


def test_folders_renamed_removed_and_made_again_stay_watched(
    make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace("", {"Home.md": "# Home\n\nWelcome.\n", "a/x.md": "# Alpha\n\nOne.\n"})
    notes = root / "notes"
    watching = Watching(root, monkeypatch)
    try:
        (notes / "a").rename(notes / "b")  # the watch of a/ now hears b/
        (notes / "a").mkdir()
        assert "- Alpha: One." in served_block(root, "alpha")
        (notes / "a" / "y.md").write_text("# Beta\n\nTwo.\n")  # a new a/, watched anew
        assert "- Beta: Two." in served_block(root, "beta")
        for name in ("y.md", "x.md"):
            with (notes / ("a" if name == "y.md" else "b") / name).open("r+") as handle:
                handle.write("# Gamm")  # in place: the folders' times stay
        assert served_block(root, "gamma alpha beta") == reference_block(root, "gamma alpha beta")
        assert watching.scans == 0
    finally:
        watching.stop()
