"""An exclusive lock on a file, held for a ``with`` block: ``fcntl`` on POSIX, ``msvcrt`` on
Windows. Locks are advisory: they order hippo's own processes, nothing else.
"""

from __future__ import annotations

import contextlib
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from os import PathLike
    from typing import IO, Any


def _try_lock(handle: IO[Any]) -> bool:
    if os.name == "nt":
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(handle: IO[Any]) -> None:
    if os.name == "nt":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    import fcntl

    fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def file_lock(
    path: str | PathLike[str],
    *,
    wait: float | None = None,
    on_wait: Any = None,
    owner_only: str | PathLike[str] | None = None,
) -> Iterator[IO[str] | None]:
    """A context manager holding an exclusive lock on ``path`` (created if missing); with
    ``wait``, it gives None after that many seconds instead of waiting on; with ``owner_only``
    (the owner-only folder at or above the lock's), the lock file is 0600 in 0700 folders.

    Waits for as long as it takes when ``wait`` is None, else at most ``wait`` seconds and
    then yields None (the caller decides what to say). ``on_wait`` is called once when the
    lock is busy. ``owner_only`` names the owner-only folder at or above the lock's folder
    (:func:`~hippo_core.files.owner_only.owner_only_folder`): the lock file is then 0600.
    """
    if owner_only is None:
        os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
        handle = open(path, "a+")  # noqa: SIM115  (closed by the with below)
    else:
        from hippo_core.files.owner_only import owner_only_open

        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND
        handle = os.fdopen(owner_only_open(path, flags, owner_only), "a+")
    with handle:
        deadline = None if wait is None else time.monotonic() + wait
        told = False
        while not _try_lock(handle):
            if deadline is not None and time.monotonic() > deadline:
                yield None
                return
            if not told and on_wait is not None:
                on_wait()
                told = True
            time.sleep(0.02)
        try:
            yield handle
        finally:
            _unlock(handle)
