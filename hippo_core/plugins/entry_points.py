"""The entry points in the group ``hippo``, remembered between runs.

Reading every installed distribution's metadata (:mod:`importlib.metadata`) costs an agent's
hook about as much as starting the interpreter, so what a scan found is kept in
``$HIPPO_HOME/cache/entry-points-<interpreter>.json`` (one file per interpreter, so hippo
installed twice on a machine keeps two), keyed by ``sys.path`` and the modification time of
each folder on it (installing or removing a distribution changes its folder's time), and
checked against the times of the ``entry_points.txt`` files it came from.
"""

from __future__ import annotations

import os
import sys
import time

from hippo_core.base.records import Record
from hippo_core.files.cache import read_cache, write_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: A folder or file changed this recently may change again within its mtime's granularity:
#: what was read from it is not kept (git's "racy" entries, the same remedy).
RACY_SECONDS = 2.0


class Point(Record):
    """One entry point: its name, ``module:attribute``, and the distribution it came from."""

    __slots__ = ("name", "value", "distribution", "version")
    name: str
    value: str
    distribution: str
    version: str

    def __init__(self, name: str, value: str, distribution: str, version: str) -> None:
        self._set(name=name, value=value, distribution=distribution, version=version)

    def load(self) -> Any:
        """Import the module and return the object the entry point names, as
        :meth:`importlib.metadata.EntryPoint.load` does (``module:attr.attr [extras]``)."""
        module, _, attribute = self.value.partition(":")
        found = import_module(module.strip())
        for part in attribute.split("[", 1)[0].strip().split(".") if attribute else ():
            found = getattr(found, part)
        return found


def import_module(name: str) -> Any:
    """The module ``name`` (absolute), imported if it was not: :func:`importlib.import_module`
    without importing :mod:`importlib`, which costs the hot path its ``warnings``."""
    __import__(name)
    return sys.modules[name]


def entry_points(group: str) -> list[Point]:
    """The entry points of ``group``, each name once, from the cache when it is still true."""
    now = time.time()
    folders = [(entry, _mtime(entry)) for entry in sys.path]
    key = repr((group, sys.executable, folders))
    cache = cache_path()
    cached = read_cache(cache, key)
    if isinstance(cached, dict) and _still_true(cached.get("files")):
        try:
            return [Point(*point) for point in cached["points"]]
        except (KeyError, TypeError):
            pass
    points, files = _scan(group)
    stamps = [mtime for _entry, mtime in folders] + [stamp[1] for stamp in files]
    if all(mtime is None or mtime < (now - RACY_SECONDS) * 1e9 for mtime in stamps):
        payload = {"points": [list(p.as_dict().values()) for p in points], "files": files}
        from hippo_core.files.home import home_folder

        write_cache(cache, key, payload, owner_only=home_folder())
    return points


def cache_path() -> str:
    """Where this interpreter's entry points are remembered."""
    from zlib import crc32

    from hippo_core.files.home import home_folder

    interpreter = crc32(sys.executable.encode("utf-8", "surrogateescape"))
    return os.path.join(home_folder(), "cache", f"entry-points-{interpreter:08x}.json")


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path or ".").st_mtime_ns
    except (OSError, ValueError):
        return None


def _still_true(files: Any) -> bool:
    if not isinstance(files, list):
        return False
    return all(isinstance(stamp, list) and _mtime(stamp[0]) == stamp[1] for stamp in files)


def _scan(group: str) -> tuple[list[Point], list[list[Any]]]:
    from importlib.metadata import entry_points as scan

    points: dict[str, Point] = {}
    files: list[list[Any]] = []
    for point in scan(group=group):
        # A distribution installed twice on sys.path lists its entry points twice.
        if point.name in points:
            continue
        dist = point.dist
        name = dist.name if dist else "unknown distribution"
        points[point.name] = Point(point.name, point.value, name, dist.version if dist else "")
        folder = getattr(dist, "_path", None)  # where its metadata is, for the cache's check
        if folder is not None:
            listed = os.path.join(os.fspath(folder), "entry_points.txt")
            files.append([listed, _mtime(listed)])
    return list(points.values()), files
