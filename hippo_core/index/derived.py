"""Derived session records: the indexed sessions that belong to a workspace.

A session belongs when it ran in the workspace's folder (or the same folder of one of its
git worktrees), or when one of its turns read, edited or cited one of the workspace's
notes. Sessions of other projects stay in the index and get no record here, and so do the
sessions of hippo's own model runs (a ``cwd`` in one of its model folders,
:mod:`hippo_core.files.model_folder`), whatever notes they read.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path, PurePosixPath

from hippo_core.agents import sessions
from hippo_core.files.cache import read_cache, write_cache
from hippo_core.files.model_folder import in_model_folder
from hippo_core.index.db import connect, generation
from hippo_core.index.history import FOLDERS_FILE
from hippo_core.index.seen import changed, signatures
from hippo_core.workspace.folder import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The agents whose derived records carry the last assistant message as their handoff.
HANDOFF_TOOLS = frozenset({"codex", "dsh", "opencode", "muse", "command-code"})


def workspace_folders(workspace: Workspace) -> list[str]:
    """The workspace's folder and the same folder in each git worktree of its repository."""
    import subprocess

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


def members(
    conn: sqlite3.Connection, workspace: Workspace, folders: list[str], since: int | None = None
) -> list[dict[str, Any]]:
    """The indexed, non-private sessions that belong to ``workspace`` (whose folders, its
    worktrees' included, are ``folders``), with turn counts; with ``since``, only those
    that changed after that generation of the index."""
    notes_root = str(workspace.notes_dir.resolve())
    prefix = notes_root.rstrip("/") + "/"
    after = -1 if since is None else since  # every session's generation is at least 0
    changed = "JOIN sessions s ON s.id = t.session AND s.changed > :after"
    turns = f"turns t {changed}"
    rows = {
        row["id"]: dict(row)
        for row in conn.execute(
            "SELECT * FROM sessions WHERE NOT private AND changed > :after", {"after": after}
        )
    }
    counts = dict(
        conn.execute(
            f"SELECT t.session, count(*) FROM {turns} GROUP BY t.session", {"after": after}
        ).fetchall()
    )
    belong = {sid for sid, row in rows.items() if any(_under(row["cwd"], f) for f in folders)}
    hippos = {sid for sid, row in rows.items() if in_model_folder(row["cwd"])}
    for sid, cwd in conn.execute(
        f"SELECT DISTINCT t.session, t.cwd FROM {turns}", {"after": after}
    ):
        if sid not in belong and any(_under(cwd, f) for f in folders):
            belong.add(sid)
        if sid not in hippos and in_model_folder(cwd):
            hippos.add(sid)
    belong -= hippos  # a dream's model run read the notes: hippo's own doing
    query = (
        f"SELECT DISTINCT t.session, f.path FROM touched f JOIN turns t ON t.id = f.turn "
        f"{changed} WHERE substr(f.path, 1, :length) = :prefix"
    )
    parameters = {"after": after, "length": len(prefix), "prefix": prefix}
    for sid, path in conn.execute(query, parameters):
        if sid not in belong and sid not in hippos and _is_note(path, notes_root):
            belong.add(sid)
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


def _private_sessions(conn: sqlite3.Connection, since: int | None) -> list[str]:
    query = "SELECT id FROM sessions WHERE private AND changed > ?"
    return [row[0] for row in conn.execute(query, (-1 if since is None else since,))]


def write_derived(index: Path, workspace: Workspace) -> int:
    """Write or refresh the derived records of ``workspace``; how many files changed.

    A session marked private since its record was derived loses the record. Only the
    sessions that changed since the last time are looked at, unless the workspace's notes
    folder or its git worktrees changed: then every session is. (A derived record deleted
    by hand comes back when its session changes, or with ``hippo ingest --full``.)
    """
    marker = workspace.inside(".hippo", "cache", "derived.json")
    key = _key(index, workspace)
    conn = connect(index)
    try:
        now = generation(conn)
        known = read_cache(marker, key) if key is not None else None
        since, folders, checked = None, None, None
        if isinstance(known, dict) and isinstance(known.get("generation"), int):
            since, folders, checked = (
                known["generation"],
                known.get("folders"),
                known.get("records"),
            )
        if not isinstance(folders, list):
            folders = workspace_folders(workspace)
        # The sessions the index changed since the last time, then the declared records
        # written since (a session-end hook ends a session after its last turn was read),
        # told by each record file's identity, never by its time against the clock.
        written = _write(conn, workspace, folders, since) if since != now else 0
        seen = signatures(workspace.sessions_dir)
        before = checked if since is not None and isinstance(checked, dict) else {}
        fresh = changed(seen, before)
        if fresh:
            written += _ended_without_handoff(conn, workspace, fresh)
    finally:
        conn.close()
    if key is not None and (since != now or fresh):
        # Records this run wrote are read again next time: cheap, and never missed.
        write_cache(marker, key, {"generation": now, "folders": folders, "records": seen})
    if key is not None:
        _keep_folders(workspace, key, folders)
    return written


def _keep_folders(workspace: Workspace, key: str, folders: list[str]) -> None:
    """Keep the workspace's folders, its git worktrees' among them, in a file of their own
    (``.hippo/cache/folders.json``): the first prompt's ranking reads them, and reading
    them out of ``derived.json``, which names every session record, would cost it more than
    the ranking itself."""
    path = workspace.inside(".hippo", "cache", FOLDERS_FILE)
    if read_cache(path, key) != folders:
        write_cache(path, key, folders)


def _key(index: Path, workspace: Workspace) -> str | None:
    """What says which sessions can belong to the workspace: the index, the notes folder
    and git's record of the worktrees. None when git is told where to look (``GIT_DIR``)
    and only git can say which worktrees there are."""
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
        return None
    stamps = [(path, _mtime(path)) for path in _git_folders(workspace.folder)]
    return repr((str(index), workspace.folder, workspace.settings.notes_dir, stamps))


def _git_folders(start: str) -> list[str]:
    """Where git keeps what ``git worktree list`` reads: the ``.git`` entry found walking up
    from ``start`` (a folder, or a worktree's file naming its folder) and the ``worktrees``
    folder of the repository's own git folder. Their times move when a worktree comes or goes."""
    folder = os.path.realpath(start)
    while True:
        entry = os.path.join(folder, ".git")
        if os.path.isdir(entry):
            return [entry, os.path.join(entry, "worktrees")]
        if os.path.isfile(entry):
            common = _common_dir(entry)
            return [entry] + ([os.path.join(common, "worktrees")] if common else [])
        parent = os.path.dirname(folder)
        if parent == folder:
            return []
        folder = parent


def _common_dir(dot_git_file: str) -> str | None:
    try:
        with open(dot_git_file, encoding="utf-8") as handle:
            line = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    gitdir = line.removeprefix("gitdir:").strip()
    if not gitdir:
        return None
    gitdir = os.path.join(os.path.dirname(dot_git_file), gitdir)
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(gitdir, handle.read().strip()))
    except (OSError, UnicodeDecodeError):
        return None


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _write(
    conn: sqlite3.Connection, workspace: Workspace, folders: list[str], since: int | None
) -> int:
    written = 0
    for sid in _private_sessions(conn, since):
        existing = sessions.load_record(workspace, sid)
        if existing is not None and existing.get("kind") == sessions.DERIVED:
            sessions.record_path(workspace, sid).unlink(missing_ok=True)
            written += 1
    for row in members(conn, workspace, folders, since):
        record = derived_record(row)
        existing = sessions.load_record(workspace, record["id"])
        if existing is not None and existing.get("kind") != sessions.DERIVED:
            written += _declared_handoff(conn, workspace, row)
            continue
        if existing == record:
            continue
        sessions.write_record(workspace, record)
        written += 1
    return written


def _ended_without_handoff(conn: sqlite3.Connection, workspace: Workspace, names: list[str]) -> int:
    """Derived handoffs for the declared records ``names`` (those written since the last
    look) that ended with none: the session-end hook ends a session after its last turn
    was indexed."""
    written = 0
    for name in names:
        record = sessions.load_record(workspace, name[: -len(".json")])
        if record is None or record.get("kind") == sessions.DERIVED or not record.get("ended"):
            continue
        if record.get("handoff"):
            continue
        found = conn.execute("SELECT * FROM sessions WHERE id = ?", (record["id"],)).fetchone()
        if found is not None:
            written += _declared_handoff(conn, workspace, dict(found))
    return written


def _declared_handoff(conn: sqlite3.Connection, workspace: Workspace, row: dict[str, Any]) -> int:
    """A declared session that ended without a handoff (the session-end hook ends it as
    ``unspecified``) gets the transcript's last assistant answer as a derived handoff, as
    derived records of the other agents do; ``hippo session end --handoff`` still wins.
    Ingest changes only those two keys of the declared record. 1 when it wrote the record."""
    found = conn.execute(
        "SELECT answer FROM turns WHERE session = ? AND answer != '' ORDER BY ordinal DESC LIMIT 1",
        (row["id"],),
    ).fetchone()
    answer = (row.get("handoff") if row["tool"] in HANDOFF_TOOLS else None) or (
        found[0] if found else None
    )
    if not answer:
        return 0
    with sessions.records_lock(workspace):
        record = sessions.load_record(workspace, row["id"])
        if record is None or record.get("kind") == sessions.DERIVED or not record.get("ended"):
            return 0
        if record.get("handoff") and not record.get("handoff_derived"):
            return 0  # the session's own handoff
        if record.get("handoff") == answer:
            return 0
        record.update(handoff=answer, handoff_derived=True)
        sessions.write_record(workspace, record)
    return 1
