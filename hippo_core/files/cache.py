"""Derived data kept in cache files (``.hippo/cache/``, ``$HIPPO_HOME/cache/``) so the agent's
hot path stays fast.

Every entry is keyed by what it was derived from; a cache that is missing, stale, unreadable
or unwritable only costs time, never correctness.
"""

from __future__ import annotations

import contextlib

from hippo_core.files import jsontext
from hippo_core.files.atomic import atomic_write
from hippo_core.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike
    from typing import Any


def read_cache(path: str | PathLike[str], key: str) -> Any | None:
    """The payload stored under ``key``, or None when there is none for this key and version."""
    try:
        with open(path, "rb") as handle:
            stored = jsontext.loads(handle.read())
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict):
        return None
    if stored.get("hippo") != __version__ or stored.get("key") != key:
        return None
    return stored.get("payload")


def write_cache(
    path: str | PathLike[str], key: str, payload: Any, *, owner_only: str | None = None
) -> None:
    """Store ``payload`` under ``key``; a failure to write is not an error. ``owner_only``
    names the owner-only folder at or above the cache's (``$HIPPO_HOME``)."""
    data = jsontext.dumps({"hippo": __version__, "key": key, "payload": payload}, indent=None)
    with contextlib.suppress(OSError):
        if owner_only is None:
            atomic_write(path, data, durable=False)
        else:
            from hippo_core.files.owner_only import owner_only_write

            owner_only_write(path, data, top=owner_only, durable=False)
