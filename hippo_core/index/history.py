"""The sessions' history as ``relevance = "history"`` reads it: what each past session asked
and which Markdown files it opened.

Every ingest keeps three small tables of the transcript index up to date for the sessions it
changed (:func:`refresh`): ``history`` (a session that read or edited a Markdown file, when it
started, how many terms its prompts have), ``history_terms`` (those terms, stemmed as the
notes' are, with their counts) and ``history_notes`` (the files, absolute); and, in ``meta``,
how many such sessions there are and their terms in all. A private session, or one of
hippo's own model calls, has no turns in the index and so no rows here.

The context block asks them once per task (:func:`past_sessions`): BM25 over the sessions'
prompts, best first, each with the notes it opened below the workspace's notes folder. That
is a few queries over the task's terms' rows and the best sessions' files, with no scan of
the turns or of every session, so the first prompt's hook can afford it.
"""

from __future__ import annotations

# The C module: the sqlite3 package adds date adapters, and its datetime import costs a
# hook about a millisecond. Connections, errors and connect() are the package's own.
import _sqlite3 as sqlite3
import math
import os
from collections import Counter

from hippo_core.notes.terms import terms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

#: How much of a session's prompts is read for its terms: a pasted log or file must not
#: drown what the session was asked (nor the index).
MAX_PROMPT_CHARS = 16_000
#: BM25's saturation and length normalisation over the sessions' prompts (the textbook
#: values: a long session is long because it asked more, unlike a long note).
K1, B = 1.2, 0.75
#: Sessions per chunk of ``IN (...)`` at ingest.
CHUNK = 500
#: How long a reader waits for an ingest's write lock (readers of a WAL index rarely wait).
BUSY_SECONDS = 1.0
#: How many of the best-matching sessions are looked at a time.
PAGE = 40
#: How many terms' rows a watcher keeps (:class:`SessionTerms`) before it starts again.
MAX_HELD_TERMS = 500
#: Where ``meta`` keeps how many sessions the history holds, and their terms in all: this
#: machine's, and the team's pulled (:mod:`hippo_core.index.team_history`).
SESSIONS_KEY, LENGTH_KEY = "history_sessions", "history_length"
#: The file of ``.hippo/cache/`` where ingest keeps the workspace's folders, its git
#: worktrees' among them, in which past sessions may have opened its notes.
FOLDERS_FILE = "folders.json"
TEAM_SESSIONS_KEY, TEAM_LENGTH_KEY = "history_team_sessions", "history_team_length"


# -- kept at ingest --------------------------------------------------------------------------


def refresh(conn: sqlite3.Connection, generation: int) -> None:
    """Make the history rows of every session this ingest changed (those marked with
    ``generation``) again from its turns, inside the ingest's transaction."""
    query = "SELECT id FROM sessions WHERE changed = ?"
    changed = [row[0] for row in conn.execute(query, (generation,))]
    for chunk in _chunks(changed):
        forget(conn, chunk)
        marks = ", ".join("?" * len(chunk))
        files: dict[str, list[str]] = {}
        for sid, path in conn.execute(
            "SELECT DISTINCT t.session, x.path FROM touched x JOIN turns t ON t.id = x.turn "
            f"WHERE t.session IN ({marks}) AND x.kind IN ('r', 'e') AND x.path LIKE '%.md'",
            chunk,
        ):
            files.setdefault(sid, []).append(path)
        if not files:
            continue
        wanted = list(files)
        marks = ", ".join("?" * len(wanted))
        prompts: dict[str, list[str]] = {}
        for sid, prompt in conn.execute(
            f"SELECT session, prompt FROM turns WHERE session IN ({marks}) "
            "ORDER BY session, ordinal",
            wanted,
        ):
            prompts.setdefault(sid, []).append(prompt)
        query = f"SELECT id, started FROM sessions WHERE id IN ({marks})"
        started = dict(conn.execute(query, wanted).fetchall())
        for sid, paths in files.items():
            store(conn, sid, prompts.get(sid, []), paths, epoch(started.get(sid)))
    if changed:
        count_sizes(conn)


def forget(conn: sqlite3.Connection, sessions: list[str]) -> None:
    """Delete the history rows of ``sessions`` (at most :data:`CHUNK` of them)."""
    marks = ", ".join("?" * len(sessions))
    old = f"SELECT id FROM history WHERE session IN ({marks})"
    for table in ("history_terms", "history_notes"):
        conn.execute(f"DELETE FROM {table} WHERE id IN ({old})", sessions)
    conn.execute(f"DELETE FROM history WHERE session IN ({marks})", sessions)


def store(
    conn: sqlite3.Connection,
    session: str,
    prompts: list[str],
    paths: list[str],
    started: float | None,
    version: str | None = None,
) -> None:
    """The rows of one session: its prompts' terms and the Markdown files it opened
    (absolute); with ``version``, a team session pulled as that (:mod:`.team_history`)."""
    counts = Counter(terms("\n".join(prompts)[:MAX_PROMPT_CHARS]))
    length, team = sum(counts.values()), int(version is not None)
    row = conn.execute(
        "INSERT INTO history (session, started, length, team, version) "
        "VALUES (?, ?, ?, ?, ?) RETURNING id",
        (session, started, length, team, version),
    ).fetchone()[0]
    conn.executemany(
        "INSERT INTO history_terms (term, id, tf, length, started, team) VALUES (?, ?, ?, ?, ?, ?)",
        [(term, row, tf, length, started, team) for term, tf in counts.items()],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO history_notes (path, id) VALUES (?, ?)",
        [(path, row) for path in paths],
    )


def count_sizes(conn: sqlite3.Connection) -> None:
    """Keep in ``meta`` how many sessions the history holds and their terms in all, this
    machine's and the team's apart (ranking reads them instead of counting every row)."""
    for team, keys in ((0, (SESSIONS_KEY, LENGTH_KEY)), (1, (TEAM_SESSIONS_KEY, TEAM_LENGTH_KEY))):
        query = "SELECT count(*), total(length) FROM history WHERE team = ?"
        count, length = conn.execute(query, (team,)).fetchone()
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(keys[0], str(count)), (keys[1], str(int(length)))],
        )


def epoch(stamp: str | None) -> float | None:
    """An ISO 8601 time as seconds since the epoch (UTC when it names no zone); None when
    it is no time."""
    from datetime import UTC, datetime

    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


# -- read for the context block --------------------------------------------------------------


def open_history(index: str) -> sqlite3.Connection | None:
    """The transcript index at ``index``, to read; None when there is none (no ingest yet)."""
    if not os.path.isfile(index):
        return None  # connecting would make an empty file
    try:
        conn = sqlite3.connect(index, timeout=BUSY_SECONDS, isolation_level=None)
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error:
        return None
    return conn


def past_sessions(
    conn: sqlite3.Connection,
    roots: list[str],
    task_terms: list[str],
    limit: int,
    current: Callable[[list[str]], list[str]],
    before: float | None = None,
    besides: str | None = None,
    team: bool = False,
    held: SessionTerms | None = None,
) -> list[tuple[float, float | None, list[str]]]:
    """The ``limit`` sessions whose prompts BM25 ranks best for ``task_terms``, best first
    (ties to the later), as ``(score, started, notes)``: ``notes`` are the files it read or
    edited below one of ``roots`` (each ending in ``/``), relative to it, that ``current``
    keeps (it is given many paths at once and returns those that are notes now); a session
    left with none is passed over. The team's sessions pulled from the team index count
    only with ``team``. With ``before`` (seconds since the epoch) only sessions that started
    before it count, and never the session ``besides``: for measuring, so that no task sees
    its own. ``held`` keeps each term's scores between calls (a watcher's); without it,
    SQLite sums them.

    How rare a term is, and how long prompts are, is counted over every session of the
    history (that started before ``before``), whatever part of it asks: a search's
    statistics are its collection's, and a part's would cost a pass over all its rows."""
    task_terms = sorted(set(task_terms))
    if not task_terms or not roots or limit <= 0:
        return []
    if before is not None or besides is not None:
        held = None  # measuring: the rows of those sessions alone, read each time
    mine = "" if team else " AND NOT team"
    if before is not None:
        count, length = conn.execute(
            f"SELECT count(*), total(length) FROM history WHERE started < ?{mine}", (before,)
        ).fetchone()
    else:
        keys = (SESSIONS_KEY, LENGTH_KEY, TEAM_SESSIONS_KEY, TEAM_LENGTH_KEY)
        rows = conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?, ?, ?)", keys)
        sizes = {key: int(value) for key, value in rows.fetchall()}
        count, length = sizes.get(SESSIONS_KEY, 0), sizes.get(LENGTH_KEY, 0)
        if team:
            count += sizes.get(TEAM_SESSIONS_KEY, 0)
            length += sizes.get(TEAM_LENGTH_KEY, 0)
    if not count:
        return []
    mean = max(length / count, 1.0)
    if held is None:
        pages = _summed_in_sql(conn, task_terms, team, before, besides, count, mean)
    else:
        pages = _summed_held(conn, held, task_terms, team, count, mean)
    below, ranges = _ranges(roots)
    taken: list[tuple[float, float | None, list[str]]] = []
    for best in pages(max(PAGE, 2 * limit)):
        # A page of the best at a time, the files of its sessions at once.
        marks = ", ".join(f":s{i}" for i in range(len(best)))
        opened: dict[int, list[str]] = {}
        for row, path in conn.execute(
            f"SELECT id, path FROM history_notes WHERE id IN ({marks}) AND ({below}) "
            "ORDER BY id, path",
            {**ranges, **{f"s{i}": row for i, (row, _, _) in enumerate(best)}},
        ):
            opened.setdefault(row, []).append(_relative(path, roots))
        kept = set(current(sorted({path for paths in opened.values() for path in paths})))
        for row, score, started in best:
            notes = [path for path in opened.get(row, ()) if path in kept]
            if notes and score > 0:
                taken.append((score / QUANTUM, started, notes))
                if len(taken) == limit:
                    return taken
    return taken


#: A session's score is a whole number of ``1 / QUANTUM``: each term's part is cut to one,
#: so that the parts add up exactly, in any order. SQLite's sum over a session's rows and a
#: watcher's sum of the parts it holds are then the same number, and so is their order.
QUANTUM = 2.0**40
#: A term's part of a session's score, as SQL computes it from a row of ``history_terms``
#: (``:idf`` the term's; the same operations, in the same order, as :func:`_term_scores`).
_PART = "CAST({idf} * tf / (tf + :k1 * (1 - :b + :b * length / :mean)) * :quantum AS INTEGER)"
#: The order of the sessions: best first, ties to the later start (undated ones last), then
#: to the later row.
_ORDER = "score DESC, started IS NULL, started DESC, id DESC"

Page = list[tuple[int, int, "float | None"]]


def _summed_in_sql(
    conn: sqlite3.Connection,
    task_terms: list[str],
    team: bool,
    before: float | None,
    besides: str | None,
    count: int,
    mean: float,
) -> Callable[[int], Iterator[Page]]:
    """The sessions with a term of the task, in :data:`_ORDER`, a page at a time, their
    scores summed by SQLite: ``(row, score, started)``."""
    marks = ", ".join(f":t{i}" for i in range(len(task_terms)))
    where = f"term IN ({marks})"
    values: dict[str, object] = {f"t{i}": term for i, term in enumerate(task_terms)}
    if not team:
        where += " AND NOT team"
    if before is not None:
        where += " AND started < :before"
        values["before"] = before
    if besides is not None:
        where += " AND id NOT IN (SELECT id FROM history WHERE session = :besides)"
        values["besides"] = besides
    found = conn.execute(
        f"SELECT term, count(*) FROM history_terms WHERE {where} GROUP BY term", values
    )
    idf = {term: _idf(count, df) for term, df in found.fetchall()}
    cases = " ".join(f"WHEN :t{i} THEN :idf{i}" for i, term in enumerate(task_terms) if term in idf)
    values.update({f"idf{i}": idf.get(term, 0.0) for i, term in enumerate(task_terms)})
    values.update(k1=K1, b=B, mean=float(mean), quantum=QUANTUM)
    query = (
        f"SELECT id, sum({_PART.format(idf=f'CASE term {cases} END')}) AS score, "
        f"max(started) AS started FROM history_terms WHERE {where} GROUP BY id "
        f"ORDER BY {_ORDER} LIMIT :size OFFSET :offset"
    )

    def pages(size: int) -> Iterator[Page]:
        if not idf:
            return  # no session holds a term of the task
        offset = 0
        while True:
            page = conn.execute(query, {**values, "size": size, "offset": offset}).fetchall()
            if page:
                yield page
            if len(page) < size:
                return
            offset += size

    return pages


def _summed_held(
    conn: sqlite3.Connection,
    held: SessionTerms,
    task_terms: list[str],
    team: bool,
    count: int,
    mean: float,
) -> Callable[[int], Iterator[Page]]:
    """:func:`_summed_in_sql` from the parts ``held`` keeps of each term."""
    score: dict[int, int] = {}
    started: dict[int, float | None] = {}
    for term in task_terms:
        given, dates = held.scores(conn, term, team, count, mean)
        for row, part in given.items():
            score[row] = score.get(row, 0) + part
        started.update(dates)
    return lambda size: _pages(score, started, size)


def _pages(score: dict[int, int], started: dict[int, float | None], size: int) -> Iterator[Page]:
    """The sessions of ``score`` in :data:`_ORDER`, about ``size`` at a time: each page is
    the best ``size`` and every session whose score ties the last of them, so that sorting a
    page alone orders it as sorting them all would."""
    import heapq  # a watcher's alone: the hook's sessions come sorted from SQLite

    left = dict(score)
    while left:
        last = heapq.nlargest(size, left.values())[-1]
        page = [row for row, value in left.items() if value >= last]
        for row in page:
            del left[row]
        page.sort(key=lambda row: (-score[row], started[row] is None, -(started[row] or 0.0), -row))
        yield [(row, score[row], started[row]) for row in page]


Rows = list[tuple[int, int, int, "float | None"]]


def _term_rows(conn: sqlite3.Connection, term: str, team: bool) -> Rows:
    """The history's rows of ``term``: each session's row id, the term's count, the
    session's prompt length and when it started."""
    query = "SELECT id, tf, length, started FROM history_terms WHERE term = ?"
    return conn.execute(query + ("" if team else " AND NOT team"), (term,)).fetchall()


def _idf(count: int, df: int) -> float:
    """How rare a term held by ``df`` of ``count`` sessions is."""
    return math.log(1 + (count - df + 0.5) / (df + 0.5))


Scores = tuple[dict[int, int], dict[int, "float | None"]]


def _term_scores(rows: Rows, count: int, mean: float) -> Scores:
    """What a term gives each session of ``rows`` (of ``count`` sessions, their prompts
    ``mean`` terms long): ``idf * tf / (tf + K1 * (1 - B + B * length / mean))`` as a
    whole number of ``1 / QUANTUM``, cut as SQL's ``CAST`` cuts it (:data:`_PART`); and when
    each started."""
    if not rows:
        return {}, {}
    idf = _idf(count, len(rows))
    given = {
        row: int(idf * tf / (tf + K1 * (1 - B + B * size / mean)) * QUANTUM)
        for row, tf, size, _ in rows
    }
    return given, {row: at for row, _, _, at in rows}


class SessionTerms:
    """What each term gives the sessions of the history, kept between calls of
    :func:`past_sessions` while the transcript index stays as it was (a watcher's,
    :mod:`hippo_core.context.watch`)."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, bool, int, float], Scores] = {}
        self._as_of: int | None = None

    def scores(
        self, conn: sqlite3.Connection, term: str, team: bool, count: int, mean: float
    ) -> Scores:
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._as_of or len(self._held) > MAX_HELD_TERMS:
            self._held.clear()
            self._as_of = version
        key = (term, team, count, mean)
        found = self._held.get(key)
        if found is None:
            found = self._held[key] = _term_scores(_term_rows(conn, term, team), count, mean)
        return found


def _ranges(roots: list[str]) -> tuple[str, dict[str, object]]:
    """A condition on ``path`` for files below any of ``roots`` (each ending in ``/``), as
    ranges the primary key serves: below ``/w/notes/`` is from it up to ``/w/notes0``."""
    values: dict[str, object] = {}
    parts = []
    for i, root in enumerate(roots):
        values[f"lo{i}"], values[f"hi{i}"] = root, root[:-1] + chr(ord(root[-1]) + 1)
        parts.append(f"(path >= :lo{i} AND path < :hi{i})")
    return " OR ".join(parts), values


def _relative(path: str, roots: list[str]) -> str:
    root = next(root for root in roots if path.startswith(root))
    return path[len(root) :]
