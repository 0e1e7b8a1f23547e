"""Forgetting words for good: taking given texts out of what the kernel keeps for a
workspace, for a plugin that forgets (the sleep pack's ``hippo forget``).

:func:`forget_text` replaces, wherever one of the texts appears, the whole value that holds
it with ``[purged]``: the session records' tasks and handoffs (so the team index's next
push sends the purged value too), and the session log made from them. It deletes the notes
index, a cache the next command rebuilds from the notes, since SQLite keeps deleted rows in
its free pages. What a change's history keeps of a note is :func:`purge_note_history`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo_core.dream.receipts import PURGED

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

#: The fields of a session record that hold what a session was asked and handed off.
SESSION_TEXTS = ("task", "handoff", "title", "last_answer")


def forget_text(workspace: Workspace, texts: list[str]) -> dict[str, int]:
    """Take every one of ``texts`` out of the workspace's session records, the session
    log and the notes index; the counts of what was touched (``sessions``, ``log``,
    ``notes_index``). Texts shorter than 8 characters are left alone: too common to be
    anybody's words."""
    from hippo_core.actions.log import write_log
    from hippo_core.agents import sessions

    wanted = [t.strip() for t in texts if len(t.strip()) >= 8]
    done = {"sessions": 0, "log": 0, "notes_index": 0}
    if not wanted:
        return done
    with sessions.records_lock(workspace):
        for record in sessions.session_records(workspace, model_runs=True):
            changed = False
            for key in SESSION_TEXTS:
                value = record.get(key)
                if isinstance(value, str) and any(t in value for t in wanted):
                    record[key] = PURGED
                    changed = True
            if changed:
                sessions.write_record(workspace, record)
                done["sessions"] += 1
    log = workspace.log_path
    if done["sessions"] and log.exists():
        write_log(workspace)
        done["log"] = 1
    for name in ("notes.sqlite", "notes.sqlite-wal", "notes.sqlite-shm"):
        path = workspace.cache_dir / name
        if path.exists():
            path.unlink(missing_ok=True)
            done["notes_index"] = 1
    from hippo_core.dream.marks import CACHE

    # Which notes were dreamed, by path: made again from the receipts when next asked.
    (workspace.cache_dir / CACHE).unlink(missing_ok=True)
    return done
