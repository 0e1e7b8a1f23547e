"""Names read from the disk: whether one is UTF-8, and how to show one that is not.

Python hands a name's odd bytes over as surrogates; no index, receipt or prompt can hold
them, so what lists files leaves such names out and says so in words a person can read.
"""

from __future__ import annotations


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
