"""The team index as dreaming reads it: :class:`~hippo_core.dream.turns.TurnIndex`'s
questions, asked of every member's turns of the workspace's project on PostgreSQL.

The way turns are found is the local index's, in the same order: the note's file among the
files a turn touched (pushed relative to the workspace, so every member's clone matches),
its title, a heading or a source as a phrase (``phraseto_tsquery``), then its weighted
terms (``ts_rank`` per term, times the term's weight). Only the SQL differs, here. Each
turn carries ``who``, so prompts, proposals, reports and receipts can say whose session it
was.

A session id two machines both used belongs to both; the dream keys turns by session and
ordinal, so this machine's session wins the lookup of a single turn.

A turn another member's dream has dreamed (``hippo_dreamed``) is not dreamed again: the
window's questions leave it out, and so does the search for late arrivals.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.dream.model import Chunk, TurnText
from hippo_core.dream.turns import _KINDS, TurnIndex, bound
from hippo_core.index import team_schema

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from hippo_core.workspace.folder import Workspace

#: A turn's columns as the readers need them, with whose it is.
_TURN = (
    "t.id, t.session, t.ordinal, t.started, t.prompt, t.answer, t.tools, t.member, t.machine, "
    "t.external"
)
#: What a turn of this machine that its local index no longer holds reads as: the server's
#: copy is never taken for this machine's own words.
NOT_LOCAL = "(this machine's turn is not in its local index; the team index's copy is not read)"
_WINDOW = "t.project = :project AND t.started >= :start AND t.started < :end"
#: A turn no other machine's dream has dreamed.
_OURS_TO_DREAM = (
    "NOT EXISTS (SELECT 1 FROM hippo_dreamed d WHERE d.machine = t.machine "
    "AND d.session = t.session AND d.ordinal = t.ordinal AND d.dreamer <> :machine)"
)


class TeamTurnIndex(TurnIndex):
    """Read-only queries over the team index, limited to one project."""

    def __init__(self, engine: Engine, project: str, machine: str, workspace: Workspace) -> None:
        super().__init__(engine, workspace.root)
        self.project = project
        self.machine = machine
        self.folder = workspace.root
        self._local: TurnIndex | None = None
        self._local_opened = False

    def close(self) -> None:
        if self._local is not None:
            self._local.close()
        super().close()

    def _texts(self, rows: Iterable[Any]) -> list[TurnText]:
        """The turns of ``rows``: the other members' as the server holds them, this
        machine's own from its local index, which anyone who can write to the server
        cannot change (a turn the local index no longer holds reads as :data:`NOT_LOCAL`)."""
        rows = list(rows)
        theirs = [row for row in rows if row.machine != self.machine]
        texts = dict(zip((row.id for row in theirs), super()._texts(theirs), strict=True))
        found = []
        for row in rows:
            if row.machine != self.machine:
                found.append(texts[row.id])
                continue
            mine = self._mine(row.session, row.ordinal)
            found.append(
                mine or TurnText(row.session, row.ordinal, row.started, NOT_LOCAL, NOT_LOCAL)
            )
        return found

    def _mine(self, session: str, ordinal: int) -> TurnText | None:
        if not self._local_opened:
            from hippo_core.files.home import index_path

            self._local_opened = True
            self._local = TurnIndex.open(index_path(), self.folder)
        return self._local.turn(session, ordinal) if self._local is not None else None

    def _rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        return super()._rows(sql, {"project": self.project, "machine": self.machine, **params})

    def records(self, latest: int | None = None) -> list[dict[str, Any]]:
        """The other machines' sessions of the project, as session records the dream reads
        (``kind`` ``team``, with ``who``): this machine's are in ``.hippo/sessions/``. With
        ``latest``, only that many, those that started last (their first prompts looked up
        for those alone)."""
        some = "" if latest is None else " ORDER BY started DESC NULLS LAST LIMIT :latest"
        rows = self._rows(
            "SELECT s.*, (SELECT t.prompt FROM hippo_turns t WHERE t.machine = s.machine "
            "AND t.session = s.id ORDER BY t.ordinal LIMIT 1) AS task FROM (SELECT * FROM "
            f"hippo_sessions WHERE project = :project AND machine <> :machine{some}) s "
            "ORDER BY s.started, s.id",
            {"latest": max(latest or 0, 0)},
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
                "handoff_derived": bool(row.handoff_derived),
                "notes": [],
            }
            for row in rows
        ]

    def _touched_rows(self, ids: str) -> list[Any]:
        return self._rows(f"SELECT turn, kind, path FROM hippo_touched WHERE turn IN ({ids})", {})

    def _within(self, window: dict[str, Any]) -> str:
        where = f"{_WINDOW} AND {_OURS_TO_DREAM}"
        if "upto" in window:
            where += " AND t.arrived <= :upto"
        if "only" in window:
            where += " AND t.session = ANY(:only)"
        return where

    def _params(self, window: dict[str, Any]) -> dict[str, Any]:
        return window

    def arrival(self) -> int:
        """Where the server's arrivals stand, read once no push is halfway through."""
        from sqlalchemy import text
        from sqlalchemy.exc import DBAPIError

        from hippo_core.index.team import unreachable

        try:
            with self.engine.begin() as conn:
                conn.execute(text(f"SELECT pg_advisory_xact_lock({team_schema.ARRIVALS_LOCK})"))
                found = conn.execute(
                    text("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM hippo_arrival")
                ).scalar()
        except DBAPIError as exc:
            raise unreachable(self.engine.url.render_as_string(), exc) from None
        return int(found or 0)

    def arrived(
        self, after: int, upto: int, before: datetime, sessions: frozenset[str]
    ) -> dict[tuple[str, int], str]:
        """The other machines' turns of ``sessions`` that reached the server after ``after``
        (up to ``upto``), started before ``before``, and no dream has dreamed; this
        machine's own are the local index's to tell."""
        rows = self._rows(
            "SELECT t.session, t.ordinal, t.started FROM hippo_turns t "
            "WHERE t.project = :project AND t.machine <> :machine AND t.arrived > :after "
            "AND t.arrived <= :upto AND t.started < :before AND NOT EXISTS (SELECT 1 FROM "
            "hippo_dreamed d WHERE d.machine = t.machine AND d.session = t.session "
            "AND d.ordinal = t.ordinal)",
            {"after": after, "upto": upto, "before": bound(before)},
        )
        return {(r.session, r.ordinal): r.started for r in rows if r.session in sessions}

    def handoffs_arrived(self, after: int, upto: int, before: datetime) -> dict[str, str]:
        """The other machines' sessions whose handoff (or end) reached the server after
        ``after`` (up to ``upto``), that ended before ``before``, and whose handoff no dream
        has taken: their end time, by session."""
        rows = self._rows(
            "SELECT s.id, s.ended FROM hippo_sessions s WHERE s.project = :project "
            "AND s.machine <> :machine AND s.arrived > :after AND s.arrived <= :upto "
            "AND s.handoff IS NOT NULL AND s.ended < :before AND NOT EXISTS (SELECT 1 FROM "
            "hippo_dreamed d WHERE d.machine = s.machine AND d.session = s.id "
            "AND d.ordinal = -1)",
            {"after": after, "upto": upto, "before": bound(before)},
        )
        return {r.id: r.ended for r in rows}

    def handoffs_dreamed(self) -> dict[str, str]:
        """The sessions whose handoff another machine's dream has taken, with who dreamed."""
        rows = self._rows(
            "SELECT session, member FROM hippo_dreamed WHERE project = :project "
            "AND ordinal = -1 AND dreamer <> :machine",
            {},
        )
        return {r.session: r.member for r in rows}

    def record_dreamed(self, chunk: Chunk, handoffs: list[str]) -> None:
        """Say on the server that this machine's dream has dreamed the turns of ``chunk``
        (its chosen turns, or the window's turns up to the last arrival it read) and the
        handoffs of the sessions ``handoffs``; the server names the member who did."""
        from sqlalchemy import text

        from hippo_core.base.clock import stamp

        who_at = {"at": stamp()}
        insert = (
            "INSERT INTO hippo_dreamed (machine, session, ordinal, project, dreamer, at) "
            "SELECT {what}, CAST(:project AS text), CAST(:machine AS varchar), "
            "CAST(:at AS text) FROM {where} ON CONFLICT DO NOTHING"
        )
        statements: list[tuple[str, dict[str, Any]]] = []
        if chunk.turns is not None:
            pairs = sorted(chunk.turns)
            statements.append(
                (
                    insert.format(
                        what="t.machine, t.session, t.ordinal",
                        where="hippo_turns t JOIN unnest(CAST(:sessions AS text[]), "
                        "CAST(:ordinals AS bigint[])) AS p(session, ordinal) "
                        "ON t.session = p.session AND t.ordinal = p.ordinal "
                        "WHERE t.project = :project",
                    ),
                    {"sessions": [s for s, _ in pairs], "ordinals": [o for _, o in pairs]},
                )
            )
        else:
            window: dict[str, Any] = {"start": bound(chunk.start), "end": bound(chunk.end)}
            if self.upto is not None:
                window["upto"] = self.upto
            statements.append(
                (
                    insert.format(
                        what="t.machine, t.session, t.ordinal",
                        where=f"hippo_turns t WHERE {self._within(window)}",
                    ),
                    window,
                )
            )
        if handoffs:
            statements.append(
                (
                    insert.format(
                        what="s.machine, s.id, -1",
                        where="hippo_sessions s WHERE s.project = :project AND s.id = ANY(:ids)",
                    ),
                    {"ids": sorted(handoffs)},
                )
            )
        from sqlalchemy.exc import DBAPIError

        from hippo_core.index.team import unreachable

        try:
            with self.engine.begin() as conn:
                for sql, params in statements:
                    conn.execute(
                        text(sql),
                        {"project": self.project, "machine": self.machine, **who_at, **params},
                    )
        except DBAPIError as exc:
            raise unreachable(self.engine.url.render_as_string(), exc) from None

    def _file_rows(self, note_file: Path, sources: list[str], window: dict[str, Any]) -> list[Any]:
        exact = [str(note_file), self._relative(note_file)]
        patterns = [f"%/{s.lstrip('./')}" for s in sources] + [s.lstrip("./") for s in sources]
        like = " OR x.path LIKE ANY(:like)" if patterns else ""
        return self._rows(
            f"SELECT DISTINCT {_TURN} FROM hippo_touched x JOIN hippo_turns t ON t.id = x.turn "
            f"WHERE {self._within(window)} AND (x.path = ANY(:exact){like}) "
            "ORDER BY t.started DESC LIMIT 500",
            {"exact": exact, "like": patterns, **window},
        )

    def _phrase_rows(self, phrases: list[str], window: dict[str, Any]) -> list[Any]:
        wanted = [phrase.strip('"') for phrase in phrases]
        query = " || ".join(f"phraseto_tsquery('simple', :p{n})" for n in range(len(wanted)))
        return self._rows(
            f"SELECT {_TURN} FROM hippo_turns t, (SELECT {query}) AS q(q) "
            f"WHERE {self._within(window)} AND t.search @@ q.q "
            "ORDER BY ts_rank(t.search, q.q) DESC, t.started DESC LIMIT 500",
            {**{f"p{n}": phrase for n, phrase in enumerate(wanted)}, **window},
        )

    def _term_rows(self, term: str, window: dict[str, Any]) -> list[Any]:
        return self._rows(
            f"SELECT {_TURN}, ts_rank(t.search, q) AS score "
            "FROM hippo_turns t, to_tsquery('simple', :query) q "
            f"WHERE {self._within(window)} AND t.search @@ q ORDER BY score DESC LIMIT 500",
            {"query": _tsquery_of(term), **window},
        )

    def _window_rows(self, window: dict[str, Any]) -> list[Any]:
        return self._rows(
            f"SELECT {_TURN} FROM hippo_turns t WHERE {self._within(window)}",
            self._params(window),
        )

    def _turn_rows(self, session: str, ordinal: int) -> list[Any]:
        return self._rows(
            f"SELECT {_TURN} FROM hippo_turns t WHERE t.project = :project "
            "AND t.session = :session AND t.ordinal = :ordinal ORDER BY t.machine <> :machine",
            {"session": session, "ordinal": ordinal},
        )

    def _span_rows(self, wanted: set[str]) -> list[Any]:
        if not wanted:
            return []
        return self._rows(
            "SELECT session, ordinal, started, ended FROM hippo_turns "
            "WHERE project = :project AND session = ANY(:ids) ORDER BY session, ordinal",
            {"ids": list(wanted)},
        )

    def _relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.folder.resolve()).as_posix()
        except ValueError:
            return str(path)

    def session_files(self, session: str) -> list[tuple[str, str]]:
        """``(read|edited|cited, path)`` for every file the session's turns touched, a file
        of the workspace as it is in this clone."""
        rows = self._rows(
            "SELECT x.kind, x.path FROM hippo_turns t JOIN hippo_touched x ON x.turn = t.id "
            "WHERE t.project = :project AND t.session = :sid ORDER BY t.ordinal",
            {"sid": session},
        )
        return [(_KINDS.get(r.kind, r.kind), str(self.folder / r.path)) for r in rows]

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


def turn_index(workspace: Workspace) -> TurnIndex | None:
    """The index a dream or an eval reads for ``workspace``: the team's when it names one
    (an error when the server cannot be read), else this machine's (None before any
    ingest)."""
    from hippo_core.files.home import index_path
    from hippo_core.index import team

    url = team.configured_url(workspace)
    if not url:
        return TurnIndex.open(index_path(), workspace.root)
    return TeamTurnIndex(
        team.engine(url), team.project_of(workspace), team.machine()["id"], workspace
    )
