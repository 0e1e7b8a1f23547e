"""Whether a proposal's new text quotes an evidence turn word for word.

A quote is a run of words copied from the turn, in order, that brings something ``old``
does not already say: two or more words, or one value (a word holding a digit or one of
``/ . _ - = : @``, such as a port, a path or an option). Punctuation and Markdown marks
around a word are ignored, so `` `uv run pytest` `` quotes ``uv run pytest``.
"""

from __future__ import annotations

_MARKS = "`*_\"'()[]{}<>,.;:!?"
_VALUE_CHARS = frozenset("/._-=:@0123456789")


def words(text: str) -> list[str]:
    """The words of ``text``, stripped of surrounding punctuation and Markdown marks."""
    return [w for w in (part.strip(_MARKS) for part in text.split()) if w]


def _value(word: str) -> bool:
    return len(word) >= 2 and any(c in _VALUE_CHARS for c in word)


def quotes(new: str, old: str, turn: str) -> bool:
    """True when ``new`` quotes ``turn`` (see the module's docstring)."""
    new_words, known = words(new), set(words(old))
    where: dict[str, list[int]] = {}
    for position, word in enumerate(words(turn)):
        where.setdefault(word, []).append(position)
    previous: dict[int, int] = {}
    for i, word in enumerate(new_words):
        current: dict[int, int] = {}
        for j in where.get(word, ()):
            length = current[j] = previous.get(j - 1, 0) + 1
            run = new_words[i - length + 1 : i + 1]
            fresh = [w for w in run if w not in known]
            if fresh and (length >= 2 or _value(fresh[0])):
                return True
        previous = current
    return False
