"""The team index's tables on PostgreSQL: the local index's (:mod:`hippo_core.index.schema`)
with who and which machine each row came from, and PostgreSQL's own full-text search.

A session is keyed by the machine it was indexed on and its id, so two members whose agents
gave the same id never share a row; a turn by its machine, session and place in it, so the
same turn pushed twice (by a retry, or by two ingests at once) is one row. ``project`` is the
name the workspace's sessions go by (``index_project``, default the folder's name): every
clone of a repository has the same.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Computed,
    ForeignKeyConstraint,
    Identity,
    Index,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import TSVECTOR

from hippo_core.index import schema as local

#: Changes whenever these tables do; a team index of another version is refused by name.
SCHEMA_VERSION = 1

metadata = MetaData()


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
    UniqueConstraint("machine", "session", "ordinal"),
    ForeignKeyConstraint(
        ["machine", "session"],
        ["hippo_sessions.machine", "hippo_sessions.id"],
        ondelete="CASCADE",
    ),
    Index("hippo_turns_search", "search", postgresql_using="gin"),
    Index("hippo_turns_project", "project", "started"),
    Index("hippo_turns_member", "member"),
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
