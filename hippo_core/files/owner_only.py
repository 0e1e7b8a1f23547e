"""Files only their owner reads: ``$HIPPO_HOME``, the session records, the sleep pack's store.

Their folders are made 0700 and their files 0600 whatever the umask, since they hold every
prompt and answer, handoffs and what agents remembered. A folder or file an earlier hippo
left open to others is tightened when hippo next writes there. Settings, notes and packs,
shared through git, follow the umask and are never changed here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from hippo_core.files.atomic import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike
    from typing import Any

FOLDER_MODE = 0o700
FILE_MODE = 0o600

# Modes mean little on Windows (os.chmod sets only the read-only flag): nothing to do there.
_POSIX = os.name != "nt"


def owner_only_folder(folder: str | PathLike[str], top: str | PathLike[str] | None = None) -> None:
    """Make ``folder`` and every folder from ``top`` down to it owner-only (0700).

    ``top`` (default: ``folder``) is the owner-only folder at or above ``folder``; the
    folders above it are made as the umask says. A missing folder is made 0700, an
    existing one with other bits is set to 0700.
    """
    folder = os.path.abspath(folder)
    top = folder if top is None else os.path.abspath(top)
    chain = []
    here = folder
    while here != top:
        chain.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            raise ValueError(f"{folder} is not inside {top}")
        here = parent
    chain.append(top)
    os.makedirs(os.path.dirname(top), exist_ok=True)
    for path in reversed(chain):
        try:
            os.mkdir(path, FOLDER_MODE)
        except FileExistsError:
            mode = os.stat(path).st_mode
            if not stat.S_ISDIR(mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path) from None
            if _POSIX and mode & 0o777 != FOLDER_MODE:
                _tighten(os.chmod, path, FOLDER_MODE)
        else:
            if _POSIX:
                os.chmod(path, FOLDER_MODE)  # the umask may have taken bits of the owner's


def owner_only_open(
    path: str | PathLike[str], flags: int, top: str | PathLike[str] | None = None
) -> int:
    """``os.open(path, flags)`` for a file made (``O_CREAT`` in ``flags``) or kept 0600 in an
    owner-only folder (:func:`owner_only_folder` of its folder and ``top``)."""
    path = os.fspath(path)
    owner_only_folder(os.path.dirname(os.path.abspath(path)), top)
    fd = os.open(path, flags, FILE_MODE)
    try:
        if _POSIX and os.fstat(fd).st_mode & 0o777 != FILE_MODE:
            _tighten(os.fchmod, fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _tighten(change: Any, target: str | int, mode: int) -> None:
    # A folder or file of another user's (a shared HIPPO_HOME) stays as its owner set it.
    with contextlib.suppress(PermissionError):
        change(target, mode)


def owner_only_write(
    path: str | PathLike[str],
    data: bytes | str,
    *,
    top: str | PathLike[str] | None = None,
    durable: bool = True,
) -> None:
    """:func:`~hippo_core.files.atomic.atomic_write` of a file only its owner reads (0600), its
    folder and every folder from ``top`` (default: the file's folder) down to it made or
    tightened to 0700: for what agents and people said (the sleep pack keeps all of
    ``.hippo/sleep/`` so)."""
    owner_only_folder(os.path.dirname(os.path.abspath(path)), top)
    atomic_write(path, data, durable=durable, mode=FILE_MODE if _POSIX else None)


def owner_only_append(
    path: str | PathLike[str], data: bytes, top: str | PathLike[str] | None = None
) -> None:
    """Append ``data`` to ``path`` (a 0600 file in an owner-only folder) with one write."""
    fd = owner_only_open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, top)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
