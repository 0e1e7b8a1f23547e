"""Which workspace a folder belongs to: the nearest folder at or above it with ``.hippo/``.

Plain ``os.path``: an agent's hooks ask this on every prompt, before anything else is loaded.
"""

from __future__ import annotations

import os

HIPPO_DIR = ".hippo"


def find_root(start: str) -> str | None:
    """The nearest folder at or above ``start`` (symbolic links resolved) holding ``.hippo/``."""
    folder = os.path.realpath(start)
    while True:
        if os.path.isdir(os.path.join(folder, HIPPO_DIR)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
