"""The team's sessions of the project for ``relevance = "history"``, pulled at each ingest.

The hooks read the local index alone (a hook cannot wait on a server). So an ingest that
pushes to the team index also pulls from it what the history ranking needs of the other
machines' sessions of the project: their prompts and the Markdown files they read or edited,
kept as the local history's rows (:mod:`hippo_core.index.history`) under ``team:<machine>:
<session>``, the paths made this clone's (the team index keeps them relative to the
workspace). A session is pulled again when its turns or files changed there (its count of
turns, its last turn and its count of files say so), and its rows go when it is gone there
(made private, or the server was made again). Only sessions the server holds count: what
left their machines, redacted and never private. A server that is away leaves what was
pulled before; the next ingest catches up.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

    from sqlalchemy import Connection

    from hippo_core.workspace.folder import Workspace

#: Sessions fetched per query.
BATCH = 200
PREFIX = "team:"


def pull(workspace: Workspace, url: str) -> int:
    """Bring the local history's rows of the team's other sessions of the project up to
    date with the server at ``url``; how many sessions were pulled or dropped. Raises
    :class:`~hippo_core.base.errors.HippoError` when the server cannot be read."""
    from sqlalchemy.exc import DBAPIError

    from hippo_core.files.home import hippo_home
    from hippo_core.index import db, team

    index = hippo_home() / "index.sqlite"
    if not index.exists():
        return 0
    made = team.engine(url, timeout=team.PUSH_TIMEOUT)
    project, here = team.project_of(workspace), team.machine()["id"]
    try:
        with made.connect() as server:
            found = _versions(server, project, here)
            with db.ingest_lock(hippo_home(), lambda line: None):
                local = db.connect(index)  # as the ingest just before left it
                try:
                    return _apply(server, local, workspace, project, found)
                finally:
                    local.close()
    except DBAPIError as exc:
        raise team.unreachable(url, exc) from None
    finally:
        made.dispose()


def _versions(server: Connection, project: str, here: str) -> dict[str, tuple[str, Any]]:
    """Each other machine's session of ``project`` on the server, by its local name: what
    it is now (turns, last turn, files) and when it started."""
    from sqlalchemy import text

    where = "project = :project AND machine <> :here"
    params = {"project": project, "here": here}
    turns = server.execute(
        text(
            f"SELECT machine, session, count(*), max(id) FROM hippo_turns WHERE {where} "
            "GROUP BY machine, session"
        ),
        params,
    ).all()
    files = dict(
        ((m, s), n)
        for m, s, n in server.execute(
            text(
                "SELECT t.machine, t.session, count(*) FROM hippo_touched x JOIN hippo_turns t "
                f"ON t.id = x.turn WHERE t.{where.replace(' AND ', ' AND t.')} "
                "GROUP BY t.machine, t.session"
            ),
            params,
        ).all()
    )
    started = dict(
        ((m, i), at)
        for m, i, at in server.execute(
            text(f"SELECT machine, id, started FROM hippo_sessions WHERE {where}"), params
        ).all()
    )
    return {
        f"{PREFIX}{m}:{s}": (f"{n}:{last}:{files.get((m, s), 0)}", started.get((m, s)))
        for m, s, n, last in turns
    }


def _apply(
    server: Connection,
    local: sqlite3.Connection,
    workspace: Workspace,
    project: str,
    found: dict[str, tuple[str, Any]],
) -> int:
    from hippo_core.index import history

    rows = local.execute("SELECT session, version FROM history WHERE team")
    known = dict(rows.fetchall())
    gone = [sid for sid in known if sid not in found]
    changed = [sid for sid, (version, _) in found.items() if known.get(sid) != version]
    if not gone and not changed:
        return 0
    local.execute("BEGIN IMMEDIATE")
    try:
        for start in range(0, len(gone), BATCH):
            history.forget(local, gone[start : start + BATCH])
        for start in range(0, len(changed), BATCH):
            batch = changed[start : start + BATCH]
            history.forget(local, batch)
            for sid, (prompts, paths) in _fetch(server, project, batch).items():
                if not paths:
                    continue  # opened no Markdown file: nothing to rank by
                opened = [os.path.join(workspace.folder, path) for path in paths]
                started = found[sid][1]
                at = history.epoch(started if isinstance(started, str) else None)
                history.store(local, sid, prompts, opened, at, version=found[sid][0])
        history.count_sizes(local)
    except BaseException:
        local.execute("ROLLBACK")
        raise
    local.execute("COMMIT")
    return len(gone) + len(changed)


def _fetch(
    server: Connection, project: str, sessions: list[str]
) -> dict[str, tuple[list[str], list[str]]]:
    """The prompts (in order) and the Markdown files read or edited of ``sessions``."""
    from sqlalchemy import text

    by_machine: dict[str, list[str]] = {}
    for sid in sessions:
        machine, _, session = sid[len(PREFIX) :].partition(":")
        by_machine.setdefault(machine, []).append(session)
    found: dict[str, tuple[list[str], list[str]]] = {}
    for machine, ids in by_machine.items():
        params = {"project": project, "machine": machine, "ids": ids}
        where = "t.project = :project AND t.machine = :machine AND t.session = ANY(:ids)"
        for session, prompt in server.execute(
            text(
                f"SELECT t.session, t.prompt FROM hippo_turns t WHERE {where} "
                "ORDER BY t.session, t.ordinal"
            ),
            params,
        ):
            found.setdefault(f"{PREFIX}{machine}:{session}", ([], []))[0].append(prompt)
        for session, path in server.execute(
            text(
                "SELECT DISTINCT t.session, x.path FROM hippo_touched x JOIN hippo_turns t "
                f"ON t.id = x.turn WHERE {where} AND x.kind IN ('r', 'e') "
                "AND x.path LIKE '%.md' ORDER BY t.session, x.path"
            ),
            params,
        ):
            found.setdefault(f"{PREFIX}{machine}:{session}", ([], []))[1].append(path)
    return found
