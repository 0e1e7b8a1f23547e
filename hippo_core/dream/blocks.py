"""How dreaming lays text out for a model: fenced blocks and compact ordinal ranges."""

from __future__ import annotations

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
