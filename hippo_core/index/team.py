"""The team index: a workspace's sessions on a PostgreSQL server the team shares.

The local index stays what it is (SQLite in ``$HIPPO_HOME``, written by every ingest, read
when the server is away). A workspace whose ``index_url`` (or ``HIPPO_INDEX_URL``) names a
server also *pushes*: after each ingest, the sessions of the workspace that changed since
the last push go to the server, with which machine they came from (an id made once, in
``$HIPPO_HOME/machine.json``); who pushed them is the login role the server knows. Only
what the local index holds leaves the machine: text already redacted at ingest, no private
session, no turn of one; a session marked private since it was pushed is deleted from the
server.

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

from hippo_core.base.distribution import install_hint, upgrade_hint
from hippo_core.base.errors import HippoError
from hippo_core.files.owner_only import owner_only_write

if TYPE_CHECKING:
    import sqlite3

    from sqlalchemy import Connection, Engine

    from hippo_core.index.search import Hit
    from hippo_core.workspace.folder import Workspace

ENV = "HIPPO_INDEX_URL"
#: Sessions pushed per batch of statements, and turns per statement (PostgreSQL takes at
#: most 65,535 parameters in one, SQLite 32,766).
BATCH, TURN_BATCH = 200, 1000


def configured_url(workspace: Workspace | None) -> str:
    """The team index's URL: ``HIPPO_INDEX_URL``, else the workspace's ``index_url``."""
    from hippo_core.settings.index_url import index_url_problem

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
            role = str(conn.execute(text("SELECT current_user")).scalar())
            if not role.isprintable() or len(role) > MEMBER_CHARS:
                raise HippoError(
                    f"team index {shown(url)}: the login role {role[:MEMBER_CHARS]!r} is not "
                    f"one printable line of at most {MEMBER_CHARS} characters, and it names "
                    "you to your team: connect with a plain role name"
                )
            conn.execute(text("SELECT pg_advisory_xact_lock(7208, 1)"))  # one creator at a time
            if not inspect(conn).has_table("hippo_meta"):
                team_schema.metadata.create_all(conn)
                for statement in team_schema.SECURITY:
                    conn.execute(text(statement))
                conn.execute(
                    team_schema.meta.insert().values(
                        key="schema_version", value=str(team_schema.SCHEMA_VERSION)
                    )
                )
                return
            found = conn.execute(
                select(team_schema.meta.c.value).where(team_schema.meta.c.key == "schema_version")
            ).scalar()
            if found in {str(old) for old in team_schema.UPGRADES}:
                found = _upgrade(conn, int(str(found)))
    except DBAPIError as exc:
        if getattr(getattr(exc, "orig", None), "sqlstate", "") == "42501":  # not the owner
            raise HippoError(
                f"team index {shown(url)} has schema {found}, and only the role that owns "
                f"its tables can bring them up to schema {team_schema.SCHEMA_VERSION}: have "
                "that member run this hippo once (`hippo ingest`), then try again"
            ) from None
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


#: The longest member name (a login role) hippo takes: PostgreSQL's own limit.
MEMBER_CHARS = 63


def _upgrade(conn: Connection, version: int) -> str:
    """Bring a team index of an older ``version`` up to this hippo's, inside the caller's
    transaction (so a server that goes away midway keeps the old one); the version now."""
    from sqlalchemy import text, update

    from hippo_core.index import team_schema

    while version in team_schema.UPGRADES:
        for statement in team_schema.UPGRADES[version]:
            conn.execute(text(statement))
        version += 1
    team_schema.metadata.create_all(conn)  # the tables the upgrades added
    for statement in team_schema.SECURITY:
        conn.execute(text(statement))
    conn.execute(
        update(team_schema.meta)
        .where(team_schema.meta.c.key == "schema_version")
        .values(value=str(version))
    )
    return str(version)


# -- who and where -------------------------------------------------------------------------


def machine() -> dict[str, str]:
    """This machine's id in team indexes: made once, kept in ``$HIPPO_HOME/machine.json``."""
    import socket
    import uuid

    from hippo_core.files.home import hippo_home

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
    from hippo_core.files.home import hippo_home

    # A new share (or project) means a new state: everything is pushed again (upserts).
    settings = workspace.settings
    where = f"{shown(url)}\0{workspace.root.resolve()}\0{settings.index_share}"
    key = f"{where}\0{project_of(workspace)}".encode()
    return hippo_home() / "team" / f"{hashlib.sha256(key).hexdigest()[:24]}.json"


def _last_push(path: Path, index: str, now: int) -> dict[str, Any]:
    """What the last push left: ``generation`` (the local generation it reached; None,
    push everything, when unknown or when the local index, named ``index``, was made anew
    since), ``records`` (the session records' identities as it saw them) and ``sent`` (the
    digest of each handoff the server has)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        found = {}
    if not isinstance(found, dict):
        found = {}
    generation = found.get("generation")
    same = bool(index) and found.get("index") == index
    if not same or not isinstance(generation, int) or not 0 <= generation <= now:
        generation = None
    records, sent = found.get("records"), found.get("sent")
    return {
        "generation": generation,
        "records": records if isinstance(records, dict) and generation is not None else {},
        "sent": sent if isinstance(sent, dict) and generation is not None else {},
    }


def push(workspace: Workspace, url: str, made: Engine | None = None) -> Pushed:
    """Push the workspace's sessions that changed since the last push; what went. ``made``
    is an engine of ``url`` the caller keeps (a dream reads from it after); without one, a
    push that has something to send makes its own."""
    from hippo_core.files.home import hippo_home, index_path
    from hippo_core.index.db import connect, generation
    from hippo_core.index.db import made as named
    from hippo_core.index.derived import _private_sessions, members, workspace_folders
    from hippo_core.index.seen import changed, signatures

    index = index_path()
    if not index.exists():
        return Pushed()
    state = _state_path(url, workspace)
    local = connect(index)
    try:
        now, name = generation(local), named(local)
        last = _last_push(state, name, now)
        since, sent = last["generation"], dict(last["sent"])
        seen = signatures(workspace.sessions_dir)
        handoffs = _handoffs(workspace, changed(seen, last["records"]), sent)
        if since == now and not handoffs:
            done = Pushed()
        else:
            folders = workspace_folders(workspace)
            rows = members(local, workspace, folders, since)
            shared = workspace.settings.index_share == "machine"
            others = _others(local, rows, since) if shared else []
            private = _private_sessions(local, since)
            done = Pushed()
            if rows or others or private or handoffs:  # else nothing to say to the server
                server = made or engine(url)
                try:
                    done = _send(
                        server, url, local, workspace, folders, rows, private, others, sent
                    )
                    done.handoffs = _send_handoffs(server, url, handoffs, sent)
                    note_team_dream(workspace, server)
                finally:
                    if made is None:
                        server.dispose()
    finally:
        local.close()
    written = {"url": shown(url), "generation": now, "index": name}
    text = json.dumps({**written, "records": seen, "sent": sent}) + "\n"
    owner_only_write(state, text, top=hippo_home())
    return done


def note_team_dream(workspace: Workspace, server: Engine) -> None:
    """Keep who last dreamed the workspace's project on the team index, and when, for the
    context block's warning and ``hippo doctor`` (which must not call the server): the
    dream state is each machine's, the team's dreaming is not. Nothing when the server
    cannot say."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from hippo_core.files.atomic import atomic_write
    from hippo_core.index.team_dreamed import TEAM_DREAMED

    try:
        with server.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT member, at FROM hippo_dreamed WHERE project = :project "
                    "ORDER BY at DESC LIMIT 1"
                ),
                {"project": project_of(workspace)},
            ).first()
    except DBAPIError:
        return
    if row is not None:
        found = {"member": row.member, "at": row.at}
        atomic_write(workspace.cache_dir / TEAM_DREAMED, json.dumps(found) + "\n")


Handoff = tuple[str | None, bool]
"""A session's handoff as the server keeps it: the text (None for none), and whether it
was derived from the session's last message rather than declared."""


def _digest(handoff: Handoff) -> str:
    text, derived = handoff
    raw = json.dumps([text, derived]).encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()[:16]


def _declared(record: object) -> Handoff | None:
    """The handoff a session record holds, redacted; None when it holds none."""
    from hippo_core.transcripts.privacy import redact

    if not isinstance(record, dict) or record.get("private"):
        return None
    handoff = record.get("handoff")
    if not isinstance(handoff, str) or not handoff:
        return None
    return redact(handoff).text, bool(record.get("handoff_derived"))


def _handoff_of(workspace: Workspace | None, row: dict[str, Any]) -> Handoff:
    """What the server should hold as an indexed session's handoff: its record's (declared
    by ``hippo session end --handoff``, or derived at ingest), else the one its agent's
    transcript gives (the last message, for the agents that have no other)."""
    from hippo_core.agents.sessions import load_record
    from hippo_core.index.derived import HANDOFF_TOOLS

    declared = _declared(load_record(workspace, str(row["id"]))) if workspace else None
    if declared is not None:
        return declared
    if row.get("tool") in HANDOFF_TOOLS and row.get("handoff"):
        return str(row["handoff"]), True
    return None, False


def _handoffs(workspace: Workspace, names: list[str], sent: dict[str, Any]) -> dict[str, Handoff]:
    """The handoffs of the session records ``names`` (those written since the last push)
    that the server does not hold as they are now: declared (``hippo session end
    --handoff``, the MCP tool) or derived at ingest. What was sent is known by content,
    never by a file's time, so a clock stepped back loses none."""
    from hippo_core.agents.sessions import load_record

    found: dict[str, Handoff] = {}
    for name in names:
        record = load_record(workspace, name.removesuffix(".json"))
        handoff = _declared(record)
        if record is None or handoff is None:
            continue
        sid = str(record.get("id"))
        if sent.get(sid) != _digest(handoff):
            found[sid] = handoff
    return found


def _send_handoffs(
    made: Engine, url: str, handoffs: dict[str, Handoff], sent: dict[str, Any]
) -> int:
    """Set the handoffs on this machine's sessions that the server has (a session's
    arrival moves with its handoff); ``sent`` learns each one the server now holds."""
    from sqlalchemy import select, text, update
    from sqlalchemy.exc import DBAPIError

    from hippo_core.index import team_schema as team

    if not handoffs:
        return 0
    where, count = machine()["id"], 0
    try:
        with made.begin() as conn:
            conn.execute(text(f"SELECT pg_advisory_xact_lock_shared({team.ARRIVALS_LOCK})"))
            for sid, (handoff, derived) in handoffs.items():
                done = conn.execute(
                    update(team.sessions)
                    .where(
                        team.sessions.c.machine == where,
                        team.sessions.c.id == sid,
                        (team.sessions.c.handoff.is_distinct_from(handoff))
                        | (team.sessions.c.handoff_derived != derived),
                    )
                    .values(
                        handoff=handoff,
                        handoff_derived=derived,
                        arrived=team.arrival.next_value(),
                    )
                )
                count += done.rowcount or 0
            held = conn.execute(
                select(team.sessions.c.id).where(
                    team.sessions.c.machine == where, team.sessions.c.id.in_(list(handoffs))
                )
            ).scalars()
            for sid in held:
                sent[sid] = _digest(handoffs[sid])
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
    sent: dict[str, Any],
) -> Pushed:
    """Send the sessions ``rows`` of the workspace and ``others`` of no workspace, with
    their turns, and remove the ``private`` ones; ``sent`` learns each handoff now held."""
    from sqlalchemy import delete, text
    from sqlalchemy.exc import DBAPIError

    from hippo_core.index import team_schema as team

    where, project = machine()["id"], project_of(workspace)
    done = Pushed()
    try:
        with made.begin() as conn:
            # One push per machine at a time; other machines' pushes go on beside it, and a
            # dream waits for them all before it notes where arrivals stand.
            conn.execute(text("SELECT pg_advisory_xact_lock(7208, hashtext(:m))"), {"m": where})
            conn.execute(text(f"SELECT pg_advisory_xact_lock_shared({team.ARRIVALS_LOCK})"))
            if private:
                gone = conn.execute(
                    delete(team.sessions).where(
                        team.sessions.c.machine == where, team.sessions.c.id.in_(private)
                    )
                )
                done.removed = gone.rowcount or 0
            for batch in _batches(rows, BATCH):
                done.sessions += len(batch)
                handoffs = [_handoff_of(workspace, row) for row in batch]
                sent.update((row["id"], _digest(h)) for row, h in zip(batch, handoffs, strict=True))
                done.turns += _send_batch(conn, local, batch, handoffs, where, project, folders)
            for batch in _batches(others, BATCH):  # of no workspace: under no project
                done.sessions += len(batch)
                handoffs = [_handoff_of(None, row) for row in batch]
                done.turns += _send_batch(conn, local, batch, handoffs, where, "", folders)
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
    handoffs: list[Handoff],
    where: str,
    project: str,
    folders: list[str],
) -> int:
    """Upsert the sessions of ``batch`` (each with its handoff, from ``handoffs``) and their
    turns; how many turns went. A session's arrival moves when its handoff or its end does."""
    from sqlalchemy import case
    from sqlalchemy.dialects.postgresql import insert

    from hippo_core.index import team_schema as team

    session_columns = [c.name for c in team.sessions.columns if c.name not in _OURS]
    # No member is sent: the server names the row's member, the role that writes it.
    values = [
        {
            "machine": where,
            "project": project,
            **{name: row.get(name) for name in session_columns},
            "handoff": handoff,
            "handoff_derived": derived,
        }
        for row, (handoff, derived) in zip(batch, handoffs, strict=True)
    ]
    statement = insert(team.sessions).values(values)
    kept: dict[str, Any] = {c: statement.excluded[c] for c in session_columns if c != "id"}
    kept["project"] = _project_kept(team.sessions, statement)
    kept["handoff_derived"] = statement.excluded.handoff_derived
    moved = team.sessions.c.handoff.is_distinct_from(statement.excluded.handoff) | (
        team.sessions.c.ended.is_distinct_from(statement.excluded.ended)
    )
    kept["arrived"] = case((moved, team.arrival.next_value()), else_=team.sessions.c.arrived)
    conn.execute(statement.on_conflict_do_update(index_elements=["machine", "id"], set_=kept))
    ids = [row["id"] for row in batch]
    marks = ", ".join("?" for _ in ids)
    turns = local.execute(
        f"SELECT * FROM turns WHERE session IN ({marks}) ORDER BY session, ordinal", ids
    ).fetchall()
    for start in range(0, len(turns), TURN_BATCH):  # within both databases' parameter limits
        _send_turns(conn, local, turns[start : start + TURN_BATCH], where, project, folders)
    return len(turns)


def _send_turns(
    conn: Connection,
    local: sqlite3.Connection,
    turns: list[sqlite3.Row],
    where: str,
    project: str,
    folders: list[str],
) -> None:
    """Upsert ``turns``, and replace the files they touched."""
    from sqlalchemy import delete
    from sqlalchemy.dialects.postgresql import insert

    from hippo_core.index import team_schema as team

    turn_columns = [c.name for c in team.turns.columns if c.name not in (*_OURS, "id", "search")]
    # A local index an older hippo wrote lacks the newest columns until an ingest upgrades
    # it: they go as NULL, "not recorded".
    present = set(turns[0].keys()) if turns else set()
    rows = [
        {
            "machine": where,
            "project": project,
            **{name: turn[name] if name in present else None for name in turn_columns},
        }
        for turn in turns
    ]
    upsert = insert(team.turns).values(rows)
    changed: dict[str, Any] = {c: upsert.excluded[c] for c in turn_columns}
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


#: The columns the team index adds to the local one's: pushed with every row, or kept by
#: the server itself (``arrived``), or set from the session record (``handoff_derived``).
_OURS = ("machine", "member", "project", "arrived", "handoff_derived")


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
    from hippo_core.base.errors import UsageError
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

    from hippo_core.index.search import Hit, filters, outside

    where, params = filters(tool=tool, session=session, since=since)
    where[:0] = ["t.search @@ q"] + (["t.project = :project"] if project is not None else [])
    params.update(q=tsquery(query), project=project, limit=limit)
    if who:
        where.append("t.member = :who")
        params["who"] = who
    sql = text(
        "SELECT t.session, t.ordinal, t.tool, t.started, t.cwd, t.member, t.external, "
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
        Hit(
            r.session,
            r.ordinal,
            r.tool,
            r.started,
            r.cwd,
            " ".join(r.snippet.split()),
            r.member,
            outside(r.external),
        )
        for r in rows
    ]
