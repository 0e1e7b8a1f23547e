"""The transcript index as dreaming reads it: turns that mention a note, single turns
looked up as evidence, and each session's span and turn ordinals."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.dream.model import TurnText

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from hippo_core.notes.note import Note

#: At most this many turns mention one note in one prompt (best matches first).
MAX_TURNS = 40
_WORDS = re.compile(r"[^\W_]+")
_KINDS = {"r": "read", "e": "edited", "c": "cited"}


def bound(moment: datetime) -> str:
    """A chunk bound as the index's ISO times compare against it (any precision, ``Z``)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


#: Markup a heading may carry that is not its words: attribute lists (``{ #anchor .cls }``),
#: HTML tags, a link's target, and the ``#``s that close an ATX heading.
_MARKUP = re.compile(r"\{[^}]*\}|<[^>]*>|\s#+\s*$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
#: Words too common to find a note by; left out of the word-level search.
COMMON = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "use",
        "used",
        "using",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    ]
)


def clean(heading: str) -> str:
    """A heading's words without its markup: ``Handling errors { #handling-errors }`` is
    ``Handling errors``; emphasis and code ticks go with the other non-word characters."""
    return " ".join(_MARKUP.sub(" ", _LINK.sub(r"\1", heading)).split())


def _phrase(text: str) -> str | None:
    """An FTS5 phrase of the text's words; None for one word alone, which the word-level
    search ranks better than a phrase can (a heading such as ``Options`` is in every turn)."""
    words = _WORDS.findall(clean(text))
    return '"' + " ".join(words) + '"' if len(words) > 1 else None


def _words(texts: Iterable[str]) -> str | None:
    """An FTS5 query that any of the texts' uncommon words matches (ranked by bm25)."""
    found = dict.fromkeys(
        w.lower() for t in texts for w in _WORDS.findall(clean(t)) if w.lower() not in COMMON
    )
    kept = [w for w in found if len(w) > 2 or w.isdigit()]
    return " OR ".join(f'"{w}"' for w in kept) or None


class TurnIndex:
    """Read-only queries over ``$HIPPO_HOME/index.sqlite`` (through SQLAlchemy)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._conn: Connection | None = None
        self._last: tuple[tuple[Any, ...], list[TurnText]] | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.engine.dispose()

    @classmethod
    def open(cls, path: Path) -> TurnIndex | None:
        """The index at ``path``; None when there is none yet (nothing was ingested)."""
        from hippo_core.index.db import open_for_reading

        return cls(open_for_reading(path)) if path.exists() else None

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
            ids = ",".join(str(int(r.id)) for r in rows)
            for row in self._rows(
                f"SELECT turn, kind, path FROM touched WHERE turn IN ({ids}) ORDER BY rowid", {}
            ):
                files.setdefault(row.turn, []).append(
                    f"{_KINDS.get(row.kind, row.kind)} {row.path}"
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
            )
            for r in rows
        ]

    def mentioning(
        self,
        note: Note,
        note_file: Path,
        start: datetime,
        end: datetime,
        sessions: frozenset[str],
        *,
        by_file: bool = True,
    ) -> list[TurnText]:
        """Turns of ``sessions`` in ``[start, end)`` that mention the note: its title, a
        heading or a source in their text, or the note (or a source) among their files
        (``by_file=False`` leaves those out: what the text alone finds, which
        ``hippo eval verify`` measures).

        Best matches first, at most :data:`MAX_TURNS`. The last answer is kept, since two
        readers of one prompt ask the same question.
        """
        key = (note.path, start, end, frozenset(sessions), by_file)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        found = self._mentioning(note, note_file, start, end, sessions, by_file)
        self._last = (key, found)
        return found

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
        start: datetime,
        end: datetime,
        sessions: frozenset[str],
        by_file: bool = True,
    ) -> list[TurnText]:
        """First the turns that read, edited or cited the note or a source, then those that
        say its title, a heading or a source word for word, then those that share its
        title's and headings' uncommon words, best first within each; at most MAX_TURNS."""
        sources = list(note.meta.sources or ())
        window = {"start": bound(start), "end": bound(end)}
        found: dict[int, tuple[Any, str]] = {}

        def take(rows: list[Any], match: str) -> None:
            for row in rows:
                if row.session in sessions and len(found) < MAX_TURNS:
                    found.setdefault(row.id, (row, match))

        paths = [str(note_file)] + [f"%/{s.lstrip('./')}" for s in sources]
        touched: list[Any] = []
        for pattern in paths if by_file else []:
            op = "LIKE" if pattern.startswith("%") else "="
            touched += self._rows(
                # CROSS JOIN keeps SQLite from walking every turn of the window first.
                "SELECT t.* FROM touched x CROSS JOIN turns t ON t.id = x.turn "
                f"WHERE x.path {op} :path AND t.started >= :start AND t.started < :end "
                "ORDER BY t.started DESC LIMIT 500",
                {"path": pattern, **window},
            )
        take(sorted(touched, key=lambda r: r.started or "", reverse=True), "file")
        texts = [note.title, *note.headings]
        phrases = [_phrase(text) for text in (*texts, *sources)]
        # The note's name is words too: ``config/build.md`` says "config" and "build".
        named = [*texts, note.path.removesuffix(".md").replace("/", " ").replace("-", " ")]
        for query, match in (
            (" OR ".join(dict.fromkeys(p for p in phrases if p)), "phrase"),
            (_words(named), "words"),
        ):
            if query and len(found) < MAX_TURNS:
                take(self._search(query, window), match)
        return [
            replace(text, match=found[row_id][1])
            for row_id, text in zip(found, self._texts(r for r, _ in found.values()), strict=True)
        ]

    def _search(self, query: str, window: dict[str, str]) -> list[Any]:
        return self._rows(
            "SELECT t.* FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid "
            "WHERE turns_fts MATCH :query AND t.started >= :start AND t.started < :end "
            "ORDER BY bm25(turns_fts), t.started DESC LIMIT 500",
            {"query": query, **window},
        )

    def turn(self, session: str, ordinal: int) -> TurnText | None:
        """The turn ``ordinal`` of ``session``, or None when the index has no such turn."""
        rows = self._rows(
            "SELECT * FROM turns WHERE session = :session AND ordinal = :ordinal",
            {"session": session, "ordinal": ordinal},
        )
        return self._texts(rows)[0] if rows else None

    def sessions(self, ids: Iterable[str]) -> dict[str, tuple[str | None, str | None, list[int]]]:
        """For each indexed session of ``ids``: its first and last turn times and ordinals."""
        wanted = set(ids)
        spans: dict[str, tuple[str | None, str | None, list[int]]] = {}
        for row in self._rows(
            "SELECT session, ordinal, started, ended FROM turns ORDER BY session, ordinal", {}
        ):
            if row.session not in wanted:
                continue
            first, last, ordinals = spans.get(row.session, (None, None, []))
            ordinals.append(row.ordinal)
            moment = row.ended or row.started
            spans[row.session] = (
                first or row.started,
                max(filter(None, (last, moment)), default=None),
                ordinals,
            )
        return spans
