"""The one way hippo writes a file that a person may read: whole or not at all."""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike


def atomic_write(path: str | PathLike[str], data: bytes | str, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync and rename.

    A reader sees the old file or the new one, never a torn mix; a crash leaves at most a
    stray ``.<name>.*.tmp`` file beside it. An existing file keeps its permission bits.
    ``durable=False`` skips the two fsyncs, for files hippo can derive again (thousands of
    session records at a first ingest): still whole or absent, perhaps lost to a power cut.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = os.fspath(path)
    folder, name = os.path.split(path)
    folder = folder or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = _temporary(folder, name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except FileNotFoundError:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(folder)


_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _temporary(folder: str, name: str) -> tuple[int, str]:
    # What tempfile.mkstemp does, without importing tempfile (and random) on the hot path.
    while True:
        tmp = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _FLAGS, 0o600), tmp
        except FileExistsError:
            continue


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(directory: str) -> None:
    # The rename is durable only once the directory entry is on disk.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
