"""Session ids, which become file names: kept as they come when they are made of letters,
digits, ``_`` and ``-`` (up to 128), otherwise replaced by ``h-`` and the first 32 hex
digits of their SHA-256, the same every time."""

from __future__ import annotations

DECLARED, DERIVED = "declared", "derived"
_ID_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def session_id(raw: str) -> str:
    """``raw`` when it is a valid id, else its deterministic hashed replacement."""
    if 0 < len(raw) <= 128 and _ID_CHARACTERS.issuperset(raw):
        return raw
    import hashlib

    return "h-" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]
