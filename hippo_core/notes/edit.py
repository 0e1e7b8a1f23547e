"""The one place hippo edits a note's bytes.

Pure functions from bytes to bytes; writing the result is the atomic-write
helper's job. Every edit keeps each byte outside the changed span as it was,
so a BOM, CRLF line ends, frontmatter key order, YAML comments and a missing
final newline all survive.
"""

from __future__ import annotations

import hashlib
import re

from hippo_core.notes.text import BOM, split_frontmatter

__all__ = ["EditError", "append_text", "note_digest", "replace_text"]

# A "\n" that is not already the second half of a "\r\n".
_BARE_LF = re.compile(r"(?<!\r)\n")


class EditError(ValueError):
    """An edit hippo refuses to make; the message is one line a user can read."""


def replace_text(raw: bytes, old: str, new: str) -> bytes:
    """Return `raw` with the single body occurrence of `old` replaced by `new`.

    `old` must occur exactly once in the whole note, and inside the body. In a
    CRLF note, a bare "\\n" in `old` or `new` is read as "\\r\\n", because a model
    writes "\\n" whatever the file uses.
    """
    if not old:
        raise EditError("old text is empty")
    text = _decode(raw)
    if _is_crlf(text):
        old, new = _to_crlf(old), _to_crlf(new)
    found = _occurrences(text, old)
    if not found:
        raise EditError("old text not found")
    if len(found) > 1:
        raise EditError(f"old text found {len(found)} times; it must occur exactly once")
    start = found[0]
    if start < split_frontmatter(text).body_start:
        raise EditError("old text lies in the frontmatter")
    # Slice the original bytes rather than re-encoding the whole text, so the
    # bytes outside the span are untouched by construction.
    byte_start = len(text[:start].encode("utf-8"))
    byte_end = byte_start + len(old.encode("utf-8"))
    result = raw[:byte_start] + new.encode("utf-8") + raw[byte_end:]
    _check_frontmatter_kept(text, result)
    return result


def append_text(raw: bytes, text: str) -> bytes:
    """Return `raw` with `text` appended at the end of the body.

    The original bytes are a prefix of the result. The appended text uses the
    note's line end and ends with exactly one.
    """
    if not text.strip():
        raise EditError("appended text is empty")
    note = _decode(raw)
    eol = "\r\n" if _is_crlf(note) else "\n"
    if eol == "\r\n":
        text = _to_crlf(text)
    # An empty note needs no separator; any other note must end its last line
    # first, or the appended text would run on from it.
    separator = eol if note and not note.endswith("\n") else ""
    addition = separator + text.rstrip("\r\n") + eol
    result = raw + addition.encode("utf-8")
    _check_frontmatter_kept(note, result)
    return result


def note_digest(raw: bytes) -> str:
    """The digest the applier compares a note's bytes by, as receipts record it:
    ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def _decode(raw: bytes) -> str:
    """Decode a note strictly; the BOM stays as U+FEFF so offsets map back to bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EditError("note is not UTF-8") from None


def _is_crlf(text: str) -> bool:
    """True if the note has line ends and every one of them is CRLF."""
    lf = text.count("\n")
    return lf > 0 and lf == text.count("\r\n")


def _to_crlf(text: str) -> str:
    return _BARE_LF.sub("\r\n", text)


def _occurrences(text: str, old: str) -> list[int]:
    """Start offsets of `old` in `text`, overlapping ones included."""
    # str.count skips overlaps, so "aa" in "aaa" would wrongly look unique.
    found: list[int] = []
    start = text.find(old)
    while start != -1:
        found.append(start)
        start = text.find(old, start + 1)
    return found


def _check_frontmatter_kept(before: str, after: bytes) -> None:
    """Refuse an edit whose body text would open or close a frontmatter block."""
    # Only a note without a closed block is at risk: a "---" line put at the
    # top, or one closing a lone opening fence, would turn body into
    # frontmatter and change what the note's keys are.
    after_text = after.decode("utf-8")
    old_head = before[: split_frontmatter(before).body_start].removeprefix(BOM)
    new_head = after_text[: split_frontmatter(after_text).body_start].removeprefix(BOM)
    # A closing fence at the very end of the file may gain its line end.
    if new_head.rstrip("\r\n") != old_head.rstrip("\r\n"):
        raise EditError("edit would change the frontmatter")
