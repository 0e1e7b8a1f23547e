"""The index's tables. :data:`hippo_core.index.db.SCHEMA_VERSION` changes whenever they do,
and :data:`hippo_core.index.db.UPGRADES` says how an index of the version before is brought
up to date in place (a column added is added last, where ``ALTER TABLE`` puts it).

The ingest writes these tables with plain SQL through the standard library's driver (see
:mod:`hippo_core.index.db` for why); the column names there follow this file.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

meta = Table(
    "meta",
    metadata,
    Column("key", String, primary_key=True),
    Column("value", Text, nullable=False),
)

#: One row per transcript file: how far it was read and where the next read resumes.
files = Table(
    "files",
    metadata,
    Column("path", Text, primary_key=True),
    Column("tool", String, nullable=False),
    Column("size", Integer, nullable=False),
    Column("mtime_ns", Integer, nullable=False),
    Column("inode", Integer, nullable=False),
    Column("head", String, nullable=False),
    Column("committed", Integer, nullable=False),
    Column("resume_offset", Integer, nullable=False),
    Column("resume_state", Text, nullable=False),
    Column("corrupt", Integer, nullable=False, default=0),
)

sessions = Table(
    "sessions",
    metadata,
    Column("id", String, primary_key=True),
    Column("tool", String, nullable=False),
    Column("native_id", Text, nullable=False),
    Column("parent", String),
    Column("cwd", Text),
    Column("branch", Text),
    Column("started", String),
    Column("ended", String),
    Column("title", Text),
    Column("handoff", Text),
    Column("private", Integer, nullable=False, default=0),
    #: The index's generation (meta ``generation``) when the session or its turns last
    #: changed: the derived records of a workspace are refreshed for these sessions only.
    Column("changed", Integer, nullable=False, default=0),
    Index("sessions_changed", "changed"),
)

turns = Table(
    "turns",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("session", String, ForeignKey("sessions.id"), nullable=False),
    Column("ordinal", Integer, nullable=False),
    Column("tool", String, nullable=False),
    Column("key", Text, nullable=False),
    Column("prompt", Text, nullable=False),
    Column("answer", Text, nullable=False),
    Column("tools", Text, nullable=False),
    Column("started", String),
    Column("ended", String),
    Column("cwd", Text),
    Column("branch", Text),
    Column("source", Text, nullable=False),
    Column("start", Integer, nullable=False),
    Column("end", Integer, nullable=False),
    #: What the agent read from outside the project during the turn: a JSON list of short
    #: descriptions (``[]``: nothing), or NULL when it was not recorded (a turn indexed
    #: before schema 4, or from a source that does not tell). Last, as ADD COLUMN puts it.
    Column("external", Text),
    UniqueConstraint("tool", "key"),
    UniqueConstraint("session", "ordinal"),
    Index("turns_source", "source", "start"),
    Index("turns_started", "started"),
)

#: The files a turn read (``r``), edited (``e``) or cited (``c``), absolute.
touched = Table(
    "touched",
    metadata,
    Column("turn", Integer, ForeignKey("turns.id"), nullable=False),
    Column("kind", String(1), nullable=False),
    Column("path", Text, nullable=False),
    Index("touched_turn", "turn"),
    Index("touched_path", "path"),
)

#: What ``relevance = "history"`` ranks by, kept by every ingest for the sessions it changed
#: (:mod:`hippo_core.index.history`): each session that read or edited a Markdown file, with
#: when it started (seconds since the epoch) and how many terms its prompts have; ``team``
#: for another machine's session pulled from the team index, with what it was pulled as
#: (``version``: its turns, last turn and files there) ...
history = Table(
    "history",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("session", String, nullable=False, unique=True),
    Column("started", Float),
    Column("length", Integer, nullable=False),
    Column("team", Integer, nullable=False, default=0),
    Column("version", String),
)

#: ... the stemmed terms of its prompts, each with its count (and the session's length,
#: start and team flag again, so that ranking reads this table alone) ...
history_terms = Table(
    "history_terms",
    metadata,
    Column("term", String, nullable=False),
    Column("id", Integer, nullable=False),
    Column("tf", Integer, nullable=False),
    Column("length", Integer, nullable=False),
    Column("started", Float),
    Column("team", Integer, nullable=False, default=0),
    PrimaryKeyConstraint("term", "id"),
    Index("history_terms_id", "id"),
    sqlite_with_rowid=False,
)

#: ... and the Markdown files it read or edited, absolute.
history_notes = Table(
    "history_notes",
    metadata,
    Column("path", Text, nullable=False),
    Column("id", Integer, nullable=False),
    PrimaryKeyConstraint("path", "id"),
    Index("history_notes_id", "id"),
    sqlite_with_rowid=False,
)

#: Full-text search over the turns (rowid = turns.id). SQLAlchemy has no FTS5 construct.
FTS_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5("
    "prompt, answer, tools, tokenize = 'unicode61 remove_diacritics 2')"
)


def ddl() -> tuple[str, ...]:
    """The statements that create these tables in SQLite, as SQLAlchemy compiles them."""
    from sqlalchemy.dialects import sqlite
    from sqlalchemy.schema import CreateIndex, CreateTable

    dialect = sqlite.dialect()
    statements = []
    for table in metadata.sorted_tables:
        statements.append(str(CreateTable(table).compile(dialect=dialect)).strip())
        for index in sorted(table.indexes, key=lambda i: str(i.name)):
            statements.append(str(CreateIndex(index).compile(dialect=dialect)).strip())
    statements.append(FTS_DDL)
    return tuple(statements)


def write_ddl_module(path: Path) -> None:
    """Write :mod:`hippo_core.index.ddl`, the compiled statements the ingest runs."""
    lines = [
        "# ruff: noqa: E501",
        '"""The index\'s CREATE statements, compiled by SQLAlchemy from `schema.py`.',
        "",
        "Generated by `python -m hippo_core.index.schema`; tests/test_index_schema.py fails",
        "when it is stale. Creating the index from these keeps SQLAlchemy's import (about",
        "120 ms) off the ingest.",
        '"""',
        "",
        "STATEMENTS = (",
        *(f"    {statement!r}," for statement in ddl()),
        ")",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    write_ddl_module(Path(__file__).with_name("ddl.py"))
