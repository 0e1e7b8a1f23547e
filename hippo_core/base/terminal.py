"""Text hippo did not write (turns, teammates' names, notes, drafts), made safe to print.

A transcript can quote coloured tool output, and a teammate can push any member name: their
escape sequences would clear the screen, set the window's title or write the clipboard of
whoever reads them. Characters that show nothing can carry words nobody sees: Unicode's
tag characters spell out text a model reads, bidirectional controls reorder what a person
reads. What hippo keeps is left as it was; what it prints, to a terminal or to an agent
(the context block), shows every such character instead of obeying it or hiding it, the
same in every view, so a reviewer sees what would land.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

#: What a control character is printed as: its picture (U+2400 to U+241F, U+2421 for DEL)
#: for C0, U+FFFD for C1.
PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
PICTURES |= {code: "\ufffd" for code in range(0x80, 0xA0)}
#: The characters that show nothing yet change what is read, printed as ``<U+XXXX>``:
#: the soft hyphen, bidirectional marks, embeddings, overrides and isolates, zero-width
#: spaces and joiners, the word joiner and invisible operators, the byte order mark and
#: the interlinear annotation marks, and Unicode's tag characters.
HIDDEN = (
    "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"
)

_pattern: re.Pattern[str] | None = None


def printable(text: str) -> str:
    """``text`` with nothing a terminal obeys and nothing hidden: every C0 or C1 control
    character but a line break and a tab shown as its picture (an escape sequence's ESC as
    ␛, so ``␛]52;c;...`` shows what it would have done; ``\\r\\n`` is a line break), and
    every character of :data:`HIDDEN` as ``<U+XXXX>``."""
    # The common case, text with no such character, costs no import (the agents' hooks
    # print through here).
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    global _pattern
    if _pattern is None:
        import re

        _pattern = re.compile(rf"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f{HIDDEN}]")
    return _pattern.sub(_replace, text)


def _replace(match: re.Match[str]) -> str:
    found = match.group()
    if found == "\r\n":
        return "\n"
    code = ord(found)
    return PICTURES.get(code, f"<U+{code:04X}>")


def printable_json(data: Any) -> str:
    """``data`` as indented JSON, with DEL and the C1 characters escaped (``json`` escapes
    C0 itself): the same JSON, safe on a terminal."""
    import json

    text = json.dumps(data, indent=2, ensure_ascii=False)
    if text.isascii():
        return text
    return text.translate({code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)})


#: What starts each line of a text shown as a block under its label.
QUOTE = "| "


def labelled(label: str, text: object, indent: str = "") -> list[str]:
    """``text`` under ``label`` in a review view, as lines that cannot pass for the view's
    own: on the label's line when it is one line, else each of its lines on a line of its
    own, indented under the label and started with ``| `` (a fragment holding
    ``operation 1: ... (approved by ana, person)`` shows as quoted text, never as an
    operation). Lines are not made printable here: the view prints them through
    :func:`printable`."""
    value = str(text if text is not None else "")
    lines = value.splitlines()
    if len(lines) <= 1 and "\r" not in value and "\n" not in value:
        return [f"{indent}{label}: {value}"]
    return [f"{indent}{label}:"] + [f"{indent}  {QUOTE}{line}".rstrip() for line in lines]
