"""The team index's tables on PostgreSQL: the local index's (:mod:`hippo_core.index.schema`)
with who and which machine each row came from, and PostgreSQL's own full-text search.

A session is keyed by the machine it was indexed on and its id, so two members whose agents
gave the same id never share a row; a turn by its machine, session and place in it, so the
same turn pushed twice (by a retry, or by two ingests at once) is one row. ``project`` is the
name the workspace's sessions go by (``index_project``, default the folder's name): every
clone of a repository has the same.

Who a row is from is the server's to say, not the client's: ``member`` is the login role
that wrote it (``current_user``), and row-level security (:data:`SECURITY`, made with the
tables) lets a member insert, change and delete only rows that are theirs, while every
member reads every row. A member connects with a role of their own; an administrator makes
the roles, hippo the rest.

``arrived`` is the server's own count of arrivals (one sequence for every row): a turn
takes one when it first reaches the server, a session each time its handoff or its end
changes. A dream keeps where it stood, so the next run finds what a teammate pushed after
the dream covered its time. ``hippo_dreamed`` holds which turns (and which sessions'
handoffs, ordinal -1) a member's dream has dreamed, so no other dreamer dreams them again.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Computed,
    ForeignKeyConstraint,
    Identity,
    Index,
    MetaData,
    PrimaryKeyConstraint,
    Sequence,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects.postgresql import TSVECTOR

from hippo_core.index import schema as local

#: Changes whenever these tables do; a team index of another version is refused by name,
#: but one of an older version this hippo knows is brought up to it (:data:`UPGRADES`).
SCHEMA_VERSION = 2

metadata = MetaData()

#: The advisory lock pushes share and the reading of where arrivals stand takes alone: no
#: push is halfway through when a dream notes it, so every arrival after is higher.
ARRIVALS_LOCK = "7208, 2"

#: The server's count of arrivals.
arrival = Sequence("hippo_arrival", metadata=metadata)


def _arrived() -> Column[int]:
    return Column("arrived", BigInteger, server_default=arrival.next_value(), nullable=False)


def _copied(table: Table, *skip: str) -> list[Column[object]]:
    """``table``'s columns, as the local index has them, without keys of their own."""
    columns = []
    for column in table.columns:
        if column.name in skip:
            continue
        copy = column._copy()
        copy.primary_key = False
        copy.foreign_keys = set()
        copy.constraints = set()
        columns.append(copy)
    return columns


meta = Table(
    "hippo_meta",
    metadata,
    Column("key", String, primary_key=True),
    Column("value", Text, nullable=False),
)

sessions = Table(
    "hippo_sessions",
    metadata,
    Column("machine", String, nullable=False),
    Column("member", Text, nullable=False),
    Column("project", Text, nullable=False),
    *_copied(local.sessions, "changed", "private"),
    # The handoff was derived from the session's last message, not declared by it.
    Column("handoff_derived", Boolean, server_default=false(), nullable=False),
    _arrived(),
    PrimaryKeyConstraint("machine", "id"),
    Index("hippo_sessions_project", "project"),
)

SEARCHED = "coalesce(prompt, '') || ' ' || coalesce(answer, '') || ' ' || coalesce(tools, '')"

turns = Table(
    "hippo_turns",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("machine", String, nullable=False),
    Column("member", Text, nullable=False),
    Column("project", Text, nullable=False),
    *_copied(local.turns, "id", "source", "start", "end"),
    Column("search", TSVECTOR, Computed(f"to_tsvector('simple', {SEARCHED})", persisted=True)),
    _arrived(),
    UniqueConstraint("machine", "session", "ordinal"),
    ForeignKeyConstraint(
        ["machine", "session"],
        ["hippo_sessions.machine", "hippo_sessions.id"],
        ondelete="CASCADE",
    ),
    Index("hippo_turns_search", "search", postgresql_using="gin"),
    Index("hippo_turns_project", "project", "started"),
    Index("hippo_turns_member", "member"),
    Index("hippo_turns_arrived", "project", "arrived"),
)

touched = Table(
    "hippo_touched",
    metadata,
    Column("turn", BigInteger, nullable=False),
    Column("kind", String(1), nullable=False),
    Column("path", Text, nullable=False),
    ForeignKeyConstraint(["turn"], ["hippo_turns.id"], ondelete="CASCADE"),
    Index("hippo_touched_turn", "turn"),
    Index("hippo_touched_path", "path"),
)

dreamed = Table(
    "hippo_dreamed",
    metadata,
    Column("machine", String, nullable=False),
    Column("session", String, nullable=False),
    # The turn's place in its session; -1 for the session's handoff.
    Column("ordinal", BigInteger, nullable=False),
    Column("project", Text, nullable=False),
    # The id of the machine whose dream dreamed it.
    Column("dreamer", String, nullable=False),
    Column("member", Text, nullable=False),
    Column("at", Text, nullable=False),
    PrimaryKeyConstraint("machine", "session", "ordinal"),
    ForeignKeyConstraint(
        ["machine", "session"],
        ["hippo_sessions.machine", "hippo_sessions.id"],
        ondelete="CASCADE",
    ),
    Index("hippo_dreamed_project", "project", "at"),
)

#: The tables a member writes rows of their own in, and how a row names its member.
_OWN_ROWS = {
    "hippo_sessions": "member = current_user",
    "hippo_turns": "member = current_user",
    "hippo_dreamed": "member = current_user",
    # A turn's files are its member's: through the turn they belong to.
    "hippo_touched": (
        "EXISTS (SELECT 1 FROM hippo_turns t WHERE t.id = turn AND t.member = current_user)"
    ),
}


def _security() -> tuple[str, ...]:
    statements = [
        "GRANT SELECT ON hippo_meta TO PUBLIC",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(_OWN_ROWS)} TO PUBLIC",
        "GRANT USAGE, SELECT ON SEQUENCE hippo_arrival, hippo_turns_id_seq TO PUBLIC",
    ]
    for table, own in _OWN_ROWS.items():
        if table != "hippo_touched":
            statements.append(f"ALTER TABLE {table} ALTER COLUMN member SET DEFAULT current_user")
        statements += [
            f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
            # FORCE: the role that made the tables (their owner) is bound as well.
            f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
            f"DROP POLICY IF EXISTS hippo_read ON {table}",
            f"CREATE POLICY hippo_read ON {table} FOR SELECT USING (true)",
            f"DROP POLICY IF EXISTS hippo_insert ON {table}",
            f"CREATE POLICY hippo_insert ON {table} FOR INSERT WITH CHECK ({own})",
            f"DROP POLICY IF EXISTS hippo_update ON {table}",
            f"CREATE POLICY hippo_update ON {table} FOR UPDATE USING ({own}) WITH CHECK ({own})",
            f"DROP POLICY IF EXISTS hippo_delete ON {table}",
            f"CREATE POLICY hippo_delete ON {table} FOR DELETE USING ({own})",
        ]
    return tuple(statements)


#: Made with the tables, and by the upgrade from schema 1: every member reads every row,
#: and writes only their own (a superuser, which PostgreSQL never holds to a policy, is
#: no member: give no member one).
SECURITY = _security()

#: What brings a team index of each older version up to the next one, in order: hippo
#: runs them, in one transaction, on the first connection of a newer hippo.
UPGRADES: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE SEQUENCE IF NOT EXISTS hippo_arrival",
        "ALTER TABLE hippo_sessions ADD COLUMN IF NOT EXISTS arrived BIGINT NOT NULL "
        "DEFAULT nextval('hippo_arrival')",
        "ALTER TABLE hippo_turns ADD COLUMN IF NOT EXISTS arrived BIGINT NOT NULL "
        "DEFAULT nextval('hippo_arrival')",
        "CREATE INDEX IF NOT EXISTS hippo_turns_arrived ON hippo_turns (project, arrived)",
        "ALTER TABLE hippo_sessions ADD COLUMN IF NOT EXISTS handoff_derived BOOLEAN NOT NULL "
        "DEFAULT false",
        # What the turn read from outside the project (the local index's, schema 4): NULL,
        # "not recorded", for the turns pushed before.
        "ALTER TABLE hippo_turns ADD COLUMN IF NOT EXISTS external TEXT",
    ),
}
