"""What killed runs leave behind, found by name and removed by the next run.

A process killed in the middle of a write leaves hippo's own temporary files; nothing else
would ever remove them. They are recognisable by name, and only those are touched:

- ``.<name>.<hex>.tmp`` beside a file that :func:`~hippo_core.files.atomic.atomic_write` (or a
  receipt's ``create_once``) was writing, in ``notes_dir`` and ``.hippo/``: stale once older
  than :data:`STALE_SECONDS` (a live write takes milliseconds);
- ``hippo-model-*`` folders in the temporary folder, where a model program ran: stale once
  the hippo process that made it (its owner file, :mod:`hippo_core.files.model_folder`) is gone;
- ``.hippo/.pack-*`` staging folders of pack commands: removed by the next pack command,
  which holds the lock no other pack command can (:mod:`hippo_core.packs.changing`).

``hippo dream`` and ``hippo revert`` remove the first two kinds before they start;
``hippo doctor`` names every kind it finds.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.files.model_folder import OWNER, PREFIX
from hippo_core.files.processes import process_alive

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

STALE_SECONDS = 600
MODEL_PREFIX = PREFIX
_TEMPORARY = re.compile(r"\..+\.[0-9a-f]{8,12}\.tmp")


def stale_files(workspace: Workspace) -> list[Path]:
    """hippo's temporary files in ``notes_dir`` and ``.hippo/`` older than STALE_SECONDS."""
    before = time.time() - STALE_SECONDS
    found: list[Path] = []
    for root in (workspace.notes_dir, workspace.hippo_dir):
        for folder, dirs, files in os.walk(root):  # links are not followed
            dirs[:] = [d for d in dirs if not d.startswith(".pack-")]
            for name in files:
                if _TEMPORARY.fullmatch(name):
                    path = Path(folder, name)
                    with contextlib.suppress(OSError):
                        if path.lstat().st_mtime < before:
                            found.append(path)
    return sorted(set(found))


def model_folders() -> list[Path]:
    """``hippo-model-*`` folders whose hippo process is gone (a folder without an owner
    file counts when older than a day: made before owners were written, or torn)."""
    import tempfile

    root = Path(tempfile.gettempdir())
    try:
        entries = [e for e in os.scandir(root) if e.name.startswith(MODEL_PREFIX)]
    except OSError:
        return []
    found = []
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False) and _abandoned(Path(entry.path)):
                found.append(Path(entry.path))
    return sorted(found)


def _abandoned(folder: Path) -> bool:
    try:
        pid = int((folder / OWNER).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return folder.lstat().st_mtime < time.time() - 86_400
    return not process_alive(pid)


def staging_folders(workspace: Workspace) -> list[Path]:
    """Pack commands' staging folders in ``.hippo/``."""
    try:
        return sorted(
            Path(e.path)
            for e in os.scandir(workspace.hippo_dir)
            if e.name.startswith(".pack-") and e.is_dir(follow_symlinks=False)
        )
    except OSError:
        return []


def remove(paths: list[Path]) -> int:
    """Remove each path (a file, or a folder and what it holds); how many went."""
    removed = 0
    for path in paths:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue
        removed += 1
    return removed


def tidy(workspace: Workspace) -> int:
    """Remove what killed dreams and reverts left: stale temporary files, abandoned model
    folders. How many went."""
    return remove(stale_files(workspace)) + remove(model_folders())
