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

Ranking and the linter's counts are queries, not a walk over every note. An index opened
``with_terms`` (``relevance = "bm25"``) also keeps each note's term counts, what BM25 ranks
by, with how many notes hold each term; the others spare every refresh that work.

The index is a cache: a file that is missing, unreadable, from another version of hippo, for
another ``notes_dir`` or kept with or without terms otherwise than asked is rebuilt; a
workspace where it cannot be written gets one in memory.
"""

from __future__ import annotations

# The C module: the sqlite3 package adds date adapters, and its datetime import costs a
# hook about a millisecond. Connections, errors and connect() are the package's own.
import _sqlite3 as sqlite3
import contextlib
import marshal
import os
import time
from collections import Counter

from hippo_core.locate import utf8_name
from hippo_core.notes.links import resolve
from hippo_core.notes.terms import note_terms
from hippo_core.notes.text import LOG_HEADER, singular
from hippo_core.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from os import PathLike

    from hippo_core.notes.note import Note

#: Bumped when the tables or what reading a note yields change, its terms' stems and common
#: words (terms.py) and the headings rule's plural folding among it: an older index is
#: rebuilt, never ranked by stale stems.
FORMAT = "8"
RACY_NS = 2_000_000_000
#: The conventional status of a note that is no longer true (the concepts' "superseded").
SUPERSEDED = "superseded"
#: How a note hippo generates begins: the session log (``hippo log``), never ranked.
GENERATED = LOG_HEADER.encode("utf-8")
BUSY_MS = 10_000
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # A folder's listing: (subfolders, {note file name: (size, mtime_ns, inode) or None}).
    "CREATE TABLE IF NOT EXISTS folders (path TEXT PRIMARY KEY, mtime_ns INTEGER, listing BLOB)",
    # ranked: 0 for a superseded note or the session log, never one of the relevant notes.
    "CREATE TABLE IF NOT EXISTS notes (path TEXT PRIMARY KEY, name TEXT NOT NULL, "
    "title TEXT NOT NULL, first_line TEXT NOT NULL, review_after INTEGER, "
    "length INTEGER NOT NULL, ranked INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS notes_by_name ON notes (name)",
    "CREATE INDEX IF NOT EXISTS notes_by_length ON notes (length)",
    "CREATE INDEX IF NOT EXISTS notes_by_review ON notes (review_after)",
    # A note's title and heading words (each as its singular), with its date: ranking reads
    # this table alone.
    "CREATE TABLE IF NOT EXISTS words (word TEXT, path TEXT, updated INTEGER NOT NULL, "
    "PRIMARY KEY (word, path)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS words_by_path ON words (path)",
    # A note's stemmed terms (terms.py), when kept: its weighted count (title, headings and
    # file name count more) and its count in the body, with the note's length and date, so
    # that BM25 reads this table alone.
    "CREATE TABLE IF NOT EXISTS terms (term TEXT, path TEXT, tf INTEGER NOT NULL, "
    "body INTEGER NOT NULL, length INTEGER NOT NULL, updated INTEGER NOT NULL, "
    "PRIMARY KEY (term, path)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS terms_by_path ON terms (path)",
    # How many notes hold each term (BM25's document frequency), kept as notes change: a
    # count of the terms' rows would read every row of a word most notes have.
    "CREATE TABLE IF NOT EXISTS frequency (term TEXT PRIMARY KEY, notes INTEGER NOT NULL) "
    "WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS links (path TEXT NOT NULL, target TEXT NOT NULL, "
    "dangles INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS links_by_path ON links (path)",
    "CREATE INDEX IF NOT EXISTS links_by_target ON links (target)",
    "CREATE INDEX IF NOT EXISTS links_dangling ON links (dangles) WHERE dangles",
)
_TABLES = ("meta", "folders", "notes", "words", "terms", "frequency", "links")
#: BM25's term saturation and length normalisation. b is low because a long note (a
#: changelog, an index of the others) is long because it holds much, not because it rambles.
K1, B = 1.6, 0.3
#: The figures ``meta`` keeps beside what the index was made as: how many notes, and their
#: length in all.
FIGURES = ("notes", "length")
Stamp = tuple[int, int, int]
Listing = tuple[list[str], dict[str, Stamp | None]]


class NotesIndex:
    """The index of one ``notes_dir``, refreshed when opened (:func:`open_index`)."""

    def __init__(
        self, conn: sqlite3.Connection, notes_dir: str, with_terms: bool, in_memory: bool = False
    ) -> None:
        self.conn = conn
        self.notes_dir = notes_dir
        self.with_terms = with_terms
        self.in_memory = in_memory
        #: The file the index is kept in (None in memory), and whether a watcher said it is
        #: fresh (:mod:`hippo_core.notes.watch`): then the watcher may be asked to rank.
        self.path: str | None = None
        self.watched = False

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

    def shown(self, paths: list[str]) -> list[tuple[str, str]]:
        """Title and first body line of each note of ``paths``, in their order."""
        marks = ",".join("?" * len(paths))
        rows = self.conn.execute(
            f"SELECT path, title, first_line FROM notes WHERE path IN ({marks})", paths
        )
        found = {path: (title, first_line) for path, title, first_line in rows}
        return [found[path] for path in paths]

    def ranked_paths(self, words: list[str], limit: int) -> list[str]:
        """The ``limit`` notes with most of ``words`` (each as its
        :func:`~hippo_core.notes.text.singular`) in their title and headings, best first:
        ties to the most recently updated (undated last), then the path."""
        if not words:
            return []
        marks = ",".join("?" * len(words))
        query = (
            f"SELECT path FROM words WHERE word IN ({marks}) GROUP BY path "
            "ORDER BY count(*) DESC, max(updated) DESC, path LIMIT ?"
        )
        return [row[0] for row in self.conn.execute(query, (*words, limit))]

    def bm25_paths(self, terms: list[str], limit: int) -> list[str]:
        """The ``limit`` notes that BM25 ranks best for ``terms`` (stemmed, as
        :func:`~hippo_core.notes.terms.terms` gives them) over title, headings, body and file
        name, best first: ties to the body's own score, then the most recently updated, then
        the path. An index opened without terms ranks nothing."""
        return [path for path, _score in self.bm25_scored(terms, limit)]

    def bm25_scored(
        self, terms: list[str], limit: int, *, among: list[str] | None = None
    ) -> list[tuple[str, float]]:
        """:meth:`bm25_paths` with each note's score; with ``among``, the scores of those
        notes instead (the ones that have a term of ``terms``, best first)."""
        terms = list(dict.fromkeys(terms))
        if not terms or not self.with_terms or (among is not None and not among):
            return []
        scoring = self._scoring(terms)
        if scoring is None:
            return []
        if among is not None:
            rows = self._scored(scoring, among)
            limit = len(rows)
        elif limit <= 0:
            return []
        else:
            rows = self._best(scoring, limit)
        rows.sort(key=lambda row: (-row[1], -row[2], -row[3], row[0]))
        return [(row[0], row[1]) for row in rows[:limit]]

    def _scored(self, scoring: _Scoring, paths: list[str]) -> list[_Row]:
        """The scores of those of ``paths`` that have a term of the task."""
        values = {**scoring.values, **{f"p{i}": path for i, path in enumerate(paths)}}
        among = ", ".join(f":p{i}" for i in range(len(paths)))
        return self.conn.execute(
            f"SELECT path, {scoring.score('tf')}, {scoring.score('body')}, max(updated) "
            f"FROM terms WHERE {scoring.having} AND path IN ({among}) GROUP BY path",
            values,
        ).fetchall()

    def idf(self, terms: list[str]) -> tuple[dict[str, float], float]:
        """BM25's idf of each of ``terms`` that a note holds, and the notes' mean length."""
        scoring = self._scoring(list(dict.fromkeys(terms))) if self.with_terms else None
        return (scoring.idf, scoring.mean) if scoring is not None else ({}, 1.0)

    def _scoring(self, terms: list[str]) -> _Scoring | None:
        marks = ", ".join("?" * len(terms))
        query = f"SELECT term, notes FROM frequency WHERE term IN ({marks})"
        found = self.conn.execute(query, terms).fetchall()
        if not found:
            return None
        count, length = self._sizes()
        return _Scoring(found, count, max(length / max(count, 1), 1.0))

    def _best(self, scoring: _Scoring, limit: int) -> list[_Row]:
        """The notes BM25 ranks in the first ``limit``, with every note tied with the last
        of them: the best by score alone first, in one pass over the terms' rows (which is
        the cost), then the other keys of those."""
        values = {**scoring.values, "limit": limit + 1}
        top = self.conn.execute(
            f"SELECT path, {scoring.score('tf')} AS score FROM terms WHERE {scoring.having} "
            "GROUP BY path ORDER BY score DESC LIMIT :limit",
            values,
        ).fetchall()
        if len(top) > limit and top[limit][1] == top[limit - 1][1]:
            # A tie across the cut: every note with the last place's score is in the running.
            values["floor"] = top[-1][1]
            return self.conn.execute(
                f"SELECT path, {scoring.score('tf')} AS score, {scoring.score('body')}, "
                f"max(updated) FROM terms WHERE {scoring.having} GROUP BY path "
                "HAVING score >= :floor",
                values,
            ).fetchall()
        return self._scored(scoring, [row[0] for row in top[:limit]])

    def ranked(self, paths: list[str]) -> list[str]:
        """Those of ``paths`` that are notes the block may name (not superseded), in order."""
        if not paths:
            return []
        marks = ",".join("?" * len(paths))
        rows = self.conn.execute(
            f"SELECT path FROM notes WHERE ranked AND path IN ({marks})", paths
        )
        found = {row[0] for row in rows}
        return [path for path in paths if path in found]

    def telling(self, path: str, limit: int) -> list[str]:
        """The ``limit`` terms that best tell the body of the note at ``path`` from the
        other notes (tf-idf: ``(1 + log tf) * log(notes / (1 + notes with the term))``),
        best first; an index opened without terms tells nothing."""
        if not self.with_terms:
            return []
        import math

        count = max(self._sizes()[0], 1)
        rows = self.conn.execute(
            "SELECT t.term, t.body, f.notes FROM terms t JOIN frequency f ON f.term = t.term "
            "WHERE t.path = ? AND t.body",
            (path,),
        )
        weight = {
            term: (1 + math.log(body)) * math.log(count / (1 + notes)) for term, body, notes in rows
        }
        return sorted(weight, key=lambda term: (-weight[term], term))[:limit]

    def _sizes(self) -> tuple[int, int]:
        """How many notes there are and their summed length, as BM25 counts them."""
        rows = self.conn.execute("SELECT key, value FROM meta WHERE key IN ('notes', 'length')")
        sizes = dict(rows.fetchall())
        return int(sizes.get("notes", 0)), int(sizes.get("length", 0))

    def folders(self) -> list[str]:
        """The folders the index holds, relative to the notes folder: ``""`` (the folder
        itself), then ``a/``, ``a/b/`` ... in order."""
        return [row[0] for row in self.conn.execute("SELECT path FROM folders ORDER BY path")]

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
        holders: Counter[str] = Counter()  # how many more notes hold each term
        for path in [*survey.removed, *survey.changed]:
            if self.with_terms:
                rows = conn.execute("SELECT term FROM terms WHERE path = ?", (path,))
                holders.subtract(term for (term,) in rows)
            for table in ("notes", "words", "terms", "links"):
                conn.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
        for note, raw in parsed:
            holders.update(self._store(note, raw))
        if self.with_terms:
            self._count_holders(holders)
        self._resolve_again(
            _affected_targets([*survey.removed, *survey.added]), set(survey.changed)
        )
        for path in survey.changed:
            self._resolve_links_of(path)

    def _count_holders(self, holders: Counter[str]) -> None:
        """Keep what BM25 needs of the whole: how many notes hold each term (``holders``:
        how many more do), how many notes there are and how long."""
        conn = self.conn
        conn.executemany(
            "INSERT INTO frequency (term, notes) VALUES (?, ?) "
            "ON CONFLICT (term) DO UPDATE SET notes = notes + excluded.notes",
            [(term, more) for term, more in holders.items() if more],
        )
        conn.executemany(
            "DELETE FROM frequency WHERE term = ? AND notes <= 0",
            [(term,) for term, more in holders.items() if more < 0],
        )
        count, length = conn.execute("SELECT count(*), total(length) FROM notes").fetchone()
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [("notes", str(count)), ("length", str(int(length)))],
        )

    def _store(self, note: Note, raw: bytes) -> list[str]:
        """Add the rows of one note; the terms it holds, when they are kept."""
        meta = note.meta
        updated = meta.updated.toordinal() if meta.updated else 0  # undated ranks last
        counts = note_terms(note, raw) if self.with_terms else None
        # A superseded note (status: superseded) says what is no longer true, and the
        # session log is hippo's own list of sessions, matching every task: both are kept,
        # linted and linked, but never ranked as relevant, so their words leave the block.
        superseded = (meta.status or "").strip().lower() == SUPERSEDED
        ranked = not superseded and not raw.startswith(GENERATED)
        self.conn.execute(
            "INSERT INTO notes (path, name, title, first_line, review_after, length, ranked, "
            "data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                note.path,
                note.path.rsplit("/", 1)[-1],
                note.title,
                note.first_line,
                meta.review_after.toordinal() if meta.review_after else None,
                counts.length if counts else 0,
                int(ranked),
                marshal.dumps(note.to_json()),
            ),
        )
        self.conn.executemany(
            "INSERT INTO words (word, path, updated) VALUES (?, ?, ?)",
            [(key, note.path, updated) for key in _keys(note.vocabulary) if ranked],
        )
        if counts and ranked:
            self.conn.executemany(
                "INSERT INTO terms (term, path, tf, body, length, updated) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (term, note.path, tf, counts.body[term], counts.length, updated)
                    for term, tf in counts.weighted.items()
                ],
            )
        self.conn.executemany(
            "INSERT INTO links (path, target, dangles) VALUES (?, ?, 0)",
            [(note.path, target) for target, _line in note.links],
        )
        return list(counts.weighted) if counts and ranked else []

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
            if name.startswith(".") or not utf8_name(name):
                continue  # hidden, or a name no note can have (doctor names those)
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

    def parse(self, path: str) -> tuple[Note, bytes]:
        """Read and parse a note, with its bytes; one that cannot be read is tried again next
        time (its permissions may change without its stamp moving)."""
        from hippo_core.notes.note import parse_note, unreadable_note

        try:
            with open(self.root + path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            folder, _, name = path.rpartition("/")
            self.folders[folder + "/" if folder else ""][1][1][name] = None
            return unreadable_note(path, exc.strerror or type(exc).__name__), b""
        return parse_note(path, raw), raw


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


class _Scoring:
    """BM25 for one task's terms: each term's idf (``found``: the terms with how many notes
    hold each, of ``count`` notes of ``mean`` length), and the SQL that scores a note."""

    def __init__(self, found: list[tuple[str, int]], count: int, mean: float) -> None:
        import math

        self.mean = mean
        self.idf = {term: math.log(1 + (count - df + 0.5) / (df + 0.5)) for term, df in found}
        self.values: dict[str, object] = {"mean": mean}
        cases = []
        for i, (term, idf) in enumerate(self.idf.items()):
            self.values[f"w{i}"], self.values[f"i{i}"] = term, idf
            cases.append(f"WHEN :w{i} THEN :i{i}")
        self.having = f"term IN ({', '.join(f':w{i}' for i in range(len(self.idf)))})"
        self._idf = f"CASE term {' '.join(cases)} END"

    def score(self, column: str) -> str:
        # idf * tf / (tf + K1 * (1 - B + B * length / mean)), summed over the terms; the
        # factor K1 + 1 is the same for all and left out. Rounded, so that sums of the same
        # terms in another order tie and the next key decides.
        norm = f"{K1} * (1 - {B} + {B} * length / :mean)"
        return f"round(sum({self._idf} * {column} / ({column} + {norm})), 9)"


#: A note as ranking scores it: path, score, the body's own score, date.
_Row = tuple[str, float, float, int]


def _keys(vocabulary: frozenset[str]) -> list[str]:
    """A note's title and heading words as the headings rule matches them, each key once."""
    return sorted({singular(word) for word in vocabulary})


def _affected_targets(paths: list[str]) -> set[str]:
    """The link targets whose resolution a note at one of ``paths`` coming or going changes."""
    targets = set()
    for path in paths:
        stem = path.removesuffix(".md")
        targets.add(stem)
        targets.add(stem.rsplit("/", 1)[-1])
    return targets


def open_index(
    notes_dir: str | PathLike[str], path: str | PathLike[str] | None, *, with_terms: bool = False
) -> NotesIndex:
    """The index of ``notes_dir`` kept at ``path``, refreshed; rebuilt or in memory as needed
    (``path`` None: in memory). ``with_terms``: keep what :meth:`NotesIndex.bm25_paths`
    ranks by."""
    root = os.fspath(notes_dir)
    wanted = _wanted(root, with_terms)
    if path is not None:
        index = _on_disk(os.fspath(path), root, wanted, with_terms)
        if index is not None:
            return index
    memory = sqlite3.connect(":memory:", isolation_level=None)
    index = NotesIndex(_prepare(memory, wanted), root, with_terms, in_memory=True)
    index.refresh()
    return index


def _wanted(notes_dir: str, with_terms: bool) -> dict[str, str]:
    """What an index of ``notes_dir`` is made as: this format and version of hippo, the
    folder, and whether it keeps terms."""
    return {
        "format": FORMAT,
        "hippo": __version__,
        "notes_dir": notes_dir,
        "terms": "kept" if with_terms else "not kept",
    }


def same_index(index: NotesIndex, with_terms: bool) -> bool:
    """Whether ``index``'s file is still made as it was opened, keeping terms as asked:
    another process (another version of hippo) may have rebuilt it since."""
    try:
        found = _identity(index.conn)
    except sqlite3.Error:
        return False
    return index.with_terms == with_terms and found == _wanted(index.notes_dir, with_terms)


def _on_disk(
    path: str, notes_dir: str, wanted: dict[str, str], with_terms: bool
) -> NotesIndex | None:
    """The index kept at ``path``, refreshed; None where it cannot be kept there."""
    from hippo_core.notes.watched import watched_fresh

    for attempt in range(2):
        try:
            index = NotesIndex(_connect(path, wanted), notes_dir, with_terms)
            index.path = path
            index.watched = not attempt and watched_fresh(path, notes_dir, with_terms)
            if not index.watched:
                index.refresh()  # no watcher said it is fresh: look at every note
            return index
        except OSError:
            break  # the cache folder cannot be made: a read-only workspace
        except sqlite3.DatabaseError as exc:
            if attempt or not _damaged(exc):
                break  # read-only, or held by a stuck process: build it in memory
            _delete(path)  # torn or not a database: it is only a cache
    return None


def _connect(path: str, wanted: dict[str, str]) -> sqlite3.Connection:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        return _prepare(conn, wanted)
    except BaseException:
        conn.close()
        raise


def _prepare(conn: sqlite3.Connection, wanted: dict[str, str]) -> sqlite3.Connection:
    """Tables in place, and empty unless they were written as ``wanted`` says (this version,
    this folder, terms kept or not)."""
    conn.execute("PRAGMA synchronous = OFF")  # a cache: a torn file is rebuilt
    try:
        found = _identity(conn)
    except sqlite3.OperationalError:
        found = {}  # no tables yet
    if found == wanted:
        return conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        with contextlib.suppress(sqlite3.OperationalError):
            if _identity(conn) == wanted:
                conn.execute("COMMIT")  # another process made it while this one waited
                return conn
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", wanted.items())
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return conn


def _identity(conn: sqlite3.Connection) -> dict[str, str]:
    """What the index was made as (its meta without the figures BM25 keeps there)."""
    marks = ", ".join("?" * len(FIGURES))
    rows = conn.execute(f"SELECT key, value FROM meta WHERE key NOT IN ({marks})", FIGURES)
    return dict(rows.fetchall())


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    message = str(exc).lower()
    return "malformed" in message or "not a database" in message or "corrupt" in message


def _delete(path: str) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.unlink(path + suffix)
