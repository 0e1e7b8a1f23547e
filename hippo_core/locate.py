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


def utf8_name(name: str) -> bool:
    """Whether a name read from the disk is UTF-8: Python hands other bytes over as
    surrogates, which no index, receipt or prompt can hold, so such files are left out."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """A name that is not UTF-8 as a person can read it: its odd bytes as ``\\xff``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
