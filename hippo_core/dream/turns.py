"""The transcript index as dreaming reads it: turns that mention a note, single turns
looked up as evidence, and each session's span and turn ordinals."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.dream.model import Chunk, TurnText
from hippo_core.notes.terms import clean, terms

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from hippo_core.notes.index import NotesIndex
    from hippo_core.notes.note import Note

#: At most this many turns mention one note in one prompt (best matches first).
MAX_TURNS = 40
#: A turn of the window is evidence enough for verify to prompt a note it touched nothing
#: of and named nothing of when the note is among the notes its words fit best, as the
#: context block ranks notes for a task (BM25 of the notes): its best ``FITTING``. So a
#: night's prompts grow with the night's turns, not with the notes that share some word with
#: one of them. Measured on the public retrieval sets (``python bench/verify_cost.py``).
FITTING = 5
_WORDS = re.compile(r"[^\W_]+")
_KINDS = {"r": "read", "e": "edited", "c": "cited"}


def shown(path: str, root: Path | None) -> str:
    """A file a turn touched as the dream shows it: relative to the workspace ``root`` when
    inside it (as notes are named), ``~/...`` inside the home folder, else as it is."""
    if not os.path.isabs(path):
        return path
    if root is not None:
        for top in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
            if path.startswith(top.rstrip(os.sep) + os.sep):
                return path[len(top.rstrip(os.sep)) + 1 :]
    home = os.path.expanduser("~")
    if home not in ("", os.sep) and path.startswith(home.rstrip(os.sep) + os.sep):
        return "~" + path[len(home.rstrip(os.sep)) :]
    return path


def bound(moment: datetime) -> str:
    """A chunk bound as the index's ISO times compare against it (any precision, ``Z``)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def _phrase(text: str) -> str | None:
    """An FTS5 phrase of the text's words; None for one word alone, which the word-level
    search ranks better than a phrase can (a heading such as ``Options`` is in every turn)."""
    words = _WORDS.findall(clean(text))
    return '"' + " ".join(words) + '"' if len(words) > 1 else None


#: How much a word counts in the word-level search: of the title or the file name, of a
#: heading, of the note's most telling body terms (passed in, from the notes index).
TITLE_WEIGHT, HEADING_WEIGHT, BODY_WEIGHT = 2.0, 1.0, 1.0
#: How many of a note's telling body terms the word-level search asks for.
BODY_TERMS = 20


def word_weights(note: Note, body_terms: Iterable[str] = ()) -> dict[str, float]:
    """The stemmed terms the word-level search asks for, each with its weight: the title's
    and file name's, the headings', and ``body_terms`` (what tells the note's body apart
    from the other notes', :meth:`~hippo_core.notes.index.NotesIndex.telling`)."""
    weights = dict.fromkeys(body_terms, BODY_WEIGHT)
    name = note.path.removesuffix(".md").replace("/", " ")
    for texts, weight in (((note.title, name), TITLE_WEIGHT), (note.headings, HEADING_WEIGHT)):
        for term in dict.fromkeys(t for text in texts for t in terms(clean(text))):
            weights[term] = weights.get(term, 0.0) + weight
    return weights


def _term_query(term: str) -> str:
    """The FTS5 query of a stemmed term: the words it begins (``cach`` finds ``cache``,
    ``cached`` and ``caching``; ``retry`` also ``retries`` and ``retried``); a stem of three
    letters, the word itself."""
    if len(term) <= 3:
        return f'"{term}"'
    if term.endswith("y"):
        return f'"{term}" * OR "{term[:-1]}i" *'
    return f'"{term}" *'


class TurnIndex:
    """Read-only queries over ``$HIPPO_HOME/index.sqlite`` (through SQLAlchemy).

    The way turns are found is here; the SQL that fetches them is in the ``_*_rows``
    methods, which the team index (:class:`~hippo_core.dream.team_turns.TeamTurnIndex`)
    asks of PostgreSQL instead."""

    def __init__(self, engine: Engine, root: Path | None = None) -> None:
        self.engine = engine
        #: The workspace whose files the turns' file lists show relative to it.
        self.root = root
        self._conn: Connection | None = None
        self._last: tuple[tuple[Any, ...], list[TurnText]] | None = None
        #: The last arrival a dream's window reads (:meth:`arrival`): a turn that reaches
        #: the index after the run took it is left to the next run. None reads them all.
        self.upto: int | None = None
        self._fits: tuple[tuple[Any, ...], frozenset[str]] | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.engine.dispose()

    @classmethod
    def open(cls, path: Path, root: Path | None = None) -> TurnIndex | None:
        """The index at ``path``; None when there is none yet (nothing was ingested).
        ``root``: the workspace the turns' files are shown relative to (:func:`shown`)."""
        from hippo_core.index.db import open_for_reading

        return cls(open_for_reading(path), root) if path.exists() else None

    def identity(self) -> str:
        """The index's own name, which an index made anew by ``ingest --full`` changes."""
        rows = self._rows("SELECT value FROM meta WHERE key = 'made'", {})
        return str(rows[0].value) if rows else ""

    def arrival(self) -> int:
        """Where arrivals stand: the highest turn id (turns only ever get higher ids, until
        ``ingest --full`` makes a new file)."""
        rows = self._rows("SELECT coalesce(max(id), 0) AS top FROM turns", {})
        return int(rows[0].top)

    def arrived(
        self, after: int, upto: int, before: datetime, sessions: frozenset[str]
    ) -> dict[tuple[str, int], str]:
        """The turns of ``sessions`` that arrived after ``after`` (up to ``upto``) and
        started before ``before`` (the ones a dream whose window began at ``before`` has
        not seen), with their start times."""
        rows = self._rows(
            "SELECT session, ordinal, started FROM turns WHERE id > :after AND id <= :upto "
            "AND started < :before",
            {"after": after, "upto": upto, "before": bound(before)},
        )
        return {(r.session, r.ordinal): r.started for r in rows if r.session in sessions}

    def handoffs_arrived(self, after: int, upto: int, before: datetime) -> dict[str, str]:
        """Other machines' sessions whose handoff arrived late: none here (a team index,
        :class:`~hippo_core.dream.team_turns.TeamTurnIndex`, has them)."""
        return {}

    def handoffs_dreamed(self) -> dict[str, str]:
        """Sessions whose handoff another machine's dream took: none in a local index."""
        return {}

    def record_dreamed(self, chunk: Chunk, handoffs: list[str]) -> None:
        """Tell other dreamers what this dream has dreamed: nobody else reads a local
        index, so nothing to tell."""

    def records(self, latest: int | None = None) -> list[dict[str, Any]]:
        """Sessions of other machines the dream should see (with ``latest``, only that many,
        those that started last): none in the local index (a team index,
        :class:`~hippo_core.dream.team_turns.TeamTurnIndex`, has them)."""
        return []

    def _rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        # One connection for the whole dream: a connection per query costs its page cache.
        from sqlalchemy import text

        if self._conn is None:
            self._conn = self.engine.connect()
        return list(self._conn.execute(text(sql), params).all())

    def _texts(self, rows: Iterable[Any]) -> list[TurnText]:
        rows = list(rows)
        files: dict[int, list[str]] = {}
        if rows:
            for row in self._touched_rows(",".join(str(int(r.id)) for r in rows)):
                files.setdefault(row.turn, []).append(
                    f"{_KINDS.get(row.kind, row.kind)} {shown(row.path, self.root)}"
                )
        return [
            TurnText(
                session=r.session,
                ordinal=r.ordinal,
                started=r.started,
                prompt=r.prompt,
                answer=r.answer,
                tools=tuple(json.loads(r.tools or "[]")),
                files=tuple(files.get(r.id, ())),
                who=getattr(r, "member", "") or "",
                external=None if r.external is None else self._external(r.external),
            )
            for r in rows
        ]

    def _external(self, stored: str) -> tuple[str, ...]:
        """A turn's reads from outside its project, a file of this workspace named as the
        dream names it (``notes/x.md``), not by where this machine keeps it."""
        from hippo_core.transcripts.external import outside_file

        prefix = outside_file("")
        return tuple(
            prefix + shown(item[len(prefix) :], self.root) if item.startswith(prefix) else item
            for item in json.loads(stored)
        )

    def _touched_rows(self, ids: str) -> list[Any]:
        """``turn, kind, path`` of the files the turns ``ids`` (digits and commas) touched."""
        return self._rows(
            f"SELECT turn, kind, path FROM touched WHERE turn IN ({ids}) ORDER BY rowid", {}
        )

    def mentioning(
        self,
        note: Note,
        note_file: Path,
        start: datetime,
        end: datetime,
        sessions: frozenset[str],
        *,
        by_file: bool = True,
        body_terms: Iterable[str] = (),
        only: frozenset[tuple[str, int]] | None = None,
    ) -> list[TurnText]:
        """Turns of ``sessions`` in ``[start, end)`` (of ``only``, the (session, ordinal)
        pairs of a chunk of chosen turns, when given) that mention the note: the note (or a
        source) among their files, its title, a heading or a source in their text, or its
        words: the title's, the headings', the file name's and ``body_terms`` (the telling
        terms of its body, :meth:`~hippo_core.notes.index.NotesIndex.telling`).
        ``by_file=False`` leaves the files out: what the text alone finds, which ``hippo eval
        verify`` measures.

        Best matches first, at most :data:`MAX_TURNS`. The last answer is kept, since two
        readers of one prompt ask the same question.
        """
        body_terms = tuple(body_terms)
        key = (note.path, start, end, frozenset(sessions), by_file, body_terms, only)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        window: dict[str, Any] = {"start": bound(start), "end": bound(end)}
        if only is not None:
            window["only"] = sorted({session for session, _ordinal in only})
        elif self.upto is not None:
            window["upto"] = self.upto
        found = self._mentioning(note, note_file, window, sessions, only, by_file, body_terms)
        self._last = (key, found)
        return found

    def worth_a_prompt(
        self,
        found: list[TurnText],
        note: Note,
        notes: NotesIndex,
        start: datetime,
        end: datetime,
        sessions: frozenset[str],
        only: frozenset[tuple[str, int]] | None = None,
    ) -> bool:
        """Whether the turns :meth:`mentioning` ``found`` for ``note`` are evidence enough to
        prompt it: one touched its file or a source, or said its title, a heading or a source
        word for word, or the note is among the notes a turn of the window fits best
        (:meth:`fitting`). Sharing some of its words alone is not."""
        if any(turn.match != "words" for turn in found):
            return True
        return bool(found) and note.path in self.fitting(notes, start, end, sessions, only)

    def fitting(
        self,
        notes: NotesIndex,
        start: datetime,
        end: datetime,
        sessions: frozenset[str],
        only: frozenset[tuple[str, int]] | None = None,
        limit: int = FITTING,
    ) -> frozenset[str]:
        """The notes some turn of ``sessions`` in ``[start, end)`` (of ``only``, as
        :meth:`mentioning` takes it) fits best: each turn's prompt, answer and tool calls
        rank the notes by BM25 (``notes``, an index that keeps terms), as the context block
        ranks them for a task, and its ``limit`` best count. Superseded notes and the session
        log are never among them. Asked once a window: the last answer is kept."""
        key = (start, end, sessions, only, limit, id(notes))
        if self._fits is not None and self._fits[0] == key:
            return self._fits[1]
        window: dict[str, Any] = {"start": bound(start), "end": bound(end)}
        if only is not None:
            window["only"] = sorted({session for session, _ordinal in only})
        elif self.upto is not None:
            window["upto"] = self.upto
        found: set[str] = set()
        for row in self._window_rows(window):
            if row.session in sessions and (only is None or (row.session, row.ordinal) in only):
                said = "\n".join((row.prompt, row.answer, *json.loads(row.tools or "[]")))
                found.update(path for path, _ in notes.bm25_scored(terms(said), limit))
        self._fits = (key, frozenset(found))
        return self._fits[1]

    def _window_rows(self, window: dict[str, Any]) -> list[Any]:
        """``session, ordinal, prompt, answer, tools`` of every turn of the window."""
        return self._rows(
            "SELECT t.session, t.ordinal, t.prompt, t.answer, t.tools FROM turns t "
            f"WHERE {self._within(window)}",
            self._params(window),
        )

    def session_files(self, session: str) -> list[tuple[str, str]]:
        """``(read|edited|cited, path)`` for every file the session's turns touched."""
        rows = self._rows(
            "SELECT x.kind, x.path FROM turns t JOIN touched x ON x.turn = t.id "
            "WHERE t.session = :sid ORDER BY t.ordinal",
            {"sid": session},
        )
        return [(_KINDS.get(r.kind, r.kind), r.path) for r in rows]

    def first_prompt(self, session: str) -> str:
        rows = self._rows(
            "SELECT prompt FROM turns WHERE session = :sid ORDER BY ordinal LIMIT 1",
            {"sid": session},
        )
        return str(rows[0].prompt) if rows else ""

    def touching(self, note_file: Path, sessions: frozenset[str]) -> set[tuple[str, int]]:
        """Every turn of ``sessions`` that read, edited or cited ``note_file``."""
        rows = self._rows(
            "SELECT t.session, t.ordinal FROM touched x CROSS JOIN turns t ON t.id = x.turn "
            "WHERE x.path = :path",
            {"path": str(note_file)},
        )
        return {(r.session, r.ordinal) for r in rows if r.session in sessions}

    def _mentioning(
        self,
        note: Note,
        note_file: Path,
        window: dict[str, Any],
        sessions: frozenset[str],
        only: frozenset[tuple[str, int]] | None,
        by_file: bool,
        body_terms: tuple[str, ...],
    ) -> list[TurnText]:
        """First the turns that read, edited or cited the note or a source, then those that
        say its title, a heading or a source word for word, then those that share its
        weighted terms (:func:`word_weights`), best first within each; at most MAX_TURNS."""
        sources = list(note.meta.sources or ())
        found: dict[int, tuple[Any, str]] = {}

        def take(rows: list[Any], match: str) -> None:
            for row in rows:
                if row.session not in sessions or len(found) >= MAX_TURNS:
                    continue
                if only is None or (row.session, row.ordinal) in only:
                    found.setdefault(row.id, (row, match))

        if by_file:
            touched = self._file_rows(note_file, sources, window)
            take(sorted(touched, key=lambda r: r.started or "", reverse=True), "file")
        said = (_phrase(text) for text in (note.title, *note.headings, *sources))
        phrases = [phrase for phrase in dict.fromkeys(said) if phrase]
        if phrases and len(found) < MAX_TURNS:
            take(self._phrase_rows(phrases, window), "phrase")
        if len(found) < MAX_TURNS:
            take(self._by_words(word_weights(note, body_terms), window), "words")
        return [
            replace(text, match=found[row_id][1])
            for row_id, text in zip(found, self._texts(r for r, _ in found.values()), strict=True)
        ]

    def _within(self, window: dict[str, Any]) -> str:
        """The SQL condition of ``window``: its times, and its last arrival (``upto``) or
        the only sessions it reads (``only``) when it has them."""
        where = "t.started >= :start AND t.started < :end"
        if "upto" in window:
            where += " AND t.id <= :upto"
        if "only" in window:
            where += " AND t.session IN (SELECT value FROM json_each(:only_json))"
        return where

    def _params(self, window: dict[str, Any]) -> dict[str, Any]:
        if "only" not in window:
            return window
        return {**window, "only_json": json.dumps(window["only"])}

    def _by_words(self, weights: dict[str, float], window: dict[str, Any]) -> list[Any]:
        """The turns that share the weighted terms, best first: each turn scores, for each
        term it has, the term's weight times how well the term matches it."""
        scores: dict[int, float] = {}
        rows: dict[int, Any] = {}
        for term, weight in weights.items():
            for row in self._term_rows(term, window):
                rows.setdefault(row.id, row)
                scores[row.id] = scores.get(row.id, 0.0) + weight * row.score
        best = sorted(scores, key=lambda i: rows[i].started or "", reverse=True)
        best.sort(key=lambda i: -round(scores[i], 9))  # ties: the newer first
        return [rows[i] for i in best]

    def _file_rows(self, note_file: Path, sources: list[str], window: dict[str, Any]) -> list[Any]:
        """The window's turns that read, edited or cited the note's file or a source."""
        touched: list[Any] = []
        for pattern in [str(note_file)] + [f"%/{s.lstrip('./')}" for s in sources]:
            op = "LIKE" if pattern.startswith("%") else "="
            touched += self._rows(
                # CROSS JOIN keeps SQLite from walking every turn of the window first.
                "SELECT t.* FROM touched x CROSS JOIN turns t ON t.id = x.turn "
                f"WHERE x.path {op} :path AND {self._within(window)} "
                "ORDER BY t.started DESC LIMIT 500",
                {"path": pattern, **self._params(window)},
            )
        return touched

    def _phrase_rows(self, phrases: list[str], window: dict[str, Any]) -> list[Any]:
        """The window's turns holding one of the FTS5 ``phrases``, best first."""
        return self._rows(
            "SELECT t.* FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid "
            f"WHERE turns_fts MATCH :query AND {self._within(window)} "
            "ORDER BY bm25(turns_fts), t.started DESC LIMIT 500",
            {"query": " OR ".join(phrases), **self._params(window)},
        )

    def _term_rows(self, term: str, window: dict[str, Any]) -> list[Any]:
        """The window's turns holding a word ``term`` begins, each with its ``score``
        (higher is better: BM25, which FTS5 gives below zero, turned round)."""
        return self._rows(
            "SELECT t.*, -bm25(turns_fts) AS score FROM turns_fts "
            "JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH :query "
            f"AND {self._within(window)} ORDER BY score DESC LIMIT 500",
            {"query": _term_query(term), **self._params(window)},
        )

    def turn(self, session: str, ordinal: int) -> TurnText | None:
        """The turn ``ordinal`` of ``session``, or None when the index has no such turn."""
        if not 0 <= ordinal < 2**63:  # no INTEGER holds it, so no turn has it
            return None
        rows = self._turn_rows(session, ordinal)
        return self._texts(rows[:1])[0] if rows else None

    def _turn_rows(self, session: str, ordinal: int) -> list[Any]:
        return self._rows(
            "SELECT * FROM turns WHERE session = :session AND ordinal = :ordinal",
            {"session": session, "ordinal": ordinal},
        )

    def sessions(self, ids: Iterable[str]) -> dict[str, tuple[str | None, str | None, list[int]]]:
        """For each indexed session of ``ids``: its first and last turn times and ordinals."""
        wanted = set(ids)
        spans: dict[str, tuple[str | None, str | None, list[int]]] = {}
        for row in self._span_rows(wanted):
            if row.session not in wanted:
                continue
            first, last, ordinals = spans.get(row.session, (None, None, []))
            if not ordinals or ordinals[-1] != row.ordinal:  # one id on two machines: once
                ordinals.append(row.ordinal)
            moment = row.ended or row.started
            spans[row.session] = (
                first or row.started,
                max(filter(None, (last, moment)), default=None),
                ordinals,
            )
        return spans

    def _span_rows(self, wanted: set[str]) -> list[Any]:
        """``session, ordinal, started, ended`` of every turn (of ``wanted``, where that is
        cheaper to ask), by session and ordinal."""
        return self._rows(
            "SELECT session, ordinal, started, ended FROM turns ORDER BY session, ordinal", {}
        )
