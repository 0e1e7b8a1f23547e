"""The one way hippo writes a file that a person may read: whole or not at all."""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike


def atomic_write(
    path: str | PathLike[str],
    data: bytes | str,
    *,
    durable: bool = True,
    mode: int | None = None,
) -> None:
    """Write ``data`` to ``path`` whole (a temporary file, fsync, rename), its folders made;
    with ``mode``, the file gets exactly those permission bits, else an existing file keeps
    its own and a new one follows the umask.

    A reader sees the old file or the new one, never a torn mix; a crash leaves at most a
    stray ``.<name>.*.tmp`` file beside it. The file gets ``mode`` when it is given (the
    umask aside); else an existing file keeps its permission bits and a new one gets what
    the umask leaves of 0o666. ``durable=False`` skips the two fsyncs, for files hippo can
    derive again (thousands of session records at a first ingest): still whole or absent,
    perhaps lost to a power cut.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = os.fspath(path)
    folder, name = os.path.split(path)
    folder = folder or "."
    os.makedirs(folder, exist_ok=True)
    keep = None
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            keep = os.stat(path).st_mode & 0o7777
    # A new file's bits come from the kernel applying the umask to 0o666 at os.open; any
    # other mode is set on the temporary file, which stays 0o600 until then. The process
    # umask is never read or set: setting it races with every thread creating files.
    fd, tmp = _temporary(folder, name, 0o666 if mode is None and keep is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        wanted = mode if mode is not None else keep
        if wanted is not None:
            os.chmod(tmp, wanted)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(folder)


_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _temporary(folder: str, name: str, mode: int) -> tuple[int, str]:
    # What tempfile.mkstemp does, without importing tempfile (and random) on the hot path.
    while True:
        tmp = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _FLAGS, mode), tmp
        except FileExistsError:
            continue


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
