"""``hippo search``: full-text search over the indexed turns, with snippets."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, text

from hippo_core.agents.sessions import session_id
from hippo_core.base.clock import utc_now
from hippo_core.base.errors import UsageError

_TOKEN = re.compile(r"[^\W_]+\*?|[^\W_]*_[\w]*\*?")
_RELATIVE = re.compile(r"(\d+)([hdw])")


@dataclass(frozen=True)
class Hit:
    session: str
    ordinal: int
    tool: str
    started: str | None
    cwd: str | None
    snippet: str
    who: str | None = None
    """Whose session it was, in a team index; None in the local one."""
    external: list[str] | None = None
    """What the turn read from outside the project (:attr:`TurnText.external
    <hippo_core.dream.model.TurnText.external>`); None when it was not recorded."""


def outside(stored: str | None) -> list[str] | None:
    """A turn's ``external`` column as a list (None: not recorded)."""
    if stored is None:
        return None
    found = json.loads(stored)
    return [str(item) for item in found] if isinstance(found, list) else None


def fts_query(query: str) -> str:
    """The words of ``query`` as an FTS5 query: every word must occur (``word*``: prefix)."""
    words = [w for w in _TOKEN.findall(query) if w.strip("*")]
    if not words:
        raise UsageError("the search query has no words to look for")
    return " ".join(f'"{w[:-1]}"*' if w.endswith("*") else f'"{w}"' for w in words)


def since_span(value: str) -> timedelta | None:
    """The span of a relative ``--since`` (``24h``, ``7d``, ``2w``); None for a date or time.
    A span that reaches back before the year 1 is a usage error."""
    relative = _RELATIVE.fullmatch(value.strip())
    if not relative:
        return None
    parse_since(value)  # the same checks, the same error
    amount, unit = int(relative.group(1)), relative.group(2)
    return timedelta(hours=amount * {"h": 1, "d": 24, "w": 24 * 7}[unit])


def parse_since(value: str, now: datetime | None = None) -> str:
    """``2026-11-01``, an ISO time, or ``24h``/``7d``/``2w`` back from now, as ISO UTC."""
    now = now or utc_now()
    relative = _RELATIVE.fullmatch(value.strip())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        hours = amount * {"h": 1, "d": 24, "w": 24 * 7}[unit]
        try:
            return (now - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S")
        except OverflowError:
            raise UsageError(
                f"--since {value!r} reaches back before the year 1; give a shorter span "
                "or a date (2026-11-01)"
            ) from None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"--since {value!r}: give a date (2026-11-01), a time (2026-11-01T09:00) "
            "or a span back from now (24h, 7d, 2w)"
        ) from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed.strftime("%Y-%m-%dT%H:%M:%S")


def filters(
    *, tool: str | None, session: str | None, since: str | None
) -> tuple[list[str], dict[str, object]]:
    """The conditions on the turns ``t`` that ``--tool``, ``--session`` and ``--since`` ask
    for, and their parameters (the local index's and the team's alike)."""
    where: list[str] = []
    params: dict[str, object] = {}
    if tool:
        where.append("t.tool = :tool")
        params["tool"] = tool
    if session:
        where.append("t.session = :session")
        params["session"] = session_id(session)
    if since:
        where.append("t.started >= :since")
        params["since"] = parse_since(since)
    return where, params


def find_turns(
    query: str,
    *,
    tool: str | None = None,
    session: str | None = None,
    since: str | None = None,
    limit: int = 20,
) -> list[Hit]:
    """What ``hippo search`` finds: :func:`search` over the index in ``$HIPPO_HOME``."""
    from hippo_core.files.home import index_path
    from hippo_core.index.db import open_for_reading

    engine = open_for_reading(index_path())
    try:
        return search(engine, query, tool=tool, session=session, since=since, limit=limit)
    finally:
        engine.dispose()


def search(
    engine: Engine,
    query: str,
    *,
    tool: str | None = None,
    session: str | None = None,
    since: str | None = None,
    limit: int = 20,
) -> list[Hit]:
    """The best ``limit`` turns matching ``query``, best first."""
    where, params = filters(tool=tool, session=session, since=since)
    where.insert(0, "turns_fts MATCH :query")
    params.update(query=fts_query(query), limit=limit)
    sql = text(
        "SELECT t.session, t.ordinal, t.tool, t.started, t.cwd, t.external, "
        "snippet(turns_fts, -1, '[', ']', ' ... ', 16) AS snippet "
        "FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid "
        f"WHERE {' AND '.join(where)} ORDER BY bm25(turns_fts), t.started DESC LIMIT :limit"
    )
    with engine.connect() as conn:
        rows = conn.execute(sql, params).all()
    return [
        Hit(
            r.session,
            r.ordinal,
            r.tool,
            r.started,
            r.cwd,
            " ".join(r.snippet.split()),
            external=outside(r.external),
        )
        for r in rows
    ]
