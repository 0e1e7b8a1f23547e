"""Where a note named by a record may be: below ``notes_dir``, and nowhere else."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath


def outside_notes(notes_dir: Path, note: str) -> str:
    """Why ``note`` is not a path that resolves below ``notes_dir``, or "".

    A validator checks this before a reviewer sees the proposal; the applier checks again,
    so that no single check (a plugin's, a hand-edited proposal's) can send a write out of
    the notes, and a link swapped in while the reviewer thought leads nowhere; ``hippo
    revert`` and the purge of a note's history check it too, since a receipt is a file a
    person can edit."""
    below = f"note {note!r} is not a path below the notes folder"
    if not note or "\0" in note:
        return below
    if PurePosixPath(note).is_absolute() or os.path.isabs(note) or ".." in note.split("/"):
        return f"note {note!r} is outside the notes folder"
    top = os.path.realpath(notes_dir)
    found = os.path.realpath(notes_dir / note)
    if found == top:
        return below
    if os.path.commonpath([top, found]) != top:
        return f"note {note!r} leads outside the notes folder through a symbolic link"
    return ""
