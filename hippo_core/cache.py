"""Derived data kept under ``.hippo/cache/`` so the agent's hot path stays fast.

Every entry is keyed by what it was derived from; a cache that is missing, stale, unreadable
or unwritable only costs time, never correctness.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from hippo_core import __version__
from hippo_core.atomic import atomic_write


def read_cache(path: Path, key: str) -> Any | None:
    """The payload stored under ``key``, or None when there is none for this key and version."""
    try:
        with open(path, "rb") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict):
        return None
    if stored.get("hippo") != __version__ or stored.get("key") != key:
        return None
    return stored.get("payload")


def write_cache(path: Path, key: str, payload: Any) -> None:
    """Store ``payload`` under ``key``; a failure to write is not an error."""
    data = json.dumps({"hippo": __version__, "key": key, "payload": payload}, ensure_ascii=False)
    with contextlib.suppress(OSError):
        atomic_write(path, data)
