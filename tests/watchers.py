"""A notes watcher serving in a thread of the test, with a socket folder of the test's own.

Modules that use them import ``runtime_folder`` (an autouse fixture there) and start a
:class:`WatcherThread` per workspace.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hippo_core.context.watch import NotesWatcher


@pytest.fixture(autouse=True)
def runtime_folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A socket folder of the test's own (short, as socket paths must be)."""
    folder = tempfile.mkdtemp(prefix="hippo-run-")
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class WatcherThread:
    """The watcher of the workspace at ``root``'s notes index, serving from a thread once
    its socket listens; :meth:`stop` ends it."""

    def __init__(self, root: Path, *, with_terms: bool) -> None:
        index = str(root / ".hippo" / "cache" / "notes.sqlite")
        self.watcher = NotesWatcher(str(root / "notes"), index, with_terms=with_terms)
        ready = threading.Event()
        self.thread = threading.Thread(target=self.watcher.serve, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(30)

    def stop(self) -> None:
        self.watcher.stop()
        self.thread.join(10)
        assert not self.thread.is_alive()
