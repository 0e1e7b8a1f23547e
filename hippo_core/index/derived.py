"""Derived session records: the indexed sessions that belong to a workspace.

A session belongs when it ran in the workspace's folder (or the same folder of one of its
git worktrees), or when one of its turns read, edited or cited one of the workspace's
notes. Sessions of other projects stay in the index and get no record here.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

from hippo_core import sessions
from hippo_core.index.db import connect
from hippo_core.workspace import Workspace

#: The agents whose derived records carry the last assistant message as their handoff.
HANDOFF_TOOLS = frozenset({"codex", "dsh", "opencode", "muse", "command-code"})


def workspace_folders(workspace: Workspace) -> list[str]:
    """The workspace's folder and the same folder in each git worktree of its repository."""
    root = workspace.root.resolve()
    # An agent may record the folder as the user reached it (through a symbolic link).
    folders = list(dict.fromkeys([str(root), os.path.abspath(workspace.root)]))
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        top = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            env=env,
            timeout=10,
            check=True,
        ).stdout.strip()
        listing = subprocess.run(
            ["git", "-C", str(root), "worktree", "list", "--porcelain"],
            capture_output=True,
            text=True,
            env=env,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return folders
    inside = root.relative_to(Path(top).resolve()) if top else Path()
    for line in listing.splitlines():
        if line.startswith("worktree "):
            folder = str(Path(line[len("worktree ") :]) / inside)
            if folder not in folders:
                folders.append(os.path.normpath(folder))
    return folders


def _under(path: str | None, folder: str) -> bool:
    return bool(path) and (path == folder or str(path).startswith(folder.rstrip("/") + "/"))


def _is_note(path: str, notes_root: str) -> bool:
    if not _under(path, notes_root) or not path.endswith(".md"):
        return False
    relative = PurePosixPath(path[len(notes_root) :].lstrip("/"))
    return not any(part.startswith(".") for part in relative.parts)


def members(index: Path, workspace: Workspace) -> list[dict[str, Any]]:
    """The indexed, non-private sessions that belong to ``workspace``, with turn counts."""
    folders = workspace_folders(workspace)
    notes_root = str(workspace.notes_dir.resolve())
    prefix = notes_root.rstrip("/") + "/"
    conn = connect(index)
    try:
        rows = {
            row["id"]: dict(row) for row in conn.execute("SELECT * FROM sessions WHERE NOT private")
        }
        counts = dict(
            conn.execute("SELECT session, count(*) FROM turns GROUP BY session").fetchall()
        )
        belong = {sid for sid, row in rows.items() if any(_under(row["cwd"], f) for f in folders)}
        for sid, cwd in conn.execute("SELECT DISTINCT session, cwd FROM turns"):
            if sid not in belong and any(_under(cwd, f) for f in folders):
                belong.add(sid)
        query = (
            "SELECT DISTINCT t.session, f.path FROM touched f JOIN turns t ON t.id = f.turn "
            "WHERE substr(f.path, 1, ?) = ?"
        )
        for sid, path in conn.execute(query, (len(prefix), prefix)):
            if sid not in belong and _is_note(path, notes_root):
                belong.add(sid)
    finally:
        conn.close()
    return [{**rows[sid], "turns": counts.get(sid, 0)} for sid in sorted(belong) if sid in rows]


def derived_record(row: dict[str, Any]) -> dict[str, Any]:
    """The record ingest writes for an indexed session of this workspace."""
    has_handoff = row["tool"] in HANDOFF_TOOLS and bool(row.get("handoff"))
    return {
        "id": row["id"],
        "tool": row["tool"],
        "kind": sessions.DERIVED,
        "native_id": row["native_id"],
        "parent": row["parent"],
        "started": row["started"],
        "ended": row["ended"],
        "cwd": row["cwd"],
        "branch": row["branch"],
        "task": None,
        "notes": [],
        "handoff": row["handoff"] if has_handoff else None,
        "handoff_derived": has_handoff,
        "turns": row["turns"],
    }


def _private_sessions(index: Path) -> list[str]:
    conn = connect(index)
    try:
        return [row[0] for row in conn.execute("SELECT id FROM sessions WHERE private")]
    finally:
        conn.close()


def write_derived(index: Path, workspace: Workspace) -> int:
    """Write or refresh the derived records of ``workspace``; how many files changed.

    A session marked private since its record was derived loses the record.
    """
    written = 0
    for sid in _private_sessions(index):
        existing = sessions.load_record(workspace, sid)
        if existing is not None and existing.get("kind") == sessions.DERIVED:
            sessions.record_path(workspace, sid).unlink(missing_ok=True)
            written += 1
    for row in members(index, workspace):
        record = derived_record(row)
        existing = sessions.load_record(workspace, record["id"])
        if existing is not None and (
            existing.get("kind") != sessions.DERIVED or existing == record
        ):
            continue
        sessions.write_record(workspace, record)
        written += 1
    return written
