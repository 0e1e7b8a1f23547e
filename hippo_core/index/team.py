"""The team index: a workspace's sessions on a PostgreSQL server the team shares.

The local index stays what it is (SQLite in ``$HIPPO_HOME``, written by every ingest, read
when the server is away). A workspace whose ``index_url`` (or ``HIPPO_INDEX_URL``) names a
server also *pushes*: after each ingest, the sessions of the workspace that changed since
the last push go to the server, with who (``HIPPO_MEMBER``, else git's ``user.email``, else
the login name) and which machine (an id made once, in ``$HIPPO_HOME/machine.json``) they
came from. Only what the local index holds leaves the machine: text already redacted at
ingest, no private session, no turn of one; a session marked private since it was pushed is
deleted from the server.

A push is one transaction, under a lock per machine on the server: a server that goes away
in the middle keeps none of it, and the local watermark (the local index's generation the
push reached, in ``$HIPPO_HOME/team/``) moves only after the commit, so the next ingest
pushes it again. Rows are upserted by their keys (:mod:`hippo_core.index.team_schema`), so a
retry, or two ingests at once, never doubles a turn.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.distribution import install_hint, upgrade_hint
from hippo_core.errors import HippoError
from hippo_core.owner_only import owner_only_write

if TYPE_CHECKING:
    import sqlite3

    from sqlalchemy import Connection, Engine

    from hippo_core.index.search import Hit
    from hippo_core.workspace import Workspace

ENV = "HIPPO_INDEX_URL"
#: Sessions pushed per batch of statements, and turns per statement (PostgreSQL takes at
#: most 65,535 parameters in one, SQLite 32,766).
BATCH, TURN_BATCH = 200, 1000


def configured_url(workspace: Workspace | None) -> str:
    """The team index's URL: ``HIPPO_INDEX_URL``, else the workspace's ``index_url``."""
    from hippo_core.index_url import index_url_problem

    found = os.environ.get(ENV, "").strip()
    if found:
        if not found.startswith(("postgresql://", "postgresql+psycopg://")):
            raise HippoError(f"{ENV}={shown(found)}: give a postgresql+psycopg:// URL, or unset it")
        if problem := index_url_problem(found):
            raise HippoError(f"{ENV}={shown(found)}: {problem}; put it right, or unset it")
        return found
    return workspace.settings.index_url if workspace is not None else ""


def shown(url: str) -> str:
    """``url`` as it may be printed: its password, if it has one (after the user or as a
    ``password`` parameter), as ``***``."""
    import re
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "the index_url (not a URL)"
    query = re.sub(r"(^|&)(password=)[^&]*", r"\1\2***", parts.query)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return urlunsplit(parts._replace(query=query)) if query != parts.query else url
    user = userinfo.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}", query=query))


def project_of(workspace: Workspace) -> str:
    return workspace.settings.index_project or workspace.root.name


#: Seconds to wait for the server to answer: a push may wait; a search falls back sooner.
PUSH_TIMEOUT, READ_TIMEOUT = 10, 3


def engine(url: str, *, timeout: int = PUSH_TIMEOUT) -> Engine:
    """An engine for the team index at ``url``; its tables made when they are missing, and
    a schema of another version refused. Every failure is one :class:`HippoError`."""
    from sqlalchemy import create_engine
    from sqlalchemy.exc import ArgumentError

    url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise HippoError(f"the team index needs psycopg: {install_hint('postgres')}") from None
    try:
        made = create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": timeout})
    except (ArgumentError, ValueError) as exc:  # ValueError: a port that is not a number
        raise HippoError(f"index_url {shown(url)} is not a database URL ({exc})") from None
    try:
        _ensure_schema(made)
    except BaseException:
        made.dispose()
        raise
    return made


class Unreachable(HippoError):
    """The team's server cannot be reached or refuses us: the local index goes on."""


def unreachable(url: str, exc: BaseException) -> Unreachable:
    """One line for a server that cannot be reached, or refuses, with what to do."""
    cause = getattr(exc, "orig", None) or exc
    reason = " ".join(str(cause).split()) or type(cause).__name__
    if "password authentication failed" in reason:
        hint = "check the user and the password (in ~/.pgpass or PGPASSWORD)"
    else:
        hint = "the local index has everything; the next ingest catches up"
    return Unreachable(f"team index {shown(url)}: {reason[:300]}; {hint}")


def _ensure_schema(made: Engine) -> None:
    from sqlalchemy import inspect, select, text
    from sqlalchemy.exc import DBAPIError

    from hippo_core.index import team_schema

    url = made.url.render_as_string(hide_password=False)
    try:
        with made.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(7208, 1)"))  # one creator at a time
            if not inspect(conn).has_table("hippo_meta"):
                team_schema.metadata.create_all(conn)
                conn.execute(
                    team_schema.meta.insert().values(
                        key="schema_version", value=str(team_schema.SCHEMA_VERSION)
                    )
                )
                return
            found = conn.execute(
                select(team_schema.meta.c.value).where(team_schema.meta.c.key == "schema_version")
            ).scalar()
    except DBAPIError as exc:
        raise unreachable(url, exc) from None
    if found != str(team_schema.SCHEMA_VERSION):
        newer = found is not None and found.isdigit() and int(found) > team_schema.SCHEMA_VERSION
        what = (
            f"a newer hippo made it: upgrade hippo here ({upgrade_hint()})"
            if newer
            else "upgrade hippo on every machine that writes to it, then ask its owner to "
            "recreate it (its data is the members' local indexes, pushed again by each ingest)"
        )
        raise HippoError(
            f"team index {shown(url)} has schema {found}; this hippo writes schema "
            f"{team_schema.SCHEMA_VERSION}: {what}"
        )


# -- who and where -------------------------------------------------------------------------


def machine() -> dict[str, str]:
    """This machine's id in team indexes: made once, kept in ``$HIPPO_HOME/machine.json``."""
    import socket
    import uuid

    from hippo_core.home import hippo_home

    path = hippo_home() / "machine.json"
    found = _machine_in(path)
    if found is not None:
        return found
    made = {"id": uuid.uuid4().hex[:16], "name": socket.gethostname()}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    owner_only_write(tmp, json.dumps(made) + "\n", top=hippo_home())
    try:
        # Made once: two first ingests at once must agree on the machine, or each pushes
        # every session under an id of its own.
        os.link(tmp, path)
    except FileExistsError:
        found = _machine_in(path)
        if found is not None:
            return found
        os.replace(tmp, path)  # an unreadable one is made again
    finally:
        tmp.unlink(missing_ok=True)
    return made


def _machine_in(path: Path) -> dict[str, str] | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(found, dict) and isinstance(found.get("id"), str) and found["id"]:
        return {"id": found["id"], "name": str(found.get("name") or "")}
    return None


def member(workspace: Workspace) -> str:
    """Who pushes: ``HIPPO_MEMBER``, else git's ``user.email`` here, else the login name."""
    import getpass
    import subprocess

    given = os.environ.get("HIPPO_MEMBER", "").strip()
    if given:
        return given
    try:
        email = subprocess.run(
            ["git", "-C", str(workspace.root), "config", "user.email"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        email = ""
    return email or getpass.getuser()


# -- pushing -------------------------------------------------------------------------------


@dataclass
class Pushed:
    sessions: int = 0
    turns: int = 0
    removed: int = 0
    handoffs: int = 0

    @property
    def anything(self) -> bool:
        return bool(self.sessions or self.removed or self.handoffs)

    def line(self, url: str) -> str:
        what = f"{self.sessions} session{'' if self.sessions == 1 else 's'}"
        what += f" ({self.turns} turn{'' if self.turns == 1 else 's'})"
        if self.handoffs:
            what += f", {self.handoffs} handoff{'' if self.handoffs == 1 else 's'}"
        if self.removed:
            what += f", {self.removed} made private removed"
        return f"team index {shown(url)}: pushed {what}"


def _state_path(url: str, workspace: Workspace) -> Path:
    from hippo_core.home import hippo_home

    # A new share (or project) means a new state: everything is pushed again (upserts).
    settings = workspace.settings
    where = f"{shown(url)}\0{workspace.root.resolve()}\0{settings.index_share}"
    key = f"{where}\0{project_of(workspace)}".encode()
    return hippo_home() / "team" / f"{hashlib.sha256(key).hexdigest()[:24]}.json"


def _last_push(path: Path, index: Path, now: int) -> tuple[int | None, float | None]:
    """The local generation the last push reached and when it began; (None, None), push
    everything, when unknown or when the local index was rebuilt since."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        inode = os.stat(index).st_ino
    except (OSError, ValueError):
        return None, None
    if not isinstance(found, dict) or found.get("index") != inode:
        return None, None
    generation, began = found.get("generation"), found.get("records_at")
    if not isinstance(generation, int) or not 0 <= generation <= now:
        return None, None
    return generation, began if isinstance(began, (int, float)) else None


def push(workspace: Workspace, url: str, made: Engine | None = None) -> Pushed:
    """Push the workspace's sessions that changed since the last push; what went. ``made``
    is an engine of ``url`` the caller keeps (a dream reads from it after); without one, a
    push that has something to send makes its own."""
    import time

    from hippo_core.home import index_path
    from hippo_core.index.db import connect, generation
    from hippo_core.index.derived import _private_sessions, members, workspace_folders

    index = index_path()
    if not index.exists():
        return Pushed()
    state = _state_path(url, workspace)
    local = connect(index)
    started = time.time()
    try:
        now = generation(local)
        since, began = _last_push(state, index, now)
        handoffs = _handoffs(workspace, began)
        if since == now and not handoffs:
            return Pushed()
        folders = workspace_folders(workspace)
        rows = members(local, workspace, folders, since)
        others = _others(local, rows, since) if workspace.settings.index_share == "machine" else []
        private = _private_sessions(local, since)
        done = Pushed()
        if rows or others or private or handoffs:  # else nothing to say to the server
            server = made or engine(url)
            try:
                done = _send(server, url, local, workspace, folders, rows, private, others)
                done.handoffs = _send_handoffs(server, url, handoffs)
            finally:
                if made is None:
                    server.dispose()
    finally:
        local.close()
    from hippo_core.home import hippo_home

    written = {"url": shown(url), "generation": now, "index": os.stat(index).st_ino}
    text = json.dumps({**written, "records_at": started}) + "\n"
    owner_only_write(state, text, top=hippo_home())
    return done


def _handoffs(workspace: Workspace, since: float | None) -> dict[str, str]:
    """The handoffs sessions declared (``hippo session end --handoff``, the MCP tool) in
    records written since ``since`` (all when None), redacted: they live in the session
    records, not in the index, so the index's generation does not see them change."""
    from hippo_core import jsontext
    from hippo_core.transcripts.privacy import redact

    found: dict[str, str] = {}
    try:
        entries = list(os.scandir(workspace.sessions_dir))
    except OSError:
        return found
    for entry in entries:
        if not entry.name.endswith(".json"):
            continue
        try:
            if since is not None and entry.stat().st_mtime < since - 1:
                continue
            with open(entry.path, "rb") as handle:
                record = jsontext.loads(handle.read())
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict) or record.get("private"):
            continue
        handoff = record.get("handoff")
        if isinstance(handoff, str) and handoff and not record.get("handoff_derived"):
            found[str(record.get("id"))] = redact(handoff).text
    return found


def _send_handoffs(made: Engine, url: str, handoffs: dict[str, str]) -> int:
    """Set the declared handoffs on this machine's sessions that the server has."""
    from sqlalchemy import update
    from sqlalchemy.exc import DBAPIError

    from hippo_core.index import team_schema as team

    if not handoffs:
        return 0
    where, count = machine()["id"], 0
    try:
        with made.begin() as conn:
            for sid, handoff in handoffs.items():
                done = conn.execute(
                    update(team.sessions)
                    .where(
                        team.sessions.c.machine == where,
                        team.sessions.c.id == sid,
                        team.sessions.c.handoff.is_distinct_from(handoff),
                    )
                    .values(handoff=handoff)
                )
                count += done.rowcount or 0
    except DBAPIError as exc:
        raise unreachable(url, exc) from None
    return count


def _others(
    local: sqlite3.Connection, rows: list[dict[str, Any]], since: int | None
) -> list[dict[str, Any]]:
    """With ``index_share = "machine"``: the other sessions this machine indexed that changed
    since the last push (not private, not the workspace's)."""
    mine = {row["id"] for row in rows}
    query = "SELECT * FROM sessions WHERE NOT private AND changed > ?"
    found = local.execute(query, (-1 if since is None else since,)).fetchall()
    return [dict(row) for row in found if row["id"] not in mine]


def _send(
    made: Engine,
    url: str,
    local: sqlite3.Connection,
    workspace: Workspace,
    folders: list[str],
    rows: list[dict[str, Any]],
    private: list[str],
    others: list[dict[str, Any]],
) -> Pushed:
    from sqlalchemy import delete, text
    from sqlalchemy.exc import DBAPIError

    from hippo_core.index import team_schema as team

    where = machine()["id"]
    who, project = member(workspace), project_of(workspace)
    done = Pushed()
    try:
        with made.begin() as conn:
            # One push per machine at a time; other machines' pushes go on beside it.
            conn.execute(text("SELECT pg_advisory_xact_lock(7208, hashtext(:m))"), {"m": where})
            if private:
                gone = conn.execute(
                    delete(team.sessions).where(
                        team.sessions.c.machine == where, team.sessions.c.id.in_(private)
                    )
                )
                done.removed = gone.rowcount or 0
            for batch in _batches(rows, BATCH):
                done.sessions += len(batch)
                done.turns += _send_batch(conn, local, batch, where, who, project, folders)
            for batch in _batches(others, BATCH):  # of no workspace: under no project
                done.sessions += len(batch)
                done.turns += _send_batch(conn, local, batch, where, who, "", folders)
    except DBAPIError as exc:
        raise unreachable(url, exc) from None
    return done


def _batches(rows: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def _send_batch(
    conn: Connection,
    local: sqlite3.Connection,
    batch: list[dict[str, Any]],
    where: str,
    who: str,
    project: str,
    folders: list[str],
) -> int:
    from sqlalchemy.dialects.postgresql import insert

    from hippo_core.index import team_schema as team

    session_columns = [c.name for c in team.sessions.columns if c.name not in _OURS]
    values = [
        {
            "machine": where,
            "member": who,
            "project": project,
            **{name: row.get(name) for name in session_columns},
        }
        for row in batch
    ]
    statement = insert(team.sessions).values(values)
    kept: dict[str, Any] = {
        c: statement.excluded[c] for c in [*session_columns, "member"] if c != "id"
    }
    kept["project"] = _project_kept(team.sessions, statement)
    conn.execute(statement.on_conflict_do_update(index_elements=["machine", "id"], set_=kept))
    ids = [row["id"] for row in batch]
    marks = ", ".join("?" for _ in ids)
    turns = local.execute(
        f"SELECT * FROM turns WHERE session IN ({marks}) ORDER BY session, ordinal", ids
    ).fetchall()
    for start in range(0, len(turns), TURN_BATCH):  # within both databases' parameter limits
        _send_turns(conn, local, turns[start : start + TURN_BATCH], where, who, project, folders)
    return len(turns)


def _send_turns(
    conn: Connection,
    local: sqlite3.Connection,
    turns: list[sqlite3.Row],
    where: str,
    who: str,
    project: str,
    folders: list[str],
) -> None:
    """Upsert ``turns``, and replace the files they touched."""
    from sqlalchemy import delete
    from sqlalchemy.dialects.postgresql import insert

    from hippo_core.index import team_schema as team

    turn_columns = [c.name for c in team.turns.columns if c.name not in (*_OURS, "id", "search")]
    rows = [
        {
            "machine": where,
            "member": who,
            "project": project,
            **{name: turn[name] for name in turn_columns},
        }
        for turn in turns
    ]
    upsert = insert(team.turns).values(rows)
    changed: dict[str, Any] = {c: upsert.excluded[c] for c in [*turn_columns, "member"]}
    changed["project"] = _project_kept(team.turns, upsert)
    keys = conn.execute(
        upsert.on_conflict_do_update(
            index_elements=["machine", "session", "ordinal"], set_=changed
        ).returning(team.turns.c.id, team.turns.c.session, team.turns.c.ordinal)
    ).all()
    remote = {(key.session, key.ordinal): key.id for key in keys}
    conn.execute(delete(team.touched).where(team.touched.c.turn.in_(list(remote.values()))))
    local_ids = {turn["id"]: (turn["session"], turn["ordinal"]) for turn in turns}
    marks = ", ".join("?" for _ in local_ids)
    touched = [
        {
            "turn": remote[local_ids[row["turn"]]],
            "kind": row["kind"],
            "path": _relative(row["path"], folders),
        }
        for row in local.execute(
            f"SELECT turn, kind, path FROM touched WHERE turn IN ({marks})", list(local_ids)
        )
        if local_ids[row["turn"]] in remote
    ]
    if touched:
        conn.execute(team.touched.insert(), touched)


def _project_kept(table: Any, statement: Any) -> Any:
    """A row's project on a conflict: the one pushed, unless that is none and the row has
    one (another workspace of this machine pushed it as its own)."""
    from sqlalchemy import case

    return case(
        (statement.excluded.project == "", table.c.project), else_=statement.excluded.project
    )


#: The columns the team index adds to the local one's.
_OURS = ("machine", "member", "project")


def _relative(path: str, folders: list[str]) -> str:
    """A file a turn touched, relative to the workspace when it is inside (every member's
    folder differs; the workspace's files are the same)."""
    for folder in folders:
        if path.startswith(folder.rstrip("/") + "/"):
            return path[len(folder.rstrip("/")) + 1 :]
    return path


# -- searching -----------------------------------------------------------------------------


def tsquery(query: str) -> str:
    """The words of ``query`` as a ``to_tsquery('simple', ...)`` text: every word must occur
    (``word*``: a prefix)."""
    from hippo_core.errors import UsageError
    from hippo_core.index.search import _TOKEN

    words = [w for w in _TOKEN.findall(query) if w.strip("*")]
    if not words:
        raise UsageError("the search query has no words to look for")
    lexemes = []
    for word in words:
        bare = word.rstrip("*").lower().replace("'", "''")
        lexemes.append(f"'{bare}':*" if word.endswith("*") else f"'{bare}'")
    return " & ".join(lexemes)


def search(
    url: str,
    project: str | None,
    query: str,
    *,
    tool: str | None = None,
    session: str | None = None,
    since: str | None = None,
    who: str | None = None,
    limit: int = 20,
) -> list[Hit]:
    """The best ``limit`` turns of the team's sessions of ``project`` (of every project,
    and of none, when None) matching ``query``."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from hippo_core.index.search import Hit, filters

    where, params = filters(tool=tool, session=session, since=since)
    where[:0] = ["t.search @@ q"] + (["t.project = :project"] if project is not None else [])
    params.update(q=tsquery(query), project=project, limit=limit)
    if who:
        where.append("t.member = :who")
        params["who"] = who
    sql = text(
        "SELECT t.session, t.ordinal, t.tool, t.started, t.cwd, t.member, "
        # As the local index's snippet does: from the prompt when it matches, else the
        # answer, never the two run together.
        "ts_headline('simple', CASE WHEN to_tsvector('simple', t.prompt) @@ q "
        "THEN t.prompt ELSE t.answer END, q, "
        "'StartSel=[, StopSel=], MaxWords=16, MinWords=6, MaxFragments=2, "
        'FragmentDelimiter=" ... "\') AS snippet '
        "FROM hippo_turns t, to_tsquery('simple', :q) q "
        f"WHERE {' AND '.join(where)} "
        "ORDER BY ts_rank(t.search, q) DESC, t.started DESC LIMIT :limit"
    )
    made = engine(url, timeout=READ_TIMEOUT)
    try:
        with made.connect() as conn:
            rows = conn.execute(sql, params).all()
    except DBAPIError as exc:
        raise unreachable(url, exc) from None
    finally:
        made.dispose()
    return [
        Hit(r.session, r.ordinal, r.tool, r.started, r.cwd, " ".join(r.snippet.split()), r.member)
        for r in rows
    ]
