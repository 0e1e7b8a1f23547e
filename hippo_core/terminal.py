"""Text hippo did not write (turns, teammates' names, notes, drafts), made safe to print.

A transcript can quote coloured tool output, and a teammate can push any member name: their
escape sequences would clear the screen, set the window's title or write the clipboard of
whoever reads them. What hippo keeps is left as it was; only what it prints is changed.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

#: What a control character that is not part of a sequence is printed as: its picture
#: (U+2400 to U+241F, U+2421 for DEL) for C0, U+FFFD for C1.
PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
PICTURES |= {code: "\ufffd" for code in range(0x80, 0xA0)}

_pattern: re.Pattern[str] | None = None


def printable(text: str) -> str:
    """``text`` without terminal control: every escape sequence (CSI, OSC, DCS and the
    others, with their parameters) taken out whole, every other C0 or C1 control character
    but a line break and a tab replaced by a visible picture (``\\r\\n`` is a line break)."""
    # The common case, text with no control character, costs no import (the agents' hooks
    # print errors through here).
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    global _pattern
    if _pattern is None:
        import re

        _pattern = re.compile(
            # CSI (ESC [ or 0x9B): parameters, intermediates, one final byte.
            r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
            # OSC, DCS, SOS, PM, APC: a string up to BEL or ST (an unterminated one loses
            # only its introducer, below, so the text after it stays visible).
            r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
            # Any other escape sequence: ESC, intermediates, one final byte.
            r"|\x1b[\x20-\x2f]*[\x30-\x7e]"
            r"|\r\n"
            r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
        )
    return _pattern.sub(_replace, text)


def _replace(match: re.Match[str]) -> str:
    found = match.group()
    if found == "\r\n":
        return "\n"
    if len(found) == 1:
        return PICTURES[ord(found)]
    return ""


def printable_json(data: Any) -> str:
    """``data`` as indented JSON, with DEL and the C1 characters escaped (``json`` escapes
    C0 itself): the same JSON, safe on a terminal."""
    import json

    text = json.dumps(data, indent=2, ensure_ascii=False)
    if text.isascii():
        return text
    return text.translate({code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)})
