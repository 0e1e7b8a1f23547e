"""Which files of a folder changed since the last look, told by each file's identity (its
inode, modification time and size) rather than by comparing its time with the clock: a
record written while the clock stood behind an earlier look, or copied in with an old
time, is still seen. hippo writes every record by a rename, so each write makes a new
inode."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: A file's identity: inode, modification time (ns) and size.
Signature = tuple[int, int, int]


def signatures(folder: str | os.PathLike[str], suffix: str = ".json") -> dict[str, Signature]:
    """Each file of ``folder`` whose name ends in ``suffix``, with its identity; empty when
    the folder cannot be read."""
    found: dict[str, Signature] = {}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        if not entry.name.endswith(suffix):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        found[entry.name] = (info.st_ino, info.st_mtime_ns, info.st_size)
    return found


def changed(now: Mapping[str, Signature], before: Mapping[str, object]) -> list[str]:
    """The names of ``now`` that ``before`` (as read back from JSON) does not hold as they
    are: new files, and files written since."""
    return sorted(name for name, mark in now.items() if _as_signature(before.get(name)) != mark)


def _as_signature(value: object) -> Signature | None:
    if isinstance(value, (list, tuple)) and len(value) == 3 and all(type(v) is int for v in value):
        return (value[0], value[1], value[2])
    return None
