"""``hippo ingest``: read what changed in the transcript files into the index.

Each file is read from where the last ingest left it (the start of its last turn, which
may have grown since); a file that shrank or whose first bytes changed is read again
whole. Text is redacted before anything is stored. The walk is a straight loop: find the
files, skip the unchanged ones, parse the rest, replace their turns from the resume point.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from hippo_core.base.errors import HippoError
from hippo_core.files import jsontext
from hippo_core.files.home import hippo_home, user_path
from hippo_core.files.names import shown_name, utf8_name
from hippo_core.index import db
from hippo_core.index.summary import IngestSummary
from hippo_core.transcripts.model import Parsed, Resume, TranscriptSource

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hippo_core.index.store import IndexWriter

HEAD_BYTES = 4096
#: What tells whether a file changed, read for every file on each ingest.
_STAMP = "size, mtime_ns, inode"
#: Commit after this many bytes of transcript, so an interrupted ingest keeps its work.
COMMIT_EVERY_BYTES = 32 * 1024 * 1024


class Unit:
    """One transcript file, by its path's string, and the source that reads it."""

    __slots__ = ("path", "source")

    def __init__(self, source: TranscriptSource, path: str) -> None:
        self.source = source
        self.path = path


def discover(
    sources: dict[str, TranscriptSource],
    extra: dict[str, tuple[str, ...]],
    *,
    defaults: bool = True,
) -> tuple[list[Unit], list[str]]:
    """Every transcript file of every source, default folders first, each path once.

    ``defaults=False`` skips each source's default folders (``source.roots``): only the
    folders of ``extra`` are read (``hippo eval`` keeps a case away from the user's own).
    """
    env, home = os.environ, Path.home()
    units: dict[str, Unit] = {}
    problems = [
        f"transcript_dirs names '{tool}', which is no transcript source here "
        f"(known: {', '.join(sorted(sources))})"
        for tool in extra
        if tool not in sources
    ]
    for name, folders in extra.items():
        problems.extend(
            f"transcript_dirs: {folder} ({name}) does not exist"
            for folder in folders
            if name in sources and not user_path(folder).is_dir()
        )
    for name, source in sorted(sources.items()):
        own = source.roots(env, home) if defaults else []
        roots = [*own, *(user_path(d) for d in extra.get(name, ()))]
        for root in dict.fromkeys(roots):
            try:
                for found in source.discover(root):
                    path = found if isinstance(found, str) else os.fspath(found)
                    if not utf8_name(path):
                        problems.append(
                            f"{name}: {shown_name(path)}: the file name is not UTF-8, so it"
                            " is left out; rename it to index it"
                        )
                    elif path not in units:
                        units[path] = Unit(source, path)
            except OSError as exc:
                problems.append(f"{name}: {root}: cannot be listed ({exc.strerror or exc})")
    return list(units.values()), problems


def _fingerprint(path: str) -> tuple[int, int, int]:
    """Size, mtime and inode: a change means the file must be read.

    A SQLite database in WAL mode (OpenCode's) takes new rows in ``<name>-wal`` and leaves
    the main file alone until a checkpoint, so the WAL file counts too.
    """
    stat = os.stat(path)
    size, mtime = stat.st_size, stat.st_mtime_ns
    try:
        wal = os.stat(f"{path}-wal")
    except OSError:
        return size, mtime, stat.st_ino
    return size + wal.st_size, max(mtime, wal.st_mtime_ns), stat.st_ino


def _head(path: str, length: int) -> str:
    """The length and checksum of the first ``length`` bytes: a file whose head changed was
    rewritten, and is read again from the start."""
    from zlib import crc32

    with open(path, "rb") as handle:
        data = handle.read(length)
    return f"{len(data)}:crc32-{crc32(data):08x}"


class Ingest:
    """One run over every transcript file, holding the index connection."""

    def __init__(self, conn: sqlite3.Connection, summary: IngestSummary) -> None:
        self.conn = conn
        self.summary = summary

    @cached_property
    def writer(self) -> IndexWriter:
        # Made when the first changed file is read: an ingest with nothing new never needs it.
        from hippo_core.index.store import IndexWriter

        return IndexWriter(self.conn, self.summary)

    def run(self, units: list[Unit], progress: Callable[[int], None] | None) -> None:
        conn = self.conn
        known = {row[0]: row for row in conn.execute(f"SELECT path, {_STAMP} FROM files")}
        pending = 0
        conn.execute("BEGIN")
        try:
            for unit in units:
                read = self._unit(unit, known.get(str(unit.path)))
                pending += read
                if progress:
                    progress(read)
                if pending >= COMMIT_EVERY_BYTES:
                    conn.execute("COMMIT")
                    conn.execute("BEGIN")
                    pending = 0
            if "writer" in self.__dict__:  # something was written: its sessions' history
                from hippo_core.index.history import refresh

                refresh(conn, self.writer.generation)
            if self.summary.read or self.summary.rebuilt:
                db.bump_generation(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _unit(self, unit: Unit, row: Any) -> int:
        """Read one file if it changed; the number of bytes read."""
        self.summary.files += 1
        key = unit.path
        try:
            stamp = _fingerprint(key)
        except FileNotFoundError:
            self.summary.vanished += 1
            return 0
        if row is not None and row[1:4] == stamp:
            self.summary.unchanged += 1
            return 0
        size, _mtime_ns, inode = stamp
        if row is not None:  # changed: the rest of what the index knows of it
            row = self.conn.execute("SELECT * FROM files WHERE path = ?", (key,)).fetchone()
        try:
            resume = self._resume(key, row, size, inode)
            if resume.offset == 0 and row is not None and row["resume_offset"] != 0:
                self.summary.reread += 1
            parsed = unit.source.parse(Path(key), resume)
            head = _head(key, min(HEAD_BYTES, parsed.committed or HEAD_BYTES))
        except FileNotFoundError:
            self.summary.vanished += 1
            return 0
        except Exception as exc:  # a source must never stop the ingest
            self.summary.problems.append(
                f"{unit.source.name}: {key}: could not be read ({type(exc).__name__}: {exc})"
            )
            return 0
        self.summary.problems.extend(
            f"{unit.source.name}: {p if key in p else f'{key}: {p}'}" for p in parsed.problems
        )
        if parsed.problems and not parsed.turns and self.writer.has_turns(key):
            # Unreadable this time (a locked database, a broken stream): keep what the index
            # has and try again next run, rather than replacing it with nothing.
            return 0
        self.summary.read += 1
        # A file read again from the start (rewritten, or a whole-file format such as
        # zstd or SQLite) reports its corrupt lines afresh: count only what is new.
        earlier = row["corrupt"] if row is not None else 0
        corrupt = parsed.corrupt + (earlier if resume.offset else 0)
        self.summary.corrupt += max(corrupt - earlier, 0)
        self.conn.execute("SAVEPOINT store")
        try:
            self._store(unit, resume, parsed)
            self._remember(unit, stamp, head, parsed, corrupt)
        except UnicodeEncodeError:
            # A lone surrogate the agent's JSON escaped ("\\ud800"): SQLite takes only
            # UTF-8, so the file's text goes in with U+FFFD in its place.
            self.conn.execute("ROLLBACK TO store")
            _well_formed(parsed)
            self._store(unit, resume, parsed)
            self._remember(unit, stamp, head, parsed, corrupt)
        self.conn.execute("RELEASE store")
        read = max(size - resume.offset, 0)
        self.summary.bytes += read
        return read

    def _remember(
        self,
        unit: Unit,
        stamp: tuple[int, int, int],
        head: str,
        parsed: Parsed,
        corrupt: int,
    ) -> None:
        """Record how far the file was read and where the next read resumes."""
        self.conn.execute(
            "INSERT OR REPLACE INTO files (path, tool, size, mtime_ns, inode, head, committed, "
            "resume_offset, resume_state, corrupt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                unit.path,
                unit.source.name,
                *stamp,
                head,
                parsed.committed,
                parsed.resume.offset,
                jsontext.dumps(parsed.resume.state, indent=None),
                corrupt,
            ),
        )

    @staticmethod
    def _resume(path: str, row: Any, size: int, inode: int) -> Resume:
        """Where to read from: the stored resume point, or 0 when the file was rewritten."""
        if row is None or row["inode"] != inode or size < row["committed"]:
            return Resume()
        length = int(row["head"].split(":", 1)[0])
        if _head(path, length) != row["head"]:
            return Resume()
        state = jsontext.loads(row["resume_state"])
        return Resume(row["resume_offset"], state, seen=row["committed"])

    def _store(self, unit: Unit, resume: Resume, parsed: Parsed) -> None:
        source = unit.path
        writer = self.writer
        replaced = writer.delete_turns("source = ? AND start >= ?", source, resume.offset)
        private = writer.sessions(parsed.sessions, parsed.turns)
        turns = [t for t in parsed.turns if t.session not in private]
        inserted = writer.insert_turns(unit.source.name, turns)
        # The last turn of a file is read again each time (it may have grown): count it new
        # only once.
        self.summary.turns += max(inserted - replaced, 0)


def _well_formed(parsed: Parsed) -> None:
    """Make every string of ``parsed`` (sessions, turns, the reader's state) well formed."""
    for item in [*parsed.sessions, *parsed.turns]:
        names: tuple[str, ...] = item.__slots__
        for name in names:
            value = getattr(item, name)
            if isinstance(value, str | list):
                setattr(item, name, jsontext.well_formed(value))
    parsed.resume.state = jsontext.well_formed(parsed.resume.state)


def ingest(
    *,
    full: bool = False,
    extra_dirs: dict[str, tuple[str, ...]] | None = None,
    defaults: bool = True,
    say: Callable[[str], None] = lambda line: None,
    progress: Callable[[int, int], Callable[[int], None]] | None = None,
) -> IngestSummary:
    """Index every transcript that changed since the last run (all of them with ``full``).

    ``defaults=False`` reads only ``extra_dirs``, none of the agents' default folders.
    ``say`` gets notices (a rebuild, waiting for another ingest); ``progress`` is called
    with the number of files and their total size and returns a callback for bytes read.
    """
    from hippo_core.plugins.manager import load_plugins

    started = time.monotonic()
    home = hippo_home()
    summary = IngestSummary()
    with db.ingest_lock(home, say):
        path = home / "index.sqlite"
        if full:
            db.delete_index(path)
        try:
            conn, summary.rebuilt = db.open_for_writing(path, say)
        except sqlite3.OperationalError as exc:
            raise HippoError(f"{path}: {exc}; is another program using it?") from None
        try:
            sources = load_plugins().sources()
            units, summary.problems = discover(sources, extra_dirs or {}, defaults=defaults)
            advance = None
            if progress is not None:
                advance = progress(len(units), sum(_size(u.path) for u in units))
            Ingest(conn, summary).run(units, advance)
        except sqlite3.OperationalError as exc:
            raise HippoError(
                f"{path}: {exc}; another program holds the index: try again when it is done"
            ) from None
        finally:
            conn.close()
    summary.seconds = time.monotonic() - started
    return summary


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
