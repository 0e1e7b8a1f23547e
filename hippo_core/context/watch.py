"""Keeping the notes index fresh from a process that runs anyway, so the hooks skip their scan.

Without help, every `hippo context` and first prompt stats every note to find what changed
(:mod:`hippo_core.notes.index`): about a millisecond per 400 notes, ten times more at 20,000
notes than at 2,000. A watcher (``hippo notes watch``, and ``hippo mcp`` while an agent
runs it) is told of every change by the kernel (Linux's inotify, as git's fsmonitor is), and
answers the one question a hook has, on a socket of its own
(:func:`~hippo_core.notes.watched.socket_folder`): is the index
as fresh as the files? Before it answers, it reads every event the kernel queued (a change
is queued by the very call that made it, so nothing made before the question is missed) and
refreshes the index if any came, or if another process wrote the index since it last did.
Only then does it say "fresh", and the hook uses the index as it stands.

A hook that ranks by BM25 (``relevance = "bm25"`` or ``"history"``) then asks the watcher
to rank too: the watcher keeps what that reads warm, each task word's notes in memory in
order of their weight (:mod:`hippo_core.notes.postings`) and the transcript index open,
and answers with the notes the hook would have found, in the same order
(:func:`hippo_core.context.relevance.rank` does it on both sides).

The hook asks only when the socket is there, and scans as before when no watcher answers,
answers anything else or takes longer than :data:`ASK_SECONDS`: correct with no watcher,
fast with one. A watcher refreshes with the scan itself, so what it serves is what a scan
serves, byte for byte.
"""

from __future__ import annotations

import contextlib
import os

from hippo_core.notes.watched import ASK_SECONDS, FRESH, RANKED, owned, request, socket_path

#: How long a watcher lets a burst of events settle before it refreshes on its own.
SETTLE_SECONDS = 0.05

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    import sqlite3
    import threading
    from collections.abc import Callable

    from hippo_core.index.history import SessionTerms
    from hippo_core.notes.index import NotesIndex
    from hippo_core.notes.postings import TermNotes
    from hippo_core.workspace.folder import Workspace

# -- the watcher ---------------------------------------------------------------------------


class WatchError(Exception):
    """A watcher that cannot run here; the message says why."""


# inotify's event bits (linux/inotify.h).
_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _OVERFLOW, _IGNORED = 0x400, 0x800, 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_MASK = (
    _MODIFY
    | _ATTRIB
    | _CLOSE_WRITE
    | _MOVED_FROM
    | _MOVED_TO
    | _CREATE
    | _DELETE
    | _DELETE_SELF
    | _MOVE_SELF
    | _ONLYDIR
)


class _Inotify:
    """The kernel's change events for a set of folders (Linux only)."""

    def __init__(self) -> None:
        import ctypes
        import ctypes.util

        if not sys_is_linux():
            raise WatchError("watching the notes needs Linux's inotify")
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            self._add = libc.inotify_add_watch
            init = libc.inotify_init1
        except (OSError, AttributeError) as exc:
            raise WatchError(f"inotify is not available here ({exc})") from None
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._ctypes = ctypes
        self.fd = init(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise WatchError(f"inotify cannot start: {os.strerror(ctypes.get_errno())}")
        self.watched: dict[str, int] = {}  # folder -> its watch
        self._folders: dict[int, str] = {}

    def watch(self, folder: str, *, first: bool = False) -> None:
        """Hear about ``folder``'s entries (the notes folder itself: ``first``, links followed)."""
        flags = _MASK if first else _MASK | _DONT_FOLLOW
        wd = self._add(self.fd, os.fsencode(folder), flags)
        if wd >= 0:
            moved = self._folders.get(wd)  # the same folder under a new name: a rename
            if moved is not None and moved != folder:
                self.watched.pop(moved, None)
            self.watched[folder] = wd
            self._folders[wd] = folder
            return
        error = self._ctypes.get_errno()
        if first or error == 28:  # ENOSPC: fs.inotify.max_user_watches is reached
            raise WatchError(f"cannot watch {folder}: {os.strerror(error)}")

    def drain(self) -> int:
        """Read every queued event; how many (an overflow counts as one, and means a scan)."""
        import struct

        count = 0
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return count
            offset = 0
            while offset + 16 <= len(data):
                wd, mask, _cookie, length = struct.unpack_from("iIII", data, offset)
                offset += 16 + length
                count += 1
                if mask & (_IGNORED | _MOVE_SELF):  # gone or moved: its name needs a new watch
                    folder = self._folders.pop(wd, None)
                    if folder is not None and self.watched.get(folder) == wd:
                        del self.watched[folder]

    def close(self) -> None:
        os.close(self.fd)


def sys_is_linux() -> bool:
    import sys

    return sys.platform.startswith("linux")


class NotesWatcher:
    """Keeps the notes index at ``index_path`` (of ``notes_dir``) fresh and answers hooks.

    :meth:`serve` runs until :meth:`stop` is called (from another thread: a server's) or
    forever (``hippo notes watch``). Raises :class:`WatchError` when it cannot start: not
    Linux, no inotify, or another watcher already answers for this index.
    """

    def __init__(self, notes_dir: str, index_path: str, with_terms: bool) -> None:
        self.notes_dir = notes_dir
        self.index_path = index_path
        self.with_terms = with_terms
        where = socket_path(index_path)
        if where is None:
            raise WatchError(f"the socket path for {index_path} would be too long")
        self.address = where
        self.index: NotesIndex | None = None
        self.version = -1  # the index's data_version after this watcher's last write
        self.pending = False  # events read since the last refresh
        self.refreshes = 0
        self.term_notes: TermNotes | None = None  # of self.index, for ranking
        #: The transcript indexes asked of, open: by path, with the file's device and inode
        #: and the rows read of it.
        self.histories: dict[str, tuple[tuple[int, int], sqlite3.Connection, SessionTerms]] = {}
        self._wake, self._waker = os.pipe()  # written to by stop()
        self._stopped = False

    def stop(self) -> None:
        """Make :meth:`serve` return (it removes its socket on the way)."""
        self._stopped = True
        with contextlib.suppress(OSError):
            os.write(self._waker, b"x")

    def serve(self, ready: threading.Event | None = None) -> None:
        import select

        inotify = _Inotify()
        server: socket.socket | None = None
        try:
            # The first scan, with the folders watched from its end: then the socket, so
            # that no hook waits on it (the first build of a large index takes seconds).
            self._refresh(inotify)
            server = self._listen()
            if ready is not None:
                ready.set()
            while not self._stopped:
                wait = SETTLE_SECONDS if self.pending else None
                readable, _, _ = select.select([inotify.fd, server, self._wake], [], [], wait)
                if inotify.fd in readable:
                    self.pending = inotify.drain() > 0 or self.pending
                    continue  # let the burst settle: refresh when it is quiet
                if server in readable:
                    self._answer(server, inotify)
                elif self.pending:
                    self._refresh(inotify)
        finally:
            if server is not None:
                server.close()
                if os.path.exists(self.address):
                    os.unlink(self.address)
            inotify.close()
            os.close(self._wake)
            os.close(self._waker)
            if self.index is not None:
                self.index.conn.close()
            for _, conn, _ in self.histories.values():
                conn.close()

    def check(self) -> None:
        """Raise :class:`WatchError` when no watcher can listen here, or one already does;
        take away the socket a watcher that is gone left."""
        import socket

        folder = os.path.dirname(self.address)
        with contextlib.suppress(FileExistsError):
            os.makedirs(folder, mode=0o700)
        if not owned(folder):
            raise WatchError(f"{folder} is not a folder of yours alone: no watcher can listen")
        if os.path.exists(self.address):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.settimeout(ASK_SECONDS)
                probe.connect(self.address)
            except OSError:
                os.unlink(self.address)  # left by a watcher that is gone
            else:
                raise WatchError(f"another watcher already keeps {self.index_path} fresh")
            finally:
                probe.close()

    def _listen(self) -> socket.socket:
        import socket

        self.check()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.address)
        os.chmod(self.address, 0o600)
        server.listen(16)
        return server

    def _answer(self, server: socket.socket, inotify: _Inotify) -> None:
        conn, _ = server.accept()
        try:
            conn.settimeout(ASK_SECONDS)
            asked = b""
            while asked.count(b"\0") < 3 or not asked.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk or len(asked) > 1 << 20:
                    return
                asked += chunk
            fields = asked.split(b"\0", 3)
            if fields[:2] != request(self.index_path, self.notes_dir, False).split(b"\0")[:2]:
                conn.sendall(b"other\n")  # another index or notes folder: the hook scans
                return
            with_terms = fields[2] == b"1"
            # Every change made before the question is in the queue now: read it all.
            changed = inotify.drain() > 0 or self.pending
            if changed or with_terms != self.with_terms or self._written_by_another():
                self.with_terms = with_terms
                self._refresh(inotify)
            question = fields[3].strip()
            conn.sendall(self._ranked(question) if question else FRESH)
        except OSError:
            return
        finally:
            conn.close()

    def _ranked(self, question: bytes) -> bytes:
        """The answer to a hook's ranking question (JSON: the task's terms, how many notes,
        and for the history ranking its transcript index, notes roots, whether the team's
        sessions count and the hook's clock): :data:`RANKED` and the notes; plain
        :data:`FRESH` when it cannot rank here, and the hook ranks."""
        from hippo_core.context.relevance import rank, scores_from
        from hippo_core.files import jsontext
        from hippo_core.notes.postings import TermNotes

        index = self.index
        try:
            asked = jsontext.loads(question.decode("utf-8", "surrogateescape"))
            terms, limit = asked["terms"], asked["limit"]
            history = asked.get("history")
            if not isinstance(terms, list) or not all(isinstance(term, str) for term in terms):
                return FRESH
            if not isinstance(limit, int) or not isinstance(history, dict | None):
                return FRESH
            if index is None or not index.with_terms:
                return FRESH
            if self.term_notes is None or self.term_notes.index is not index:
                self.term_notes = TermNotes(index)
            ranked = index.ranked

            def past() -> dict[str, float]:
                if not isinstance(history, dict):
                    return {}
                kept = self._history(str(history["index"]))
                if kept is None:
                    return {}
                roots = [str(root) for root in history["roots"]]
                return scores_from(
                    kept[0],
                    roots,
                    terms,
                    ranked,
                    team=bool(history["team"]),
                    now=float(history["now"]),
                    held=kept[1],
                )

            found = rank(self.term_notes.best, index, terms, history is not None, limit, past)
        except Exception:  # a question it cannot read, an index it cannot: the hook ranks
            return FRESH  # (and the watcher goes on answering the others)
        return (
            RANKED + jsontext.dumps(found, indent=None).encode("utf-8", "surrogateescape") + b"\n"
        )

    def _history(self, path: str) -> tuple[sqlite3.Connection, SessionTerms] | None:
        """The transcript index at ``path`` and the rows read of it, kept between questions
        (and opened again when a full ingest made it anew); None when there is none."""
        from hippo_core.index.history import SessionTerms, open_history

        try:
            found = os.stat(path)
        except OSError:
            return None
        stamp = (found.st_dev, found.st_ino)
        kept = self.histories.get(path)
        if kept is not None and kept[0] == stamp:
            return kept[1], kept[2]
        if kept is not None:
            kept[1].close()
            del self.histories[path]
        conn = open_history(path)
        if conn is None:
            return None
        self.histories[path] = (stamp, conn, SessionTerms())
        return conn, self.histories[path][2]

    def _written_by_another(self) -> bool:
        if self.index is None:
            return True
        found = self.index.conn.execute("PRAGMA data_version").fetchone()[0]
        return bool(found != self.version)

    def _refresh(self, inotify: _Inotify) -> None:
        """Scan as a hook would (re-opening the index when it was rebuilt or is kept with
        terms otherwise than asked), then watch every folder the scan found. A folder new
        to the watch may have changed before its watch began: scan once more after."""
        from hippo_core.notes.index import open_index, same_index

        self.pending = False
        while True:
            if self.index is None or not same_index(self.index, self.with_terms):
                if self.index is not None:
                    self.index.conn.close()
                self.index = open_index(self.notes_dir, self.index_path, with_terms=self.with_terms)
                if self.index.in_memory:
                    raise WatchError(f"{self.index_path} cannot be written: nothing to keep fresh")
            else:
                self.index.refresh()
            self.refreshes += 1
            self.version = self.index.conn.execute("PRAGMA data_version").fetchone()[0]
            folders = [os.path.join(self.notes_dir, folder) for folder in self.index.folders()]
            new = [folder for folder in folders if folder not in inotify.watched]
            for folder in new:
                inotify.watch(folder, first=folder == os.path.join(self.notes_dir, ""))
            if not new:
                return


def workspace_watcher(workspace: Workspace) -> NotesWatcher:
    """The watcher of ``workspace``'s notes index (``.hippo/cache/notes.sqlite``), keeping
    terms as its ``relevance`` needs them."""
    from hippo_core.workspace.locate import HIPPO_DIR

    notes = workspace.inside(workspace.settings.notes_dir)
    index = workspace.inside(HIPPO_DIR, "cache", "notes.sqlite")
    return NotesWatcher(notes, index, workspace.settings.relevance in ("bm25", "history"))


def keep_fresh(start: str) -> Callable[[], None] | None:
    """Watch the notes of the workspace at or above ``start`` in a thread of this process
    (``hippo mcp`` and ``hippo sleep serve`` while they serve), until the function returned
    is called; None when there is no workspace there. Where no watcher can run (not Linux,
    or another one already watches) the thread ends by itself, silently: the hooks scan."""
    import sqlite3
    import threading

    from hippo_core.base.errors import HippoError
    from hippo_core.workspace.folder import Workspace

    try:
        watcher = workspace_watcher(Workspace.find(start))
    except (HippoError, WatchError, OSError):
        return None

    def run() -> None:
        with contextlib.suppress(WatchError, OSError, sqlite3.Error):  # the hooks scan
            watcher.serve()

    # Not waited for: the first scan of a large notes folder takes seconds, and the hooks
    # scan by themselves until the watcher's socket is there.
    thread = threading.Thread(target=run, name="hippo-notes-watch", daemon=True)
    thread.start()

    def done() -> None:
        watcher.stop()
        thread.join(2.0)  # it removes its socket as it goes

    return done
