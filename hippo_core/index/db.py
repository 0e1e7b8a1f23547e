"""Opening the index: WAL mode, the schema version, and the lock ingests share.

The tables are defined with SQLAlchemy (:mod:`hippo_core.index.schema`, compiled into
:mod:`hippo_core.index.ddl`), and SQLAlchemy serves the queries of ``hippo search`` and
``hippo log``. Importing SQLAlchemy costs about 120 ms, four times an interpreter's start,
so the ingest, run after every agent session, creates and writes the tables through the
standard library's driver and never imports it.

An index of an older schema version that :data:`UPGRADES` covers is brought up to this one
in place, by whichever command opens it first: the agents delete their old transcripts, so
a rebuild would lose the turns of the files that are gone. An index of any other version is
rebuilt by the next ingest; a command that only reads it says what to run instead.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from hippo_core.base.errors import HippoError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sqlalchemy import Engine

#: Bumped whenever a table changes; an index of another version is upgraded in place when
#: :data:`UPGRADES` can, else rebuilt by ``ingest``.
SCHEMA_VERSION = 4
#: What brings an index of each older version up to the next one, in order: run in one
#: transaction by the first command of a newer hippo that opens it. Version 4 records what
#: each turn read from outside the project; the turns indexed before keep NULL there,
#: "not recorded", which no ingest can tell apart from "nothing" after the fact.
UPGRADES: dict[int, tuple[str, ...]] = {
    3: ("ALTER TABLE turns ADD COLUMN external TEXT",),
}
LOCK_WAIT_SECONDS = 120.0
#: How long a statement waits for another program's write lock on the index.
BUSY_SECONDS = 30.0
_NOT_SQLITE = -2


def connect(path: Path) -> sqlite3.Connection:
    """A connection with hippo's pragmas: WAL, a busy timeout, NORMAL sync."""
    conn = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.row_factory = sqlite3.Row
    return conn


def _version(path: Path) -> int | None:
    """The schema version recorded at ``path``; None when empty, -2 when not SQLite."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_SECONDS)
        try:
            names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
            if "meta" not in names:
                return None if not names else -1
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return _NOT_SQLITE
    return int(row[0]) if row is not None else -1


def _engine(path: Path) -> Engine:
    from sqlalchemy import create_engine, event
    from sqlalchemy.pool import NullPool

    engine = create_engine(f"sqlite:///{path}", poolclass=NullPool)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.execute("PRAGMA busy_timeout = 30000")

    return engine


def _create(path: Path) -> None:
    """Create the tables (SQLAlchemy's compiled statements), record the version."""
    from hippo_core.index.ddl import STATEMENTS

    conn = connect(path)
    try:
        with conn:
            conn.execute("BEGIN")
            for statement in STATEMENTS:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
            _mark_made(conn)
    finally:
        conn.close()


def _mark_made(conn: sqlite3.Connection) -> None:
    """Give the index a name of its own (meta ``made``), once: what was kept about it
    elsewhere (where a dream's arrivals stood, what a push sent) knows an index made anew
    by ``ingest --full``, whose file may get the old one's inode."""
    conn.execute(  # os.urandom: secrets imports hashlib, which ingest spares itself
        "INSERT INTO meta (key, value) VALUES ('made', ?) ON CONFLICT (key) DO NOTHING",
        (os.urandom(8).hex(),),
    )


def made(conn: sqlite3.Connection) -> str:
    """The index's own name (:func:`_mark_made`); empty for one no ingest has named yet."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'made'").fetchone()
    return str(row[0]) if row is not None else ""


def bump_generation(conn: sqlite3.Connection) -> None:
    """Count one more change to the index (inside the ingest's transaction): what was
    derived from it (a workspace's session records) knows to derive again."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('generation', '1') ON CONFLICT (key) "
        "DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
    )
    _mark_made(conn)  # an index made before it was named gets its name now


def generation(conn: sqlite3.Connection) -> int:
    """How many ingests changed the index (0 for one written before this was counted)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row is not None else 0


def _upgradable(found: int | None) -> bool:
    return found is not None and 0 <= found < SCHEMA_VERSION and found in UPGRADES


def upgrade(path: Path) -> int:
    """Bring the index at ``path`` up to :data:`SCHEMA_VERSION` with :data:`UPGRADES`, in
    one transaction that waits for any ingest's; the version it had (another command may
    have upgraded it meanwhile: then this one changes nothing)."""
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            had = version = int(row[0])
            while version in UPGRADES and version < SCHEMA_VERSION:
                for statement in UPGRADES[version]:
                    conn.execute(statement)
                version += 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()
    return had


def delete_index(path: Path) -> None:
    """Remove the index and its WAL files (``ingest --full``, or a rebuild)."""
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


def open_for_writing(path: Path, say: Callable[[str], None]) -> tuple[sqlite3.Connection, bool]:
    """The index at ``path``, created or rebuilt as needed; True when it starts empty.

    It is owner-only, its folder too: it holds every prompt and answer on the machine.
    """
    found = _version(path) if path.exists() else None
    if _upgradable(found):
        had = upgrade(path)
        if had != SCHEMA_VERSION:
            say(
                f"the index {path} had schema version {had}: brought up to {SCHEMA_VERSION} "
                "in place, every turn kept"
            )
        found = SCHEMA_VERSION
    if found != SCHEMA_VERSION:
        if found is not None:
            reason = (
                "is not a readable SQLite database"
                if found == _NOT_SQLITE
                else f"has schema version {found}, this hippo writes {SCHEMA_VERSION}"
            )
            say(f"the index {path} {reason}: rebuilding it from the transcripts")
        delete_index(path)
    _owner_only(path)
    if found != SCHEMA_VERSION:
        _create(path)
    return connect(path), found != SCHEMA_VERSION


def _owner_only(path: Path) -> None:
    # SQLite makes a database file 0644 less the umask, and its -wal and -shm files with
    # the database's mode: an empty 0600 file made first is an empty database, and an
    # index (or WAL) an earlier hippo left readable is tightened.
    from hippo_core.files.owner_only import owner_only_open

    os.close(owner_only_open(path, os.O_RDWR | os.O_CREAT))
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.close(owner_only_open(f"{path}{suffix}", os.O_RDONLY))


def open_for_reading(path: Path) -> Engine:
    """The index at ``path`` for a command that reads it; one clear error otherwise."""
    if not path.exists():
        raise HippoError(f"no transcript index yet at {path}: run `hippo ingest` first")
    found = _version(path)
    if found == _NOT_SQLITE:
        raise HippoError(
            f"{path} is not a readable SQLite database: run `hippo ingest --full` to rebuild it"
        )
    if _upgradable(found):
        try:
            upgrade(path)
        except sqlite3.Error as exc:
            raise HippoError(
                f"the index {path} has schema {found} and could not be brought up to "
                f"{SCHEMA_VERSION} ({exc}); try again when no other hippo is writing it"
            ) from None
        found = SCHEMA_VERSION
    if found != SCHEMA_VERSION:
        raise HippoError(
            f"the index {path} was written by another version of hippo (schema {found}, "
            f"this hippo reads {SCHEMA_VERSION}): run `hippo ingest --full` to rebuild it"
        )
    return _engine(path)


@contextlib.contextmanager
def ingest_lock(home: Path, say: Callable[[str], None]) -> Iterator[None]:
    """Hold ``$HIPPO_HOME/ingest.lock``: a second ingest waits for the first, then runs.

    Waiting is safe: the second ingest reads the index as the first left it, so nothing is
    read or counted twice. After ``LOCK_WAIT_SECONDS`` it gives up and says so.
    """
    from hippo_core.files.locks import file_lock

    lock_path = home / "ingest.lock"
    notice = "another hippo ingest is running; waiting for it to finish"
    with file_lock(
        lock_path, wait=LOCK_WAIT_SECONDS, on_wait=lambda: say(notice), owner_only=home
    ) as handle:
        if handle is None:
            raise HippoError(
                f"another hippo ingest has held {lock_path} for over "
                f"{LOCK_WAIT_SECONDS:.0f} s; try again when it has finished"
            )
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
