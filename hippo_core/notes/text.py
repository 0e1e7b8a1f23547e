"""A note's text as text: decoding it, where its frontmatter block is, its entry section.

What the session-start hook needs of the entry note, kept apart from the parsing of
frontmatter (YAML, dates) so that the hook loads none of that.
"""

from __future__ import annotations

import re

from hippo_core.patterns import Lazy
from hippo_core.records import Record

BOM = "\ufeff"
#: The line that opens and closes a frontmatter block (``...`` also closes one).
FENCE = "---"
#: A line opening or closing a code fence, inside which nothing is a heading or a link
#: (compiled when a note is read).
CODE_FENCE = Lazy(r" {0,3}(```|~~~)")
_WORD = re.compile(r"[^\W_]{3,}")


class Split(Record):
    """Where a note's frontmatter block and body are, as offsets into its decoded text.

    ``block`` is the YAML between the fences, None when the note has no (closed) block;
    ``body_line`` is the 1-based line number of the body's first line.
    """

    __slots__ = ("block", "body_start", "body_line", "unclosed")
    block: str | None
    body_start: int
    body_line: int
    unclosed: bool

    def __init__(
        self, block: str | None, body_start: int, body_line: int, unclosed: bool = False
    ) -> None:
        self._set(block=block, body_start=body_start, body_line=body_line, unclosed=unclosed)


def decode_note(raw: bytes) -> tuple[str | None, str]:
    """The note's text, or None and why it cannot be read as a note."""
    if b"\0" in raw:
        return None, "a binary file, not Markdown"
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte {exc.start}); save it as UTF-8"


def split_frontmatter(text: str) -> Split:
    """Find the block: an opening ``---`` line first (after a BOM), up to ``---`` or ``...``."""
    start = 1 if text.startswith(BOM) else 0
    first_end = text.find("\n", start)
    if first_end < 0 or text[start:first_end].rstrip("\r") != FENCE:
        return Split(None, start, 1)
    position, line = first_end + 1, 2
    while position < len(text):
        end = text.find("\n", position)
        stop = len(text) if end < 0 else end
        if text[position:stop].rstrip("\r") in (FENCE, "..."):
            body = len(text) if end < 0 else end + 1
            return Split(text[first_end + 1 : position], body, line + 1)
        position, line = stop + 1, line + 1
    return Split(None, start, 1, unclosed=True)


def entry_section(text: str) -> str:
    """The text of a note's body before its first ``## `` heading, outside code fences."""
    body = text[split_frontmatter(text).body_start :]
    kept: list[str] = []
    in_fence = False
    for line in body.splitlines():
        if CODE_FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and line.startswith("## "):
            break
        kept.append(line)
    return "\n".join(kept).strip("\n")


def words(text: str) -> list[str]:
    """The words of ``text`` of three or more letters or digits, in lower case, in order:
    what a task is matched by against a note's title and headings."""
    return [word.lower() for word in _WORD.findall(text)]


def singular(word: str) -> str:
    """A lower-case word without an English plural ending, as the headings rule matches
    words: ``complaints`` is ``complaint``, ``entries`` is ``entry``. A word and its plural
    give the same key, so that a task's ``complaint`` finds a heading ``Complaints`` and the
    other way round; nothing else is folded (``handled`` stays ``handled``). The key is not
    always a word (``caches`` and ``cache`` are both ``cach``): all a match needs is that
    both forms give it.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    # An "es" plural (boxes, matches, classes) drops its e, and so does the singular it
    # meets (cache, release), so both forms end alike.
    if word.endswith(("se", "xe", "ze", "che", "she")) and len(word) > 3:
        word = word[:-1]
    return word
