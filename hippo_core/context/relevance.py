"""Which notes the context block names for a task: the ``relevance`` setting.

- ``headings``, the specification's rule and the default: a point for each task word found
  among the words of a note's title and headings (a word and its plural are one word).
- ``bm25``: BM25 over the note's fields, its title (with the file name), its headings and
  its body, each scored on its own, stemmed (:mod:`hippo_core.notes.fields`,
  :meth:`NotesIndex.bm25_scored`).
- ``history``: ``bm25``, fused with what past sessions of the workspace opened. The sessions
  whose prompts best match the task (BM25 over their prompts, :mod:`hippo_core.index.history`)
  each give the notes they read or edited their score, a little more when they are recent,
  shared among the notes they opened. Each list's scores are divided by its best, and a
  note's place is its BM25 share plus :data:`HISTORY_WEIGHT` times its history share.

Fusing normalised scores, rather than the ranks as reciprocal rank fusion does, keeps how
sure each list is: a note far ahead in BM25 stays ahead unless history is as sure of
another. The parameters were chosen on the public retrieval sets replayed in date order
(``../shared/evals/retrieval/history.py``, held-in data), in the middle of a range where
recall@5 moved by less than 0.01, and are fixed: docs/concepts.md gives the figures.
"""

from __future__ import annotations

import os

from hippo_core.base.clock import now as clock_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    from hippo_core.index.history import SessionTerms
    from hippo_core.notes.index import NotesIndex
    from hippo_core.workspace.folder import Workspace

#: The values of the ``relevance`` setting, the default first.
SETTINGS = ("headings", "bm25", "history")
MAX_RELEVANT = 5
#: How much the history list counts beside BM25, each divided by its best score.
HISTORY_WEIGHT = 0.5
#: How many of the best-matching past sessions give their notes.
SESSIONS = 20
#: A session's weight is its match times 1 + RECENT_BOOST * 2 ** (-age / HALF_LIFE): one of
#: today counts 1.5 times one of long ago, one of three months ago 1.25 times.
RECENT_BOOST, HALF_LIFE_DAYS = 0.5, 90.0
DAY = 86_400.0
#: recall@5 of each setting on the public retrieval sets replayed in date order
#: (``../shared/evals/retrieval/history.py``: 466 held-in tasks, pooled), with the
#: parameters above and BM25 over fields; what ``hippo init`` chooses by.
PUBLIC_RECALL = {"headings": 0.400, "bm25": 0.843, "history": 0.859}
#: How many tasks a workspace's own ``hippo eval context`` needs before its figures count.
MIN_TASKS = 20
#: A gain in recall@5 over the workspace's setting that makes ``hippo doctor`` suggest another.
SUGGEST_GAIN = 0.05


def relevant_paths(
    workspace: Workspace,
    task: str,
    relevance: str | None = None,
    *,
    limit: int = MAX_RELEVANT,
    before: float | None = None,
    now: float | None = None,
    besides: str | None = None,
) -> list[str]:
    """The notes the block names for ``task``, best first, ranked by ``relevance`` (the
    workspace's setting when None). ``before``, ``now`` (seconds since the epoch) and
    ``besides`` are for measuring: only sessions that started before ``before`` count, and
    never the session ``besides``; recency is reckoned from ``now`` (default: the clock).

    With a watcher keeping the notes index fresh (:mod:`hippo_core.context.watch`), the
    watcher ranks: it keeps what ranking reads warm, and its answer is this one's."""
    setting = relevance or workspace.settings.relevance
    if setting == "headings":
        from hippo_core.notes.text import singular, words

        keys = list(dict.fromkeys(singular(word) for word in words(task)))
        return workspace.notes_index.ranked_paths(keys, limit)
    from hippo_core.notes.terms import terms

    index = workspace.notes_index if workspace.notes_index.with_terms else workspace.terms_index
    wanted = terms(task)
    if index.watched and index.path and before is None and besides is None and wanted:
        asked = _asked(workspace, index, wanted, setting, limit, now)
        if asked is not None:
            return asked

    def past() -> dict[str, float]:
        return history_scores(workspace, wanted, before=before, now=now, besides=besides)

    with index.reading():
        return rank(index.bm25_scored, index, wanted, setting == "history", limit, past)


def rank(
    best: Callable[[list[str], int], list[tuple[str, float]]],
    index: NotesIndex,
    wanted: list[str],
    history: bool,
    limit: int,
    past: Callable[[], dict[str, float]],
) -> list[str]:
    """The ranking of ``bm25`` (``history`` False) or ``history`` for the task's terms
    ``wanted``: ``best`` gives BM25's best few with their scores, ``index`` scores others,
    ``past`` gives what the history's sessions opened."""
    # BM25's best ``limit`` and the history's notes hold the fused best ``limit``: any other
    # note is behind each of BM25's, in both lists.
    ranked = best(wanted, limit)
    if not history:
        return [path for path, _ in ranked]
    found = past()
    if not found:
        return [path for path, _ in ranked][:limit]
    left_out = [path for path in found if path not in dict(ranked)]
    return fuse(ranked, found, index.bm25_scored(wanted, 0, among=left_out))[:limit]


def _asked(
    workspace: Workspace,
    index: NotesIndex,
    wanted: list[str],
    setting: str,
    limit: int,
    now: float | None,
) -> list[str] | None:
    """The watcher's ranking, or None when it gives none (the hook then ranks)."""
    from hippo_core.files.home import home_folder
    from hippo_core.notes.watched import watched_ranking

    question: dict[str, object] = {"terms": wanted, "limit": limit}
    if setting == "history":
        question["history"] = {
            "index": os.path.join(home_folder(), "index.sqlite"),
            "roots": notes_roots(workspace),
            "team": _team(workspace),
            "now": clock_now() if now is None else now,
        }
    return watched_ranking(index.path or "", index.notes_dir, question)


def fuse(
    ranked: list[tuple[str, float]], past: dict[str, float], more: list[tuple[str, float]]
) -> list[str]:
    """BM25's notes (``ranked``, best first, with ``more`` scored for the history's notes it
    left out) and the history's, by share of each list's best; ties in BM25's order."""
    bm25 = dict(ranked)
    bm25.update(more)
    top_bm25 = max(bm25.values(), default=0.0) or 1.0
    top_past = max(past.values(), default=0.0) or 1.0
    score = {path: value / top_bm25 for path, value in bm25.items()}
    for path, value in past.items():
        score[path] = score.get(path, 0.0) + HISTORY_WEIGHT * value / top_past
    order = {path: i for i, (path, _) in enumerate(ranked)}
    far = len(order)
    return sorted(score, key=lambda path: (-round(score[path], 9), order.get(path, far), path))


def history_scores(
    workspace: Workspace,
    task_terms: list[str],
    *,
    before: float | None = None,
    now: float | None = None,
    besides: str | None = None,
) -> dict[str, float]:
    """The notes past sessions like the task opened, each with the sum over those sessions
    of their match (times recency, shared among the notes each opened); empty when there is
    no index, no such session, or anything at all goes wrong reading it (the block then
    ranks as ``bm25`` does)."""
    from hippo_core.files.home import home_folder
    from hippo_core.index.history import open_history

    if not task_terms:
        return {}
    conn = open_history(os.path.join(home_folder(), "index.sqlite"))
    if conn is None:
        return {}
    import _sqlite3

    try:
        conn.execute("BEGIN")  # its queries as one read of the index
    except _sqlite3.Error:
        conn.close()
        return {}
    try:
        return scores_from(
            conn,
            notes_roots(workspace),
            task_terms,
            workspace.notes_index.ranked,
            team=_team(workspace),
            before=before,
            now=now,
            besides=besides,
        )
    finally:
        conn.close()


def scores_from(
    conn: sqlite3.Connection,
    roots: list[str],
    task_terms: list[str],
    current: Callable[[list[str]], list[str]],
    *,
    team: bool,
    before: float | None = None,
    now: float | None = None,
    besides: str | None = None,
    held: SessionTerms | None = None,
) -> dict[str, float]:
    """:func:`history_scores` from the transcript index open as ``conn``, for notes below
    ``roots`` that ``current`` keeps (:func:`~hippo_core.index.history.past_sessions`;
    ``held`` keeps its rows between calls)."""
    import _sqlite3  # the C module, as the index's readers take it (no datetime import)

    from hippo_core.index.history import past_sessions

    clock = clock_now() if now is None else now
    try:
        sessions = past_sessions(
            conn, roots, task_terms, SESSIONS, current, before, besides, team=team, held=held
        )
    except _sqlite3.Error:
        return {}  # an index of another version, damaged, or locked: no history this time
    found: dict[str, float] = {}
    for match, started, notes in sessions:
        age = max(clock - started, 0.0) / DAY if started is not None else float("inf")
        weight = match * (1 + RECENT_BOOST * 2 ** (-age / HALF_LIFE_DAYS)) / len(notes)
        for path in notes:
            found[path] = found.get(path, 0.0) + weight
    return found


def _team(workspace: Workspace) -> bool:
    """Whether the team's sessions count: with a team index set."""
    return bool(workspace.settings.index_url or os.environ.get("HIPPO_INDEX_URL"))


def notes_roots(workspace: Workspace) -> list[str]:
    """The notes folder as past sessions may have named it, each ending in ``/``: as the
    workspace was reached, with its links resolved, and in each git worktree of its
    repository that the last ingest found (``.hippo/cache/folders.json``)."""
    from hippo_core.files import jsontext
    from hippo_core.index.history import FOLDERS_FILE

    folders = [workspace.folder, os.path.realpath(workspace.folder)]
    try:
        with open(workspace.inside(".hippo", "cache", FOLDERS_FILE), "rb") as handle:
            more = jsontext.loads(handle.read()).get("payload")
        folders += [f for f in more if isinstance(f, str)] if isinstance(more, list) else []
    except (OSError, ValueError, AttributeError):
        pass  # no ingest here yet: the workspace's own folder
    notes = workspace.settings.notes_dir
    roots = [os.path.join(os.path.normpath(os.path.join(f, notes)), "") for f in folders]
    return list(dict.fromkeys(roots))
