"""The team index as dreaming reads it: :class:`~hippo_core.dream.turns.TurnIndex`'s
questions, asked of every member's turns of the workspace's project on PostgreSQL.

The same three ways of finding the turns that mention a note, in the same order: the note's
file among the files a turn touched (pushed relative to the workspace, so every member's
clone matches), its title, a heading or a source as a phrase (``phraseto_tsquery``), then its
weighted terms (``ts_rank`` per term, times the term's weight). Each turn carries ``who``,
so prompts, proposals, reports and receipts can say whose session it was.

A session id two machines both used belongs to both; the dream keys turns by session and
ordinal, so this machine's session wins the lookup of a single turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.dream.model import TurnText
from hippo_core.dream.turns import MAX_TURNS, _phrase, bound, word_weights

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from hippo_core.notes.note import Note
    from hippo_core.workspace import Workspace

_KINDS = {"r": "read", "e": "edited", "c": "cited"}
#: A turn's columns as the readers need them, with whose it is.
_TURN = "t.id, t.session, t.ordinal, t.started, t.prompt, t.answer, t.tools, t.member, t.machine"


class TeamTurnIndex:
    """Read-only queries over the team index, limited to one project."""

    def __init__(self, engine: Engine, project: str, machine: str, workspace: Workspace) -> None:
        self.engine = engine
        self.project = project
        self.machine = machine
        self.root = workspace.root
        self._conn: Connection | None = None
        self._last: tuple[tuple[Any, ...], list[TurnText]] | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.engine.dispose()

    def _rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        from sqlalchemy import text

        if self._conn is None:
            self._conn = self.engine.connect()
        return list(self._conn.execute(text(sql), {"project": self.project, **params}).all())

    def records(self) -> list[dict[str, Any]]:
        """The other machines' sessions of the project, as session records the dream reads
        (``kind`` ``team``, with ``who``): this machine's are in ``.hippo/sessions/``."""
        rows = self._rows(
            "SELECT s.*, (SELECT t.prompt FROM hippo_turns t WHERE t.machine = s.machine "
            "AND t.session = s.id ORDER BY t.ordinal LIMIT 1) AS task FROM hippo_sessions s "
            "WHERE s.project = :project AND s.machine <> :machine ORDER BY s.started, s.id",
            {"machine": self.machine},
        )
        return [
            {
                "id": row.id,
                "tool": row.tool,
                "kind": "team",
                "who": row.member,
                "started": row.started,
                "ended": row.ended,
                "task": row.task,
                "handoff": row.handoff,
                "notes": [],
            }
            for row in rows
        ]

    def _texts(self, rows: Iterable[Any]) -> list[TurnText]:
        rows = list(rows)
        files: dict[int, list[str]] = {}
        if rows:
            ids = ",".join(str(int(r.id)) for r in rows)
            for row in self._rows(
                f"SELECT turn, kind, path FROM hippo_touched WHERE turn IN ({ids})", {}
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
                who=r.member,
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
        body_terms: Iterable[str] = (),
    ) -> list[TurnText]:
        """As :meth:`hippo_core.dream.turns.TurnIndex.mentioning`, over the team's turns."""
        body_terms = tuple(body_terms)
        key = (note.path, start, end, frozenset(sessions), by_file, body_terms)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        found = self._mentioning(note, note_file, start, end, sessions, by_file, body_terms)
        self._last = (key, found)
        return found

    def _mentioning(
        self,
        note: Note,
        note_file: Path,
        start: datetime,
        end: datetime,
        sessions: frozenset[str],
        by_file: bool,
        body_terms: tuple[str, ...],
    ) -> list[TurnText]:
        sources = list(note.meta.sources or ())
        window = {"start": bound(start), "end": bound(end)}
        found: dict[int, tuple[Any, str]] = {}

        def take(rows: list[Any], match: str) -> None:
            for row in rows:
                if row.session in sessions and len(found) < MAX_TURNS:
                    found.setdefault(row.id, (row, match))

        if by_file:
            exact = [str(note_file), self._relative(note_file)]
            patterns = [f"%/{s.lstrip('./')}" for s in sources] + [s.lstrip("./") for s in sources]
            like = " OR x.path LIKE ANY(:like)" if patterns else ""
            touched = self._rows(
                f"SELECT DISTINCT {_TURN} FROM hippo_touched x "
                "JOIN hippo_turns t ON t.id = x.turn "
                f"WHERE t.project = :project AND (x.path = ANY(:exact){like}) "
                "AND t.started >= :start AND t.started < :end ORDER BY t.started DESC LIMIT 500",
                {"exact": exact, "like": patterns, **window},
            )
            take(touched, "file")
        phrases = [_phrase(text) for text in (note.title, *note.headings, *sources)]
        wanted = [p.strip('"') for p in dict.fromkeys(p for p in phrases if p)]
        if wanted and len(found) < MAX_TURNS:
            query = " || ".join(f"phraseto_tsquery('simple', :p{n})" for n in range(len(wanted)))
            params = {f"p{n}": phrase for n, phrase in enumerate(wanted)}
            take(
                self._rows(
                    f"SELECT {_TURN} FROM hippo_turns t, ({'SELECT ' + query}) AS q(q) "
                    "WHERE t.project = :project AND t.search @@ q.q "
                    "AND t.started >= :start AND t.started < :end "
                    "ORDER BY ts_rank(t.search, q.q) DESC, t.started DESC LIMIT 500",
                    {**params, **window},
                ),
                "phrase",
            )
        if len(found) < MAX_TURNS:
            take(self._by_words(word_weights(note, body_terms), window), "words")
        return [
            replace(text, match=found[row_id][1])
            for row_id, text in zip(found, self._texts(r for r, _ in found.values()), strict=True)
        ]

    def _by_words(self, weights: dict[str, float], window: dict[str, str]) -> list[Any]:
        scores: dict[int, float] = {}
        rows: dict[int, Any] = {}
        for term, weight in weights.items():
            for row in self._rows(
                f"SELECT {_TURN}, ts_rank(t.search, q) AS score "
                "FROM hippo_turns t, to_tsquery('simple', :query) q "
                "WHERE t.project = :project AND t.search @@ q "
                "AND t.started >= :start AND t.started < :end ORDER BY score DESC LIMIT 500",
                {"query": _tsquery_of(term), **window},
            ):
                rows.setdefault(row.id, row)
                scores[row.id] = scores.get(row.id, 0.0) + weight * row.score
        best = sorted(scores, key=lambda i: rows[i].started or "", reverse=True)
        best.sort(key=lambda i: -round(scores[i], 9))
        return [rows[i] for i in best]

    def _relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)

    def turn(self, session: str, ordinal: int) -> TurnText | None:
        """The turn ``ordinal`` of ``session`` (this machine's first, when two have the id)."""
        if not 0 <= ordinal < 2**63:
            return None
        rows = self._rows(
            f"SELECT {_TURN} FROM hippo_turns t WHERE t.project = :project "
            "AND t.session = :session AND t.ordinal = :ordinal "
            "ORDER BY t.machine <> :machine LIMIT 1",
            {"session": session, "ordinal": ordinal, "machine": self.machine},
        )
        return self._texts(rows)[0] if rows else None

    def sessions(self, ids: Iterable[str]) -> dict[str, tuple[str | None, str | None, list[int]]]:
        """For each session of ``ids``: its first and last turn times and its ordinals."""
        wanted = list(set(ids))
        spans: dict[str, tuple[str | None, str | None, list[int]]] = {}
        if not wanted:
            return spans
        for row in self._rows(
            "SELECT session, ordinal, started, ended FROM hippo_turns "
            "WHERE project = :project AND session = ANY(:ids) ORDER BY session, ordinal",
            {"ids": wanted},
        ):
            first, last, ordinals = spans.get(row.session, (None, None, []))
            if row.ordinal not in ordinals:
                ordinals.append(row.ordinal)
            moment = row.ended or row.started
            spans[row.session] = (
                first or row.started,
                max(filter(None, (last, moment)), default=None),
                ordinals,
            )
        return spans

    def session_files(self, session: str) -> list[tuple[str, str]]:
        """``(read|edited|cited, path)`` for every file the session's turns touched, a file
        of the workspace as it is in this clone."""
        rows = self._rows(
            "SELECT x.kind, x.path FROM hippo_turns t JOIN hippo_touched x ON x.turn = t.id "
            "WHERE t.project = :project AND t.session = :sid ORDER BY t.ordinal",
            {"sid": session},
        )
        return [(_KINDS.get(r.kind, r.kind), str(self.root / r.path)) for r in rows]

    def first_prompt(self, session: str) -> str:
        rows = self._rows(
            "SELECT prompt FROM hippo_turns WHERE project = :project AND session = :sid "
            "ORDER BY ordinal LIMIT 1",
            {"sid": session},
        )
        return str(rows[0].prompt) if rows else ""

    def touching(self, note_file: Path, sessions: frozenset[str]) -> set[tuple[str, int]]:
        rows = self._rows(
            "SELECT t.session, t.ordinal FROM hippo_touched x JOIN hippo_turns t "
            "ON t.id = x.turn WHERE t.project = :project AND x.path = ANY(:paths)",
            {"paths": [str(note_file), self._relative(note_file)]},
        )
        return {(r.session, r.ordinal) for r in rows if r.session in sessions}


def _tsquery_of(term: str) -> str:
    """A stemmed term as a prefix query (``cach`` finds ``cache`` and ``caching``), as
    :func:`hippo_core.dream.turns._term_query` asks FTS5."""
    bare = term.replace("'", "''")
    if len(term) <= 3:
        return f"'{bare}'"
    if term.endswith("y"):
        return f"'{bare}':* | '{bare[:-1]}i':*"
    return f"'{bare}':*"


def turn_index(workspace: Workspace) -> Any:
    """The index a dream or an eval reads for ``workspace``: the team's when it names one
    (an error when the server cannot be read), else this machine's (None before any
    ingest)."""
    from hippo_core.dream.turns import TurnIndex
    from hippo_core.home import index_path
    from hippo_core.index import team

    url = team.configured_url(workspace)
    if not url:
        return TurnIndex.open(index_path())
    return TeamTurnIndex(
        team.engine(url), team.project_of(workspace), team.machine()["id"], workspace
    )
