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

from hippo_core.files.names import utf8_name
from hippo_core.notes.fields import BODY, FIELDS, Scoring
from hippo_core.notes.terms import note_terms
from hippo_core.notes.text import LOG_HEADER, singular
from hippo_core.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from os import PathLike

    from hippo_core.notes.note import Note

#: Bumped when the tables or what reading a note yields change, its terms' stems and common
#: words (terms.py), its fields (fields.py) and the headings rule's plural folding among it:
#: an older index is rebuilt, never ranked by stale stems. Two lines of work each made a
#: format 8 (the fields; the session log left unranked): 9 holds both, so any 8 is rebuilt.
FORMAT = "9"
RACY_NS = 2_000_000_000
#: The conventional status of a note that is no longer true (the concepts' "superseded").
SUPERSEDED = "superseded"
#: How a note hippo generates begins: the session log (``hippo log``), never ranked.
GENERATED = LOG_HEADER.encode("utf-8")
BUSY_MS = 10_000
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # A folder's listing: its subfolders, and {note file name: (size, mtime_ns, inode) or
    # None}, with how many notes and how many Nones (a stamp not kept), so that a refresh
    # that looks at some notes only reads the listings of those.
    "CREATE TABLE IF NOT EXISTS folders (path TEXT PRIMARY KEY, mtime_ns INTEGER, "
    "notes INTEGER NOT NULL, unsure INTEGER NOT NULL, dirs BLOB NOT NULL, listing BLOB)",
    # ranked: 0 for a superseded note or the session log, never one of the relevant notes.
    "CREATE TABLE IF NOT EXISTS notes (path TEXT PRIMARY KEY, name TEXT NOT NULL, "
    "title TEXT NOT NULL, first_line TEXT NOT NULL, review_after INTEGER, "
    + "".join(f"{f.name}_length INTEGER NOT NULL, " for f in FIELDS)
    + "ranked INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS notes_by_name ON notes (name)",
    "CREATE INDEX IF NOT EXISTS notes_by_review ON notes (review_after)",
    # A note's title and heading words (each as its singular), with its date: ranking reads
    # this table alone.
    "CREATE TABLE IF NOT EXISTS words (word TEXT, path TEXT, updated INTEGER NOT NULL, "
    "PRIMARY KEY (word, path)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS words_by_path ON words (path)",
    # A note's stemmed terms (terms.py), when kept: the count of each in each field
    # (fields.py), with the fields' lengths in the note and its date, so that BM25 reads
    # this table alone.
    "CREATE TABLE IF NOT EXISTS terms (term TEXT, path TEXT, "
    + "".join(f"{f.name} INTEGER NOT NULL, {f.name}_length INTEGER NOT NULL, " for f in FIELDS)
    + "updated INTEGER NOT NULL, PRIMARY KEY (term, path)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS terms_by_path ON terms (path)",
    # The rows of the terms in a note's title: where ranking without a watcher looks first.
    "CREATE INDEX IF NOT EXISTS terms_in_titles ON terms (term, title, title_length) WHERE title",
    # How many notes hold each term (BM25's document frequency), in all and in each field,
    # kept as notes change: a count of the terms' rows would read every row of a word most
    # notes have. With, for each field, the largest count of the term in a note and the
    # shortest length of a note that holds it there, as notes came: bounds of what the term
    # can give a note, which stay bounds as notes go.
    "CREATE TABLE IF NOT EXISTS frequency (term TEXT PRIMARY KEY, notes INTEGER NOT NULL, "
    + "".join(
        f"{f.name} INTEGER NOT NULL, {f.name}_most INTEGER NOT NULL, "
        f"{f.name}_least INTEGER NOT NULL, "
        for f in FIELDS
    )[:-2]
    + ") WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS links (path TEXT NOT NULL, target TEXT NOT NULL, "
    "dangles INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS links_by_path ON links (path)",
    "CREATE INDEX IF NOT EXISTS links_by_target ON links (target)",
    "CREATE INDEX IF NOT EXISTS links_dangling ON links (dangles) WHERE dangles",
)
_TABLES = ("meta", "folders", "notes", "words", "terms", "frequency", "links")
#: The figures ``meta`` keeps beside what the index was made as: how many notes, and each
#: field's length in all.
FIGURES = ("notes", *(f"{f.name}_length" for f in FIELDS))
#: And where the next refresh that looks at some notes only starts (:meth:`refresh`).
KEPT = (*FIGURES, "looked")
#: A note's length in a field that no note holding a term has: above any real one.
LONGEST = 1 << 40
#: Far above where scores computed in Python and by SQLite may differ (their last bits),
#: and above the 1e-9 that scores are rounded to: a note whose bound comes this close to
#: the last place's score is scored.
MARGIN = 2e-9
#: A refresh that looks at some notes only (``looks``) looks at a tenth of them at least,
#: so that a run of such refreshes looks at every note within this many.
SWEEP = 10
#: How many of the notes with a task word in their titles are scored first, at least.
FIRST_SCORED = 16
#: How many paths one query scores at most (SQLite's limit on variables is far above).
CHUNK = 500
Stamp = tuple[int, int, int]
#: A folder's notes, each with its stamp or None (looked at again next time).
Files = dict[str, "Stamp | None"]
#: What the index knows of a folder without reading its listing: its mtime (-1: to be
#: listed again), how many notes it holds and how many of their stamps are None, and its
#: subfolders.
Known = tuple[int, int, int, list[str]]


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
        #: fresh (:mod:`hippo_core.context.watch`): then the watcher may be asked to rank.
        self.path: str | None = None
        self.watched = False
        #: The notes the last refresh looked at, when it looked at some only (``looks``).
        self.looked: Looked | None = None
        self._seen: _Survey | None = None

    def refresh(self, looks: int | None = None) -> None:
        """Bring the index up to date with the files: stat everything, read what changed.

        With ``looks``, every folder is stat-ed (a note added, removed or renamed is seen)
        but only ``looks`` of the notes in folders whose entries did not change are, or a
        tenth of all the notes when that is more: the next ones after those the last such
        refresh looked at, so that a run of them looks at every note within :data:`SWEEP`.
        :meth:`fresh` then tells whether notes it did not look at are as their files are."""
        window = None
        if looks is not None:
            found = self.conn.execute("SELECT value FROM meta WHERE key = 'looked'").fetchone()
            start = int(found[0]) if found and str(found[0]).isdigit() else 0
            window = (start, looks)
        version = self._version()
        seen = self._survey(window)
        if seen.dirty:
            with self._writing():
                if self._version() != version:  # another process refreshed meanwhile
                    seen = self._survey(window)
                self._apply(seen)
                self._moved(seen)
        elif seen.window is not None:
            self._moved(seen, wait=False)
        self.looked = seen.looked
        self._seen = seen

    def fresh(self, paths: list[str]) -> bool:
        """Whether the notes of ``paths`` are as their files are; when one the last refresh
        did not look at has changed, every note is looked at (:meth:`refresh`) and False
        said: what was ranked from the index as it was should be ranked again."""
        looked, seen = self.looked, self._seen
        if looked is None or seen is None or all(path in looked for path in paths):
            return True
        for path in paths:
            if path in looked:
                continue
            folder, _, name = path.rpartition("/")
            old = seen.files(folder + "/" if folder else "").get(name)
            try:
                stat = os.lstat(os.path.join(self.notes_dir, path))
            except OSError:
                old = None
            if old is None or (stat.st_size, stat.st_mtime_ns, stat.st_ino) != old:
                self.refresh()
                return False
        return True

    def _moved(self, seen: _Survey, wait: bool = True) -> None:
        """Keep where the next refresh with ``looks`` starts: after the notes this one
        looked at. Without ``wait``, in a write of its own that is skipped when another
        process holds the index (the next refresh looks at the same notes again)."""
        if seen.window is None:
            return
        start, count = seen.window
        value = str((start + count) % max(seen.total, 1))
        if wait:
            self.conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('looked', ?)", (value,)
            )
            return
        self.conn.execute("PRAGMA busy_timeout = 0")
        try:
            with self._writing():
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('looked', ?)", (value,)
                )
        except sqlite3.OperationalError:
            pass  # busy: another process writes the index now
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")

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
        """The ``limit`` notes that BM25 over their fields (:mod:`~hippo_core.notes.fields`)
        ranks best for ``terms`` (stemmed, as :func:`~hippo_core.notes.terms.terms` gives
        them), best first: ties to the body's own score, then the most recently updated, then
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
        scoring = self.scoring(terms)
        if scoring is None:
            return []
        if among is not None:
            rows = self._scored(scoring, among)
            limit = len(rows)
        elif limit <= 0:
            return []
        else:
            rows = self._by_titles(scoring, limit) or self._best(scoring, limit)
        rows.sort(key=lambda row: (-row[1], -row[2], -row[3], row[0]))
        return [(row[0], row[1]) for row in rows[:limit]]

    def _scored(self, scoring: Scoring, paths: list[str]) -> list[_Row]:
        """The scores of those of ``paths`` that have a term of the task."""
        values = {**scoring.values, **{f"p{i}": path for i, path in enumerate(paths)}}
        among = ", ".join(f":p{i}" for i in range(len(paths)))
        return self.conn.execute(
            f"SELECT path, {scoring.sql()}, {scoring.sql(BODY)}, max(updated) "
            f"FROM terms WHERE {scoring.having} AND path IN ({among}) GROUP BY path",
            values,
        ).fetchall()

    def scoring(self, terms: list[str]) -> Scoring | None:
        """BM25 over the fields for ``terms`` (each once), from how many notes hold each;
        None when no note holds any of them (or no terms are kept)."""
        if not self.with_terms or not terms:
            return None
        columns = ", ".join(field.name for field in FIELDS)
        marks = ", ".join("?" * len(terms))
        query = f"SELECT term, {columns} FROM frequency WHERE term IN ({marks}) ORDER BY term"
        found = [(row[0], tuple(row[1:])) for row in self.conn.execute(query, terms)]
        if not found:
            return None
        count, lengths = self._sizes()
        means = tuple(max(length / max(count, 1), 1.0) for length in lengths)
        return Scoring(found, count, means)

    def _best(self, scoring: Scoring, limit: int) -> list[_Row]:
        """The notes BM25 ranks in the first ``limit``, with every note tied with the last
        of them: the best by score alone first, in one pass over the terms' rows (which is
        the cost), then the other keys of those."""
        values = {**scoring.values, "limit": limit + 1}
        top = self.conn.execute(
            f"SELECT path, {scoring.sql()} AS score FROM terms WHERE {scoring.having} "
            "GROUP BY path ORDER BY score DESC LIMIT :limit",
            values,
        ).fetchall()
        if len(top) > limit and top[limit][1] == top[limit - 1][1]:
            # A tie across the cut: every note with the last place's score is in the running.
            values["floor"] = top[-1][1]
            return self.conn.execute(
                f"SELECT path, {scoring.sql()} AS score, {scoring.sql(BODY)}, "
                f"max(updated) FROM terms WHERE {scoring.having} GROUP BY path "
                "HAVING score >= :floor",
                values,
            ).fetchall()
        return self._scored(scoring, [row[0] for row in top[:limit]])

    def _by_titles(self, scoring: Scoring, limit: int) -> list[_Row] | None:
        """:meth:`_best` from the notes with a term of the task in their titles, when it can
        be told from them alone; None when it cannot (then every note is scored).

        A note's score is what its title gives plus what its headings and body give, and the
        latter is at most the sum of each term's :meth:`~Scoring.ceiling` in those fields.
        Scored in order of what their titles give, the notes whose title and that ceiling
        together cannot reach the last place's score are left out; when the ceiling alone
        cannot reach it, no note without a term in its title can either, and the notes
        scored are every note in the running. The cost is then the titles' rows, a few per
        note that has a task word in its title, not every row of a word most notes have."""
        bounds = ", ".join(f"{f.name}_most, {f.name}_least" for f in FIELDS[1:])
        rest = 0.0
        for term, *found in self.conn.execute(
            f"SELECT term, {bounds} FROM frequency WHERE {scoring.having}", scoring.values
        ):
            for f in range(1, len(FIELDS)):
                rest += scoring.ceiling(term, f, found[2 * f - 2], found[2 * f - 1])
        # What each note's title gives, summed in SQL over the titles' rows alone, best
        # first: the first few are scored, then the others read on while they may count.
        titles = self.conn.execute(
            f"SELECT path, {scoring.sql(FIELDS[0])} AS given FROM terms INDEXED BY "
            f"terms_in_titles WHERE {scoring.having} AND title GROUP BY path "
            "ORDER BY given DESC",
            scoring.values,
        )
        first = titles.fetchmany(max(FIRST_SCORED, 2 * limit))
        rows = self._scored(scoring, [path for path, _given in first])
        floor = _last_place(rows, limit)
        if floor is None or rest >= floor - MARGIN:
            return None  # a note with no task word in its title may be in the running
        # The others whose title and the ceiling together may reach the last place (the
        # titles' sums are rounded to 9 places: a margin more).
        least = floor - rest - 2 * MARGIN
        more = []
        for path, given in titles:
            if given < least:
                break
            more.append(path)
        for start in range(0, len(more), CHUNK):
            rows += self._scored(scoring, more[start : start + CHUNK])
        return rows

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

    def _sizes(self) -> tuple[int, tuple[int, ...]]:
        """How many notes there are and each field's summed length, as BM25 counts them."""
        marks = ", ".join("?" * len(FIGURES))
        rows = self.conn.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", FIGURES)
        sizes = dict(rows.fetchall())
        lengths = tuple(int(sizes.get(key, 0)) for key in FIGURES[1:])
        return int(sizes.get("notes", 0)), lengths

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

    def _survey(self, window: tuple[int, int] | None = None) -> _Survey:
        rows = self.conn.execute("SELECT path, mtime_ns, notes, unsure, dirs FROM folders")
        known = {row[0]: (row[1], row[2], row[3], marshal.loads(row[4])) for row in rows}
        survey = _Survey(self.notes_dir, known, time.time_ns() - RACY_NS, window, self._listing)
        needed = survey.listings_needed()
        for start in range(0, len(needed), CHUNK):  # read ahead, a query for many folders
            some = needed[start : start + CHUNK]
            marks = ", ".join("?" * len(some))
            query = f"SELECT path, listing FROM folders WHERE path IN ({marks})"
            survey.read(
                {path: marshal.loads(listing) for path, listing in self.conn.execute(query, some)}
            )
        survey.walk()
        return survey

    def _listing(self, folder: str) -> Files:
        """The notes of ``folder`` with their stamps, as the index has them."""
        row = self.conn.execute("SELECT listing FROM folders WHERE path = ?", (folder,)).fetchone()
        found: Files = marshal.loads(row[0]) if row and row[0] is not None else {}
        return found

    def _version(self) -> int:
        """Changes when another connection (another process) commits to the index."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """The queries inside as one read transaction: one lock and one look at whether
        another process changed the file, where each query alone would take its own (a few
        system calls each, which a ranking's dozen queries feel). Inside a transaction
        already, as it is."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

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
        conn.executemany("DELETE FROM folders WHERE path = ?", [(path,) for path in survey.gone])
        conn.executemany(
            "INSERT OR REPLACE INTO folders (path, mtime_ns, notes, unsure, dirs, listing) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    path,
                    mtime,
                    len(files),
                    sum(1 for stamp in files.values() if stamp is None),
                    marshal.dumps(dirs),
                    marshal.dumps(files),
                )
                for path, (mtime, dirs, files) in survey.rewritten.items()
            ],
        )
        went = [*survey.removed, *survey.changed]
        gone = self._holders(went) if self.with_terms else {}  # before their rows go
        for path in went:
            for table in ("notes", "words", "terms", "links"):
                conn.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
        for note, raw in parsed:
            self._store(note, raw)
        if self.with_terms:
            self._count_holders(gone, self._holders([note.path for note, _ in parsed]))
        self._resolve_again(
            _affected_targets([*survey.removed, *survey.added]), set(survey.changed)
        )
        for path in survey.changed:
            self._resolve_links_of(path)

    def _holders(self, paths: list[str]) -> dict[str, list[int]]:
        """What the terms rows of the notes of ``paths`` give the frequency table: for each
        term, how many of those notes hold it, then for each field how many hold it there,
        the largest count there and the shortest length there (:data:`LONGEST` for none);
        summed in SQL, a query a few hundred notes."""
        parts = []
        for field in FIELDS:
            name = field.name
            parts.append(
                f"total({name} > 0), max({name}), "
                f"min(CASE WHEN {name} THEN {name}_length ELSE {LONGEST} END)"
            )
        found: dict[str, list[int]] = {}
        for start in range(0, len(paths), CHUNK):
            some = paths[start : start + CHUNK]
            marks = ", ".join("?" * len(some))
            query = (
                f"SELECT term, count(*), {', '.join(parts)} FROM terms "
                f"WHERE path IN ({marks}) GROUP BY term"
            )
            for term, *row in self.conn.execute(query, some):
                had = found.get(term)
                if had is None:
                    found[term] = [int(value) for value in row]
                    continue
                had[0] += row[0]
                for at in range(1, len(row), 3):
                    had[at] += int(row[at])
                    had[at + 1] = max(had[at + 1], row[at + 1])
                    had[at + 2] = min(had[at + 2], row[at + 2])
        return found

    def _count_holders(self, gone: dict[str, list[int]], came: dict[str, list[int]]) -> None:
        """Keep what BM25 needs of the whole: how many notes hold each term, in all and in
        each field (the rows of the notes that went, ``gone``, and of those that came,
        ``came``, as :meth:`_holders` gives them), with each field's bounds grown by the
        notes that came; how many notes there are and each field's length in all."""
        conn = self.conn
        names = [field.name for field in FIELDS]
        columns = ", ".join(f"{name}, {name}_most, {name}_least" for name in names)
        counted = ", ".join(f"{name} = {name} + excluded.{name}" for name in names)
        most = ", ".join(f"{name}_most = max({name}_most, excluded.{name}_most)" for name in names)
        least = ", ".join(
            f"{name}_least = min({name}_least, excluded.{name}_least)" for name in names
        )
        none = [0, *([0, 0, LONGEST] * len(FIELDS))]
        rows, fewer = [], []
        for term in {**gone, **came}:
            new, old = came.get(term, none), gone.get(term, none)
            row: list[object] = [term, new[0] - old[0]]
            for at in range(1, len(new), 3):
                row += [new[at] - old[at], new[at + 1], new[at + 2]]
            rows.append(row)
            if new[0] < old[0]:
                fewer.append((term,))
        marks = ", ".join("?" * (2 + 3 * len(FIELDS)))
        conn.executemany(
            f"INSERT INTO frequency (term, notes, {columns}) VALUES ({marks}) "
            f"ON CONFLICT (term) DO UPDATE SET notes = notes + excluded.notes, {counted}, "
            f"{most}, {least}",
            rows,
        )
        conn.executemany("DELETE FROM frequency WHERE term = ? AND notes <= 0", fewer)
        totals = ", ".join(f"total({name}_length)" for name in names)
        count, *lengths = conn.execute(f"SELECT count(*), {totals} FROM notes").fetchone()
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [("notes", str(count))]
            + [(key, str(int(length))) for key, length in zip(FIGURES[1:], lengths, strict=True)],
        )

    def _store(self, note: Note, raw: bytes) -> None:
        """Add the rows of one note (its terms' when they are kept)."""
        meta = note.meta
        updated = meta.updated.toordinal() if meta.updated else 0  # undated ranks last
        counts = note_terms(note, raw) if self.with_terms else None
        # A superseded note (status: superseded) says what is no longer true, and the
        # session log is hippo's own list of sessions, matching every task: both are kept,
        # linted and linked, but never ranked as relevant, so their words leave the block.
        superseded = (meta.status or "").strip().lower() == SUPERSEDED
        ranked = not superseded and not raw.startswith(GENERATED)
        fields = (counts.title, counts.headings, counts.body) if counts else ()
        lengths = tuple(sum(field.values()) for field in fields) or (0,) * len(FIELDS)
        lengths_of = "".join(f"{field.name}_length, " for field in FIELDS)
        self.conn.execute(
            f"INSERT INTO notes (path, name, title, first_line, review_after, {lengths_of}"
            f"ranked, data) VALUES (?, ?, ?, ?, ?, {'?, ' * len(FIELDS)}?, ?)",
            (
                note.path,
                note.path.rsplit("/", 1)[-1],
                note.title,
                note.first_line,
                meta.review_after.toordinal() if meta.review_after else None,
                *lengths,
                int(ranked),
                marshal.dumps(note.to_json()),
            ),
        )
        self.conn.executemany(
            "INSERT INTO words (word, path, updated) VALUES (?, ?, ?)",
            [(key, note.path, updated) for key in _keys(note.vocabulary) if ranked],
        )
        if counts and ranked:
            title, headings, body = counts.title, counts.headings, counts.body
            length_t, length_h, length_b = lengths
            path = note.path
            columns = "".join(f"{field.name}, {field.name}_length, " for field in FIELDS)
            self.conn.executemany(
                f"INSERT INTO terms (term, path, {columns}updated) "
                f"VALUES (?, ?, {'?, ?, ' * len(FIELDS)}?)",
                [
                    (
                        term,
                        path,
                        *(title.get(term, 0), length_t),
                        *(headings.get(term, 0), length_h),
                        *(body.get(term, 0), length_b),
                        updated,
                    )
                    for term in {**title, **headings, **body}
                ],
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
        from hippo_core.notes.links import resolve

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
    """What the files look like now, against what the index recorded of them.

    A folder's listing is read from the index (``listing``) only when its notes are
    looked at. With ``window`` (a start and a count), only that many of the notes in
    folders whose entries did not change are stat-ed, from that place in the order of a
    walk (and on from the first when it ends); every other note of those folders keeps the
    stamp it had, and :attr:`looked` names the notes that were looked at."""

    def __init__(
        self,
        notes_dir: str,
        known: dict[str, Known],
        racy: int,
        window: tuple[int, int] | None,
        listing: Callable[[str], Files],
    ) -> None:
        self.root = os.path.join(notes_dir, "")
        self.known = known
        self.racy = racy
        self._listing = listing
        self._read: dict[str, Files] = {}
        #: The folders whose rows change: their mtime (-1: to list again), subfolders and
        #: notes.
        self.rewritten: dict[str, tuple[int, list[str], Files]] = {}
        self.gone: list[str] = []  # folders no longer there (or no longer reached)
        self.changed: list[str] = []  # notes to read again: new ones, or with another stamp
        self.added: list[str] = []  # of those, the new ones
        self.removed: list[str] = []
        self.total = sum(notes for _mtime, notes, _unsure, _dirs in known.values())
        if window is not None:  # at least a tenth of the notes: each within SWEEP calls
            window = (window[0], max(window[1], -(-self.total // SWEEP)))
        self.window = window if window is not None and window[1] < self.total else None
        #: The notes looked at when not all were; None when every note was.
        self.looked: Looked | None = None if self.window is None else Looked()
        self._offset = 0  # where the walk is in the order of every note known
        self._walked: set[str] = set()

    def listings_needed(self) -> list[str]:
        """The known folders whose listings the walk will read, as far as the index can
        tell without listing a folder: each whose notes the window reaches or that holds a
        note whose stamp was not kept (all of them without a window)."""
        if self.window is None:
            return list(self.known)
        needed, offset, stack = [], 0, [""]
        while stack:
            folder = stack.pop()
            old = self.known.get(folder)
            if old is None:
                continue
            if old[2] or self._spans(offset, old[1]):
                needed.append(folder)
            offset += old[1]
            stack.extend(f"{folder}{name}/" for name in reversed(old[3]))
        return needed

    def read(self, listings: dict[str, Files]) -> None:
        """Take the listings of folders read ahead (:meth:`listings_needed`)."""
        self._read.update(listings)

    def _spans(self, first: int, count: int) -> list[tuple[int, int]]:
        """The parts of a folder's notes (``count`` of them, the first at offset ``first``
        of the walk) that the window reaches, as ranges of their places in the folder."""
        if self.window is None:
            return [(0, count)]
        start, size = self.window
        spans = []
        # The window is the offsets start .. start + size, and on from 0 when it wraps.
        for low in (start, start - self.total):
            begin, end = max(first, low), min(first + count, low + size)
            if begin < end:
                spans.append((begin - first, end - first))
        return spans

    @property
    def dirty(self) -> bool:
        return bool(self.changed or self.removed or self.rewritten or self.gone)

    def files(self, folder: str) -> Files:
        """The notes of ``folder`` with their stamps, as this survey leaves them."""
        if folder in self.rewritten:
            return self.rewritten[folder][2]
        if folder not in self._read:
            self._read[folder] = self._listing(folder)
        return self._read[folder]

    def walk(self) -> None:
        stack = [""]
        while stack:
            folder = stack.pop()
            dirs = self._folder(folder)
            if dirs is not None:
                stack.extend(f"{folder}{name}/" for name in reversed(dirs))
        for folder in self.known:
            if folder not in self._walked:  # gone, or no longer a folder one can list
                self.gone.append(folder)
                self.removed.extend(folder + name for name in self.files(folder))

    def _folder(self, folder: str) -> list[str] | None:
        where = self.root + folder
        try:
            mtime = os.stat(where).st_mtime_ns
        except OSError:
            return None
        self._walked.add(folder)
        old = self.known.get(folder)
        first = self._offset
        self._offset += old[1] if old else 0
        if old is not None and old[0] == mtime:
            chosen = self._chosen(folder, old, first)
            if chosen is None or chosen:
                checked = self._check(folder, self.files(folder), chosen)
                if checked is not None:
                    self.rewritten[folder] = (mtime, old[3], checked)
            return old[3]
        scanned = self._scan(folder, where, self.files(folder) if old else {})
        if scanned is None:
            return None
        dirs, files = scanned
        if self.looked is not None:
            self.looked.folders.add(folder)
        # A folder changed just now may change again within its mtime's tick: list it next time.
        self.rewritten[folder] = (mtime if mtime < self.racy else -1, dirs, files)
        return dirs

    def _chosen(self, folder: str, old: Known, first: int) -> list[str] | None:
        """The notes of a folder whose entries did not change to stat: those in the window,
        and any whose stamp was not kept (changed within the racy window, or unreadable);
        None for all of them (no window)."""
        if self.window is None or self.looked is None:
            return None
        spans = self._spans(first, old[1])
        if spans == [(0, old[1])]:
            self.looked.folders.add(folder)  # the window holds the whole folder
            return None
        if not spans and not old[2]:
            return []  # neither in the window nor unsure: its listing is not even read
        files = self.files(folder)
        names = list(files)
        chosen = [name for begin, end in spans for name in names[begin:end]]
        if old[2]:
            taken = set(chosen)
            chosen += [name for name, stamp in files.items() if stamp is None and name not in taken]
        self.looked.paths.update(folder + name for name in chosen)
        return chosen

    def _check(self, folder: str, files: Files, chosen: list[str] | None) -> Files | None:
        """Stat the notes of a folder whose entries did not change (those of ``chosen``,
        all of them when None); its notes with their new stamps, or None when each asked
        note was as it was."""
        lstat = os.lstat
        asked = files if chosen is None else {name: files[name] for name in chosen}
        # Stat-ing by name in an open folder spares the kernel walking the whole path each time.
        with _opened(self.root + folder) as (prefix, folder_fd):
            try:
                for name, old in asked.items():  # the usual case: every note as it was
                    stat = lstat(prefix + name, dir_fd=folder_fd)
                    if (
                        old is None
                        or stat.st_mtime_ns != old[1]
                        or stat.st_size != old[0]
                        or stat.st_ino != old[2]
                    ):
                        break
                else:
                    return None
            except OSError:
                pass
            return self._recheck(folder, files, prefix, folder_fd, asked)

    def _recheck(
        self, folder: str, files: Files, prefix: str, folder_fd: int | None, asked: Files
    ) -> Files:
        """:meth:`_check` for a folder where a note changed, came within the racy window or
        went: each asked note's stamp, and what changed (the others as they were)."""
        found: Files = {}
        racy, lstat = self.racy, os.lstat
        for name, old in files.items():
            if name not in asked:
                found[name] = old
                continue
            try:
                stat = lstat(prefix + name, dir_fd=folder_fd)
            except OSError:
                self.removed.append(folder + name)  # gone, and the folder's clock is coarse
                continue
            stamp = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
            if stamp != old:
                self.changed.append(folder + name)
            found[name] = stamp if stat.st_mtime_ns < racy else None
        return found

    def _scan(self, folder: str, where: str, old: Files) -> tuple[list[str], Files] | None:
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
            self.rewritten[folder + "/" if folder else ""][2][name] = None
            return unreadable_note(path, exc.strerror or type(exc).__name__), b""
        return parse_note(path, raw), raw


class Looked:
    """The notes a refresh looked at: every note of ``folders``, and ``paths``."""

    def __init__(self) -> None:
        self.folders: set[str] = set()
        self.paths: set[str] = set()

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        folder, _, _name = path.rpartition("/")
        return (folder + "/" if folder else "") in self.folders or path in self.paths


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


#: A note as ranking scores it: path, score, the body's own score, date.
_Row = tuple[str, float, float, int]


def _last_place(rows: list[_Row], limit: int) -> float | None:
    """The score of the ``limit``-th best of ``rows``; None when there are fewer."""
    if len(rows) < limit:
        return None
    return sorted((row[1] for row in rows), reverse=True)[limit - 1]


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
    notes_dir: str | PathLike[str],
    path: str | PathLike[str] | None,
    *,
    with_terms: bool = False,
    looks: int | None = None,
) -> NotesIndex:
    """The index of ``notes_dir`` kept at ``path``, refreshed; rebuilt or in memory as needed
    (``path`` None: in memory). ``with_terms``: keep what :meth:`NotesIndex.bm25_paths`
    ranks by. ``looks``: when no watcher keeps it fresh, stat at most that many notes
    whose folders did not change (:meth:`NotesIndex.refresh`)."""
    root = os.fspath(notes_dir)
    wanted = _wanted(root, with_terms)
    if path is not None:
        index = _on_disk(os.fspath(path), root, wanted, with_terms, looks)
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
    path: str, notes_dir: str, wanted: dict[str, str], with_terms: bool, looks: int | None
) -> NotesIndex | None:
    """The index kept at ``path``, refreshed; None where it cannot be kept there."""
    from hippo_core.notes.watched import watched_fresh

    for attempt in range(2):
        try:
            index = NotesIndex(_connect(path, wanted), notes_dir, with_terms)
            index.path = path
            index.watched = not attempt and watched_fresh(path, notes_dir, with_terms)
            if not index.watched:
                index.refresh(looks)  # no watcher said it is fresh: look at the notes
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
    marks = ", ".join("?" * len(KEPT))
    rows = conn.execute(f"SELECT key, value FROM meta WHERE key NOT IN ({marks})", KEPT)
    return dict(rows.fetchall())


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    message = str(exc).lower()
    return "malformed" in message or "not a database" in message or "corrupt" in message


def _delete(path: str) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.unlink(path + suffix)
