"""Writing what the ingest read: sessions, turns, their files and their text.

Text is redacted here, on its way in; a session marked private keeps only its row (so later
ingests leave it out too). Turns are deduplicated by their key across files and by their
place in the session, so a record copied into a fork or a resumed file is indexed once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator

from hippo_core.files import jsontext
from hippo_core.transcripts.external import kept
from hippo_core.transcripts.model import SessionInfo, Turn
from hippo_core.transcripts.privacy import (
    is_model_call,
    is_private_session,
    model_call_key,
    redact,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hippo_core.index.summary import IngestSummary


class IndexWriter:
    """The write side of one ingest, on its connection and inside its transaction."""

    def __init__(self, conn: sqlite3.Connection, summary: IngestSummary) -> None:
        from hippo_core.index.db import generation

        self.conn = conn
        self.summary = summary
        self.next_id = (conn.execute("SELECT max(id) FROM turns").fetchone()[0] or 0) + 1
        #: The generation this ingest commits: every session it touches is marked with it.
        self.generation = generation(conn) + 1
        #: This machine's key on the prompts of hippo's own model calls.
        self.model_call_key = model_call_key()

    def sessions(self, infos: list[SessionInfo], turns: list[Turn]) -> set[str]:
        """Upsert the sessions; the ids of those marked private (their turns are dropped)."""
        key = self.model_call_key
        calls = {t.session for t in turns if t.ordinal == 0 and is_model_call(t.prompt, key)}
        marked = {t.session for t in turns if is_private_session(t.prompt)} | calls
        ids = list({info.id for info in infos} | {t.session for t in turns})
        rows = {
            row["id"]: row
            for chunk in _chunks(ids, 500)
            for row in self.conn.execute(
                f"SELECT * FROM sessions WHERE id IN ({_marks(chunk)})", chunk
            )
        }
        already = {sid for sid, row in rows.items() if row["private"]}
        private = already | marked
        for info in infos:
            values = self._session_values(info, rows.get(info.id), info.id in private)
            names = ", ".join(values)
            if info.id in rows:
                assignments = ", ".join(f"{name} = ?" for name in values)
                self.conn.execute(
                    f"UPDATE sessions SET {assignments} WHERE id = ?", [*values.values(), info.id]
                )
            else:
                self.conn.execute(
                    f"INSERT INTO sessions (id, {names}) VALUES (?, {_marks(values)})",
                    [info.id, *values.values()],
                )
                self.summary.sessions += 1
        for sid in marked - already:
            if sid in calls:
                self.summary.model_calls += 1
            else:
                self.summary.private_sessions += 1
            self.delete_turns("session = ?", sid)
        return private

    def _session_values(self, info: SessionInfo, row: Any, private: bool) -> dict[str, Any]:
        """The session's columns: what the index had, completed by what this read found."""
        title = None if private else self._redacted(info.title, row and row["title"])
        handoff = None if private else self._redacted(info.handoff, row and row["handoff"])
        if row is None:
            return {
                "changed": self.generation,
                "tool": info.tool,
                "native_id": info.native_id,
                "parent": info.parent,
                "cwd": info.cwd,
                "branch": info.branch,
                "started": info.started,
                "ended": info.ended,
                "title": title,
                "handoff": handoff,
                "private": int(private),
            }
        return {
            "parent": row["parent"] or info.parent,
            "cwd": row["cwd"] or info.cwd,
            "branch": info.branch or row["branch"],
            "started": min(filter(None, (row["started"], info.started)), default=None),
            "ended": max(filter(None, (row["ended"], info.ended)), default=None),
            "title": title or (None if private else row["title"]),
            "handoff": handoff or (None if private else row["handoff"]),
            "private": int(private),
            "changed": self.generation,
        }

    def _redacted(self, text: str | None, stored: str | None) -> str | None:
        """``text`` redacted; its redactions counted unless the index already holds it."""
        if not text:
            return None
        redacted = redact(text)
        if redacted.text != stored:
            self.summary.redacted += redacted.count
        return redacted.text

    def insert_turns(self, tool: str, turns: list[Turn]) -> int:
        """Insert the turns not indexed yet; how many were."""
        if not turns:
            return 0
        taken_keys = set(self._existing_keys(tool, [t.key for t in turns]))
        taken_slots = self._existing_slots(list({t.session for t in turns}))
        rows: list[tuple[Any, ...]] = []
        fts: list[tuple[int, str, str, str]] = []
        touched: list[tuple[int, str, str]] = []
        for turn in turns:
            slot = (turn.session, turn.ordinal)
            if turn.key in taken_keys or slot in taken_slots:
                self.summary.duplicates += 1
                continue
            taken_keys.add(turn.key)
            taken_slots.add(slot)
            turn_id, self.next_id = self.next_id, self.next_id + 1
            prompt, answer = redact(turn.prompt), redact(turn.answer)
            self.summary.redacted += prompt.count + answer.count
            outside = self._outside(turn.external)
            tools = " ".join(turn.tools)
            rows.append(
                (
                    turn_id,
                    turn.session,
                    turn.ordinal,
                    tool,
                    turn.key,
                    prompt.text,
                    answer.text,
                    jsontext.dumps(turn.tools, indent=None),
                    turn.started,
                    turn.ended,
                    turn.cwd,
                    turn.branch,
                    turn.source,
                    turn.start,
                    turn.end,
                    outside,
                )
            )
            fts.append((turn_id, prompt.text, answer.text, tools))
            for kind, paths in (
                ("r", turn.files_read),
                ("e", turn.files_edited),
                ("c", turn.files_cited),
            ):
                touched.extend((turn_id, kind, path) for path in paths)
        self.conn.executemany(
            "INSERT INTO turns (id, session, ordinal, tool, key, prompt, answer, tools, "
            'started, ended, cwd, branch, source, start, "end", external) '
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        self.conn.executemany(
            "INSERT INTO turns_fts (rowid, prompt, answer, tools) VALUES (?, ?, ?, ?)", fts
        )
        self.conn.executemany("INSERT INTO touched (turn, kind, path) VALUES (?, ?, ?)", touched)
        self.conn.executemany(
            "UPDATE sessions SET changed = ? WHERE id = ?",
            [(self.generation, session) for session in {row[1] for row in rows}],
        )
        return len(rows)

    def _outside(self, found: list[str] | None) -> str | None:
        """What a turn read from outside the project as the index keeps it: bounded and
        redacted, as JSON; None when its source does not tell."""
        if not found:
            return None if found is None else "[]"
        items = kept(found) or []
        if items:
            redacted = [redact(item) for item in items]
            self.summary.redacted += sum(item.count for item in redacted)
            items = [item.text for item in redacted]
        return jsontext.dumps(items, indent=None)

    def _existing_keys(self, tool: str, keys: list[str]) -> Iterator[str]:
        for chunk in _chunks(keys, 500):
            sql = f"SELECT key FROM turns WHERE tool = ? AND key IN ({_marks(chunk)})"
            yield from (row[0] for row in self.conn.execute(sql, [tool, *chunk]))

    def _existing_slots(self, sessions: list[str]) -> set[tuple[str, int]]:
        slots: set[tuple[str, int]] = set()
        for chunk in _chunks(sessions, 500):
            sql = f"SELECT session, ordinal FROM turns WHERE session IN ({_marks(chunk)})"
            slots.update((row[0], row[1]) for row in self.conn.execute(sql, chunk))
        return slots

    def has_turns(self, source: str) -> bool:
        """Whether the index holds turns read from ``source``."""
        query = "SELECT 1 FROM turns WHERE source = ? LIMIT 1"
        return self.conn.execute(query, (source,)).fetchone() is not None

    def delete_turns(self, where: str, *params: Any) -> int:
        """Delete the turns matching ``where`` with their text and files; how many."""
        sessions = f"SELECT session FROM turns WHERE {where}"
        self.conn.execute(
            f"UPDATE sessions SET changed = ? WHERE id IN ({sessions})", (self.generation, *params)
        )
        ids = f"SELECT id FROM turns WHERE {where}"
        self.conn.execute(f"DELETE FROM turns_fts WHERE rowid IN ({ids})", params)
        self.conn.execute(f"DELETE FROM touched WHERE turn IN ({ids})", params)
        return self.conn.execute(f"DELETE FROM turns WHERE {where}", params).rowcount


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(items: Iterable[object]) -> str:
    return ", ".join("?" for _ in items)
