"""``hippo ingest``: read what changed in the transcript files into the index.

Each file is read from where the last ingest left it (the start of its last turn, which
may have grown since); a file that shrank or whose first bytes changed is read again
whole. Text is redacted before anything is stored. The walk is a straight loop: find the
files, skip the unchanged ones, parse the rest, replace their turns from the resume point.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hippo_core.errors import HippoError
from hippo_core.home import hippo_home
from hippo_core.index import db
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource, Turn
from hippo_core.transcripts.privacy import is_private_session, redact

HEAD_BYTES = 4096
#: Commit after this many bytes of transcript, so an interrupted ingest keeps its work.
COMMIT_EVERY_BYTES = 32 * 1024 * 1024


@dataclass
class IngestSummary:
    """What one ingest did, for its one-line summary and ``--json``."""

    files: int = 0
    read: int = 0
    unchanged: int = 0
    vanished: int = 0
    reread: int = 0
    turns: int = 0
    duplicates: int = 0
    sessions: int = 0
    corrupt: int = 0
    redacted: int = 0
    private_sessions: int = 0
    bytes: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        parts = [
            f"ingested {self.read} of {self.files} transcript files",
            _count(self.turns, "new turn"),
            _count(self.sessions, "new session"),
        ]
        for count, thing, verb in (
            (self.duplicates, "duplicate turn", "skipped"),
            (self.corrupt, "corrupt line", "skipped"),
            (self.redacted, "secret", "redacted"),
            (self.private_sessions, "private session", "left out"),
            (self.vanished, "file", "vanished"),
            (len(self.problems), "problem", ""),
        ):
            if count:
                parts.append(f"{_count(count, thing)} {verb}".rstrip())
        return ", ".join(parts) + f" ({self.seconds:.1f} s)"


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Unit:
    """One transcript file and the source that reads it."""

    source: TranscriptSource
    path: Path


def discover(
    sources: dict[str, TranscriptSource], extra: dict[str, tuple[str, ...]]
) -> tuple[list[Unit], list[str]]:
    """Every transcript file of every source, default folders first, each path once."""
    env, home = os.environ, Path.home()
    units: dict[Path, Unit] = {}
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
            if name in sources and not Path(folder).expanduser().is_dir()
        )
    for name, source in sorted(sources.items()):
        roots = [*source.roots(env, home), *(Path(d).expanduser() for d in extra.get(name, ()))]
        for root in dict.fromkeys(roots):
            try:
                for path in source.discover(root):
                    units.setdefault(path, Unit(source, path))
            except OSError as exc:
                problems.append(f"{name}: {root}: cannot be listed ({exc.strerror or exc})")
    return list(units.values()), problems


def _fingerprint(path: Path) -> tuple[int, int, int]:
    """Size, mtime and inode: a change means the file must be read.

    A SQLite database in WAL mode (OpenCode's) takes new rows in ``<name>-wal`` and leaves
    the main file alone until a checkpoint, so the WAL file counts too.
    """
    stat = path.stat()
    size, mtime = stat.st_size, stat.st_mtime_ns
    try:
        wal = Path(f"{path}-wal").stat()
    except OSError:
        return size, mtime, stat.st_ino
    return size + wal.st_size, max(mtime, wal.st_mtime_ns), stat.st_ino


def _head(path: Path, length: int) -> str:
    with path.open("rb") as handle:
        data = handle.read(length)
    return f"{len(data)}:{hashlib.sha256(data).hexdigest()}"


class Ingest:
    """One run over every transcript file, holding the index connection."""

    def __init__(self, conn: sqlite3.Connection, summary: IngestSummary) -> None:
        self.conn = conn
        self.summary = summary
        self.next_id = 1

    def run(self, units: list[Unit], progress: Callable[[int], None] | None) -> None:
        conn = self.conn
        known = {row["path"]: row for row in conn.execute("SELECT * FROM files")}
        self.next_id = (conn.execute("SELECT max(id) FROM turns").fetchone()[0] or 0) + 1
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
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _unit(self, unit: Unit, row: Any) -> int:
        """Read one file if it changed; the number of bytes read."""
        self.summary.files += 1
        key = str(unit.path)
        try:
            size, mtime_ns, inode = _fingerprint(unit.path)
        except FileNotFoundError:
            self.summary.vanished += 1
            return 0
        if row is not None and (row["size"], row["mtime_ns"], row["inode"]) == (
            size,
            mtime_ns,
            inode,
        ):
            self.summary.unchanged += 1
            return 0
        try:
            resume = self._resume(unit.path, row, size, inode)
            if resume.offset == 0 and row is not None and row["resume_offset"] != 0:
                self.summary.reread += 1
            parsed = unit.source.parse(unit.path, resume)
            head = _head(unit.path, min(HEAD_BYTES, parsed.committed or HEAD_BYTES))
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
        if parsed.problems and not parsed.turns and not parsed.sessions:
            # Unreadable this time (a locked database, a broken stream): keep what the index
            # has and try again next run, rather than replacing it with nothing.
            return 0
        self.summary.read += 1
        # A file read again from the start (rewritten, or a whole-file format such as
        # zstd or SQLite) reports its corrupt lines afresh: count only what is new.
        earlier = row["corrupt"] if row is not None else 0
        corrupt = parsed.corrupt + (earlier if resume.offset else 0)
        self.summary.corrupt += max(corrupt - earlier, 0)
        self._store(unit, resume, parsed)
        self.conn.execute(
            "INSERT OR REPLACE INTO files (path, tool, size, mtime_ns, inode, head, committed, "
            "resume_offset, resume_state, corrupt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                unit.source.name,
                size,
                mtime_ns,
                inode,
                head,
                parsed.committed,
                parsed.resume.offset,
                json.dumps(parsed.resume.state, separators=(",", ":")),
                corrupt,
            ),
        )
        read = max(size - resume.offset, 0)
        self.summary.bytes += read
        return read

    @staticmethod
    def _resume(path: Path, row: Any, size: int, inode: int) -> Resume:
        """Where to read from: the stored resume point, or 0 when the file was rewritten."""
        if row is None or row["inode"] != inode or size < row["committed"]:
            return Resume()
        length = int(row["head"].split(":", 1)[0])
        if _head(path, length) != row["head"]:
            return Resume()
        state = json.loads(row["resume_state"])
        return Resume(row["resume_offset"], state, seen=row["committed"])

    def _store(self, unit: Unit, resume: Resume, parsed: Parsed) -> None:
        source = str(unit.path)
        replaced = self._delete_turns("source = ? AND start >= ?", source, resume.offset)
        private = self._sessions(parsed.sessions, parsed.turns)
        turns = [t for t in parsed.turns if t.session not in private]
        inserted = self._insert_turns(unit.source.name, turns)
        # The last turn of a file is read again each time (it may have grown): count it new
        # only once.
        self.summary.turns += max(inserted - replaced, 0)

    def _sessions(self, infos: list[SessionInfo], turns: list[Turn]) -> set[str]:
        """Upsert the sessions; the ids of those marked private (their turns are dropped)."""
        marked = {t.session for t in turns if is_private_session(t.prompt)}
        ids = list({info.id for info in infos} | {t.session for t in turns})
        rows = {
            row["id"]: row
            for chunk in _chunks(ids, 500)
            for row in self.conn.execute(
                f"SELECT * FROM sessions WHERE id IN ({_marks(chunk)})", chunk
            )
        }
        already = {sid for sid, row in rows.items() if row["private"]}
        private = already | marked
        for info in infos:
            values = self._session_values(info, rows.get(info.id), info.id in private)
            names = ", ".join(values)
            if info.id in rows:
                assignments = ", ".join(f"{name} = ?" for name in values)
                self.conn.execute(
                    f"UPDATE sessions SET {assignments} WHERE id = ?", [*values.values(), info.id]
                )
            else:
                self.conn.execute(
                    f"INSERT INTO sessions (id, {names}) VALUES (?, {_marks(values)})",
                    [info.id, *values.values()],
                )
                self.summary.sessions += 1
        for sid in marked - already:
            self.summary.private_sessions += 1
            self._delete_turns("session = ?", sid)
        return private

    def _session_values(self, info: SessionInfo, row: Any, private: bool) -> dict[str, Any]:
        def keep(new: Any, old: Any) -> Any:
            return old if old is not None else new

        handoff = info.handoff
        if handoff:
            redacted = redact(handoff)
            handoff, self.summary.redacted = redacted.text, self.summary.redacted + redacted.count
        if private:
            handoff = None
        title = None
        if info.title:
            redacted = redact(info.title)
            title, self.summary.redacted = redacted.text, self.summary.redacted + redacted.count
        if row is None:
            return {
                "tool": info.tool,
                "native_id": info.native_id,
                "parent": info.parent,
                "cwd": info.cwd,
                "branch": info.branch,
                "started": info.started,
                "ended": info.ended,
                "title": None if private else title,
                "handoff": handoff,
                "private": int(private),
            }
        started = min(filter(None, (row["started"], info.started)), default=None)
        ended = max(filter(None, (row["ended"], info.ended)), default=None)
        return {
            "parent": keep(info.parent, row["parent"]),
            "cwd": keep(info.cwd, row["cwd"]),
            "branch": info.branch or row["branch"],
            "started": started,
            "ended": ended,
            "title": None if private else (title or row["title"]),
            "handoff": None if private else (handoff or row["handoff"]),
            "private": int(private),
        }

    def _insert_turns(self, tool: str, turns: list[Turn]) -> int:
        """Insert the turns not indexed yet; how many were."""
        if not turns:
            return 0
        taken_keys = set(self._existing_keys(tool, [t.key for t in turns]))
        taken_slots = self._existing_slots(list({t.session for t in turns}))
        rows: list[tuple[Any, ...]] = []
        fts: list[tuple[int, str, str, str]] = []
        touched: list[tuple[int, str, str]] = []
        for turn in turns:
            slot = (turn.session, turn.ordinal)
            if turn.key in taken_keys or slot in taken_slots:
                self.summary.duplicates += 1
                continue
            taken_keys.add(turn.key)
            taken_slots.add(slot)
            turn_id, self.next_id = self.next_id, self.next_id + 1
            prompt, answer = redact(turn.prompt), redact(turn.answer)
            self.summary.redacted += prompt.count + answer.count
            tools = " ".join(turn.tools)
            rows.append(
                (
                    turn_id,
                    turn.session,
                    turn.ordinal,
                    tool,
                    turn.key,
                    prompt.text,
                    answer.text,
                    json.dumps(turn.tools),
                    turn.started,
                    turn.ended,
                    turn.cwd,
                    turn.branch,
                    turn.source,
                    turn.start,
                    turn.end,
                )
            )
            fts.append((turn_id, prompt.text, answer.text, tools))
            for kind, paths in (
                ("r", turn.files_read),
                ("e", turn.files_edited),
                ("c", turn.files_cited),
            ):
                touched.extend((turn_id, kind, path) for path in paths)
        self.conn.executemany(
            "INSERT INTO turns (id, session, ordinal, tool, key, prompt, answer, tools, "
            'started, ended, cwd, branch, source, start, "end") '
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        self.conn.executemany(
            "INSERT INTO turns_fts (rowid, prompt, answer, tools) VALUES (?, ?, ?, ?)", fts
        )
        self.conn.executemany("INSERT INTO touched (turn, kind, path) VALUES (?, ?, ?)", touched)
        return len(rows)

    def _existing_keys(self, tool: str, keys: list[str]) -> Iterator[str]:
        for chunk in _chunks(keys, 500):
            sql = f"SELECT key FROM turns WHERE tool = ? AND key IN ({_marks(chunk)})"
            yield from (row[0] for row in self.conn.execute(sql, [tool, *chunk]))

    def _existing_slots(self, sessions: list[str]) -> set[tuple[str, int]]:
        slots: set[tuple[str, int]] = set()
        for chunk in _chunks(sessions, 500):
            sql = f"SELECT session, ordinal FROM turns WHERE session IN ({_marks(chunk)})"
            slots.update((row[0], row[1]) for row in self.conn.execute(sql, chunk))
        return slots

    def _delete_turns(self, where: str, *params: Any) -> int:
        """Delete the turns matching ``where`` with their text and files; how many."""
        ids = f"SELECT id FROM turns WHERE {where}"
        self.conn.execute(f"DELETE FROM turns_fts WHERE rowid IN ({ids})", params)
        self.conn.execute(f"DELETE FROM touched WHERE turn IN ({ids})", params)
        return self.conn.execute(f"DELETE FROM turns WHERE {where}", params).rowcount


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(items: Iterable[object]) -> str:
    return ", ".join("?" for _ in items)


def ingest(
    *,
    full: bool = False,
    extra_dirs: dict[str, tuple[str, ...]] | None = None,
    say: Callable[[str], None] = lambda line: None,
    progress: Callable[[int, int], Callable[[int], None]] | None = None,
) -> IngestSummary:
    """Index every transcript that changed since the last run (all of them with ``full``).

    ``say`` gets notices (a rebuild, waiting for another ingest); ``progress`` is called
    with the number of files and their total size and returns a callback for bytes read.
    """
    from hippo_core.plugins import load_plugins

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
            units, summary.problems = discover(load_plugins().sources(), extra_dirs or {})
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


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
