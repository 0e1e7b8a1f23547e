"""The notes index: ``.hippo/cache/notes.sqlite``, what hippo needs of every note, kept fresh.

``hippo context`` and the agents' hooks run on every session; reading and parsing thousands
of notes each time would cost them seconds. The index keeps, per note, its title, headings'
words, first body line, dates, links (and whether each dangles) and parse problems, with
the size, mtime and inode the file had when it was read. A call refreshes it:

- each folder below ``notes_dir`` is listed again only when its mtime changed (an entry was
  added, removed or renamed in it); the listing it had is kept;
- each note is stat-ed, and read and parsed again only when its size, mtime or inode
  changed;
- a file or folder changed within :data:`RACY_NS` of being looked at may change again
  within its mtime's granularity without its stamp moving, so it is looked at again next
  time (git's "racy" index entries, the same remedy): a change is never served stale.

Ranking and the linter's counts are queries, not a walk over every note. The index is a
cache: a file that is missing, unreadable, from another version of hippo or for another
``notes_dir`` is rebuilt; a workspace where it cannot be written gets one in memory.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
import time

from hippo_core.notes.links import resolve
from hippo_core.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from os import PathLike

    from hippo_core.notes.note import Note

#: Bumped when the tables or what parsing a note yields change: an older index is rebuilt.
FORMAT = "2"
RACY_NS = 2_000_000_000
BUSY_MS = 10_000
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # A folder's listing: (subfolders, {note file name: (size, mtime_ns, inode) or None}).
    "CREATE TABLE IF NOT EXISTS folders (path TEXT PRIMARY KEY, mtime_ns INTEGER, listing BLOB)",
    "CREATE TABLE IF NOT EXISTS notes (path TEXT PRIMARY KEY, name TEXT NOT NULL, "
    "title TEXT NOT NULL, first_line TEXT NOT NULL, review_after INTEGER, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS notes_by_name ON notes (name)",
    "CREATE INDEX IF NOT EXISTS notes_by_review ON notes (review_after)",
    # A note's title and heading words, with its date: ranking reads this table alone.
    "CREATE TABLE IF NOT EXISTS words (word TEXT, path TEXT, updated INTEGER NOT NULL, "
    "PRIMARY KEY (word, path)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS words_by_path ON words (path)",
    "CREATE TABLE IF NOT EXISTS links (path TEXT NOT NULL, target TEXT NOT NULL, "
    "dangles INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS links_by_path ON links (path)",
    "CREATE INDEX IF NOT EXISTS links_by_target ON links (target)",
    "CREATE INDEX IF NOT EXISTS links_dangling ON links (dangles) WHERE dangles",
)
Stamp = tuple[int, int, int]
Listing = tuple[list[str], dict[str, Stamp | None]]


class NotesIndex:
    """The index of one ``notes_dir``, refreshed when opened (:func:`open_index`)."""

    def __init__(self, conn: sqlite3.Connection, notes_dir: str) -> None:
        self.conn = conn
        self.notes_dir = notes_dir

    def refresh(self) -> None:
        """Bring the index up to date with the files: stat everything, read what changed."""
        seen = self._survey()
        if seen.dirty:
            with self._writing():
                self._apply(self._survey() if self._written_since(seen) else seen)

    # -- what the context block and the linter ask -------------------------------------

    def notes(self) -> dict[str, Note]:
        """Every note, by path, in path order."""
        from hippo_core.notes.note import Note

        rows = self.conn.execute("SELECT path, data FROM notes ORDER BY path")
        return {path: Note.from_json(marshal.loads(data)) for path, data in rows}

    def ranked(self, words: list[str], limit: int) -> list[tuple[str, str]]:
        """Title and first body line of the ``limit`` notes with most of ``words`` in their
        title and headings: ties to the most recently updated (undated last), then the path."""
        best = self.ranked_paths(words, limit)
        marks = ",".join("?" * len(best))
        rows = self.conn.execute(
            f"SELECT path, title, first_line FROM notes WHERE path IN ({marks})", best
        )
        found = {path: (title, first_line) for path, title, first_line in rows}
        return [found[path] for path in best]

    def ranked_paths(self, words: list[str], limit: int) -> list[str]:
        """The paths :meth:`ranked` shows, best first."""
        if not words:
            return []
        marks = ",".join("?" * len(words))
        query = (
            f"SELECT path FROM words WHERE word IN ({marks}) GROUP BY path "
            "ORDER BY count(*) DESC, max(updated) DESC, path LIMIT ?"
        )
        return [row[0] for row in self.conn.execute(query, (*words, limit))]

    def overdue(self, today: int) -> int:
        """How many notes have a ``review_after`` before ``today`` (a date's ordinal)."""
        query = "SELECT count(*) FROM notes WHERE review_after < ?"
        return int(self.conn.execute(query, (today,)).fetchone()[0])

    def dangling(self) -> int:
        """How many links resolve to no note."""
        return int(self.conn.execute("SELECT count(*) FROM links WHERE dangles").fetchone()[0])

    # -- the refresh -----------------------------------------------------------------------

    def _survey(self) -> _Survey:
        rows = self.conn.execute("SELECT path, mtime_ns, listing FROM folders").fetchall()
        known = {path: (mtime, marshal.loads(listing)) for path, mtime, listing in rows}
        survey = _Survey(self.notes_dir, known, time.time_ns() - RACY_NS)
        survey.walk()
        return survey

    def _written_since(self, seen: _Survey) -> bool:
        # Another process may have refreshed between the survey and the write lock.
        rows = self.conn.execute("SELECT path, mtime_ns, listing FROM folders").fetchall()
        return {p: (m, marshal.loads(b)) for p, m, b in rows} != seen.known

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _apply(self, survey: _Survey) -> None:
        conn = self.conn
        parsed = [survey.parse(path) for path in survey.changed]
        conn.executemany(
            "DELETE FROM folders WHERE path = ?",
            [(path,) for path in survey.known if path not in survey.folders],
        )
        conn.executemany(
            "INSERT OR REPLACE INTO folders (path, mtime_ns, listing) VALUES (?, ?, ?)",
            [(path, m, marshal.dumps(listing)) for path, (m, listing) in survey.folders.items()],
        )
        for path in [*survey.removed, *survey.changed]:
            for table in ("notes", "words", "links"):
                conn.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
        for note in parsed:
            self._store(note)
        self._resolve_again(
            _affected_targets([*survey.removed, *survey.added]), set(survey.changed)
        )
        for path in survey.changed:
            self._resolve_links_of(path)

    def _store(self, note: Note) -> None:
        meta = note.meta
        self.conn.execute(
            "INSERT INTO notes (path, name, title, first_line, review_after, data) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                note.path,
                note.path.rsplit("/", 1)[-1],
                note.title,
                note.first_line,
                meta.review_after.toordinal() if meta.review_after else None,
                marshal.dumps(note.to_json()),
            ),
        )
        updated = meta.updated.toordinal() if meta.updated else 0  # undated ranks last
        self.conn.executemany(
            "INSERT INTO words (word, path, updated) VALUES (?, ?, ?)",
            [(word, note.path, updated) for word in sorted(note.vocabulary)],
        )
        self.conn.executemany(
            "INSERT INTO links (path, target, dangles) VALUES (?, ?, 0)",
            [(note.path, target) for target, _line in note.links],
        )

    def _resolve_links_of(self, path: str) -> None:
        rows = self.conn.execute("SELECT rowid, target FROM links WHERE path = ?", (path,))
        self._set_dangles(rows.fetchall())

    def _resolve_again(self, targets: set[str], skip: set[str]) -> None:
        """Resolve again the links to ``targets`` (notes named so came or went)."""
        if not targets:
            return
        marks = ",".join("?" * len(targets))
        rows = self.conn.execute(
            f"SELECT rowid, target, path FROM links WHERE target IN ({marks})", tuple(targets)
        ).fetchall()
        self._set_dangles([(rowid, target) for rowid, target, path in rows if path not in skip])

    def _set_dangles(self, rows: Iterable[tuple[int, str]]) -> None:
        self.conn.executemany(
            "UPDATE links SET dangles = ? WHERE rowid = ?",
            [
                (int(resolve(target, self._has, self._named) is None), rowid)
                for rowid, target in rows
            ],
        )

    def _has(self, path: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM notes WHERE path = ?", (path,)).fetchone() is not None
        )

    def _named(self, name: str) -> list[str]:
        rows = self.conn.execute("SELECT path FROM notes WHERE name = ? LIMIT 2", (name,))
        return [row[0] for row in rows]


class _Survey:
    """What the files look like now, against what the index recorded of them."""

    def __init__(self, notes_dir: str, known: dict[str, tuple[int, Listing]], racy: int) -> None:
        self.root = os.path.join(notes_dir, "")
        self.known = known
        self.racy = racy
        self.folders: dict[str, tuple[int, Listing]] = {}
        self.changed: list[str] = []  # notes to read again: new ones, or with another stamp
        self.added: list[str] = []  # of those, the new ones
        self.removed: list[str] = []

    @property
    def dirty(self) -> bool:
        return bool(self.changed or self.removed or self.folders != self.known)

    def walk(self) -> None:
        stack = [""]
        while stack:
            folder = stack.pop()
            listing = self._folder(folder)
            if listing is not None:
                stack.extend(f"{folder}{name}/" for name in reversed(listing[0]))
        for folder, (_mtime, (_dirs, files)) in self.known.items():
            if folder not in self.folders:  # gone, or no longer a folder one can list
                self.removed.extend(folder + name for name in files)

    def _folder(self, folder: str) -> Listing | None:
        where = self.root + folder
        try:
            mtime = os.stat(where).st_mtime_ns
        except OSError:
            return None
        old = self.known.get(folder)
        if old is not None and old[0] == mtime:
            listing = self._check(folder, old[1])
        else:
            scanned = self._scan(folder, where, old[1][1] if old else {})
            if scanned is None:
                return None
            listing = scanned
        # A folder changed just now may change again within its mtime's tick: list it next time.
        self.folders[folder] = (mtime if mtime < self.racy else -1, listing)
        return listing

    def _check(self, folder: str, listing: Listing) -> Listing:
        """The notes of a folder whose entries did not change, each stat-ed."""
        lstat = os.lstat
        # Stat-ing by name in an open folder spares the kernel walking the whole path each time.
        with _opened(self.root + folder) as (prefix, folder_fd):
            try:
                for name, old in listing[1].items():  # the usual case: every note as it was
                    stat = lstat(prefix + name, dir_fd=folder_fd)
                    if (
                        old is None
                        or stat.st_mtime_ns != old[1]
                        or stat.st_size != old[0]
                        or stat.st_ino != old[2]
                    ):
                        break
                else:
                    return listing
            except OSError:
                pass
            return self._recheck(folder, listing, prefix, folder_fd)

    def _recheck(
        self, folder: str, listing: Listing, prefix: str, folder_fd: int | None
    ) -> Listing:
        """:meth:`_check` for a folder where a note changed, came within the racy window or
        went: each note's stamp, and what changed."""
        files: dict[str, Stamp | None] = {}
        racy, lstat = self.racy, os.lstat
        for name, old in listing[1].items():
            try:
                stat = lstat(prefix + name, dir_fd=folder_fd)
            except OSError:
                self.removed.append(folder + name)  # gone, and the folder's clock is coarse
                continue
            stamp = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
            if stamp != old:
                self.changed.append(folder + name)
            files[name] = stamp if stat.st_mtime_ns < racy else None
        return listing[0], files

    def _scan(self, folder: str, where: str, old: dict[str, Stamp | None]) -> Listing | None:
        """List a folder again: its visible subfolders and notes (links not followed)."""
        try:
            entries = list(os.scandir(where))
        except OSError:
            return None
        dirs, files = [], {}
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(name)
                elif name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    stat = entry.stat(follow_symlinks=False)
                    stamp = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
                    if name not in old:
                        self.added.append(folder + name)
                    if stamp != old.get(name):
                        self.changed.append(folder + name)
                    files[name] = stamp if stat.st_mtime_ns < self.racy else None
            except OSError:
                continue
        self.removed.extend(folder + name for name in old if name not in files)
        return sorted(dirs), dict(sorted(files.items()))

    def parse(self, path: str) -> Note:
        """Read and parse a note; one that cannot be read is tried again next time (its
        permissions may change without its stamp moving)."""
        from hippo_core.notes.note import parse_note, unreadable_note

        try:
            with open(self.root + path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            folder, _, name = path.rpartition("/")
            self.folders[folder + "/" if folder else ""][1][1][name] = None
            return unreadable_note(path, exc.strerror or type(exc).__name__)
        return parse_note(path, raw)


@contextlib.contextmanager
def _opened(where: str) -> Iterator[tuple[str, int | None]]:
    """``("", fd)`` for names relative to the open folder ``where``, or ``(where, None)``
    where folders cannot be opened so (Windows) or this one cannot be (then each stat says)."""
    if not _DIR_FD:
        yield where, None
        return
    try:
        fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield where, None
        return
    try:
        yield "", fd
    finally:
        os.close(fd)


_DIR_FD = os.lstat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


def _affected_targets(paths: list[str]) -> set[str]:
    """The link targets whose resolution a note at one of ``paths`` coming or going changes."""
    targets = set()
    for path in paths:
        stem = path.removesuffix(".md")
        targets.add(stem)
        targets.add(stem.rsplit("/", 1)[-1])
    return targets


def open_index(notes_dir: str | PathLike[str], path: str | PathLike[str]) -> NotesIndex:
    """The index of ``notes_dir`` kept at ``path``, refreshed; rebuilt or in memory as needed."""
    root = os.fspath(notes_dir)
    for attempt in range(2):
        try:
            index = NotesIndex(_connect(os.fspath(path), root), root)
            index.refresh()
            return index
        except OSError:
            break  # the cache folder cannot be made: a read-only workspace
        except sqlite3.DatabaseError as exc:
            if attempt or not _damaged(exc):
                break  # read-only, or held by a stuck process: build it in memory
            _delete(os.fspath(path))  # torn or not a database: it is only a cache
    index = NotesIndex(_prepare(sqlite3.connect(":memory:", isolation_level=None), root), root)
    index.refresh()
    return index


def _connect(path: str, notes_dir: str) -> sqlite3.Connection:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        return _prepare(conn, notes_dir)
    except BaseException:
        conn.close()
        raise


def _prepare(conn: sqlite3.Connection, notes_dir: str) -> sqlite3.Connection:
    """Tables in place, and empty unless they were written by this version for this folder."""
    conn.execute("PRAGMA synchronous = OFF")  # a cache: a torn file is rebuilt
    wanted = {"format": FORMAT, "hippo": __version__, "notes_dir": notes_dir}
    try:
        found = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.OperationalError:
        found = {}  # no tables yet
    if found == wanted:
        return conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        with contextlib.suppress(sqlite3.OperationalError):
            if dict(conn.execute("SELECT key, value FROM meta").fetchall()) == wanted:
                conn.execute("COMMIT")  # another process made it while this one waited
                return conn
        for table in ("meta", "folders", "notes", "words", "links"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", wanted.items())
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return conn


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    message = str(exc).lower()
    return "malformed" in message or "not a database" in message or "corrupt" in message


def _delete(path: str) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.unlink(path + suffix)
