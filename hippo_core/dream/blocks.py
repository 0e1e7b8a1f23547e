"""How dreaming lays text out for a model: fenced blocks, quoted fields, material that
cannot pass for the prompt's own sections, and compact ordinal ranges.

What hippo did not write (a turn, a note, a session's task, a teammate's name, a file a
turn read) is material, never instructions: long texts go in a fence (:func:`fence`), a
value of one line goes as a JSON string (:func:`quoted_field`), and whatever a reader
gives a prompt passes :func:`as_material`, so that no line of it reads as one of the
prompt's own sections (``## Your reply``).
"""

from __future__ import annotations

import json
import re

_BACKTICKS = re.compile(r"`{3,}")
#: A prompt or answer longer than this is cut in a prompt, with a marker saying so.
MAX_TURN_CHARS = 6000


def fence(text: str, info: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it, so it stays whole."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=2)
    ticks = "`" * (longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{info}\n{body}{ticks}\n"


def quoted_field(value: object) -> str:
    """A value hippo did not write, shown in a prompt as one JSON string: its line breaks
    escaped, quoted from end to end, so it can open no section, item or fence."""
    return json.dumps(str(value), ensure_ascii=False)


_TOKEN = re.compile(r"[\w.:+~/@-]+")


def token_field(value: object) -> str:
    """An id, a time or a path as a prompt shows it: as it is when it is one plain token
    (letters, digits and ``. : + ~ / @ - _``), else quoted as :func:`quoted_field` does."""
    text = str(value)
    return text if _TOKEN.fullmatch(text) else quoted_field(text)


_OPENS = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
#: A line a prompt's own structure could be taken for: a heading of level 1 or 2.
_SECTION = re.compile(r"^[ \t]{0,3}#{1,2}(?:[ \t]|$)")


def as_material(text: str) -> str:
    """``text`` as a reader gives it to a prompt, with each line outside its fences that
    would read as a section of the prompt itself (a ``#`` or ``##`` heading: a prompt's
    own sections are of those levels, a reader's blocks begin ``###``) quoted with ``> ``.
    Applied to every placeholder's text when a prompt is rendered, a first-party reader's
    or a plugin's alike, and to what the reviewer is shown."""
    if "#" not in text:
        return text
    lines = text.split("\n")
    closing = ""
    for number, line in enumerate(lines):
        if closing:
            if (
                line.strip()
                and set(line.strip()) == {closing[0]}
                and len(line.strip()) >= len(closing)
            ):
                closing = ""
            continue
        opened = _OPENS.match(line)
        if opened:
            closing = opened.group(1)
        elif _SECTION.match(line):
            lines[number] = "> " + line
    return "\n".join(lines)


def cut(text: str, limit: int = MAX_TURN_CHARS) -> tuple[str, bool]:
    """``text`` up to ``limit`` characters, with a marker when more was left out."""
    if len(text) <= limit:
        return text, False
    return f"{text[:limit]}\n[... {len(text) - limit:,} more characters not shown]", True


def ranges(ordinals: list[int]) -> str:
    """``0-4, 7, 9-10`` for ``[0, 1, 2, 3, 4, 7, 9, 10]``."""
    parts: list[str] = []
    run: list[int] = []
    for value in sorted(set(ordinals)):
        if run and value != run[-1] + 1:
            parts.append(_run(run))
            run = []
        run.append(value)
    if run:
        parts.append(_run(run))
    return ", ".join(parts)


def _run(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"
