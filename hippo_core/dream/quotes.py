"""Whether a proposal's new text quotes an evidence turn word for word.

A quote is a run of words copied from the turn, in order, that brings something ``old``
does not already say: two or more words, or one value (a word holding a digit or one of
``/ . _ - = : @``, such as a port, a path or an option). Punctuation and Markdown marks
around a word are ignored, so `` `uv run pytest` `` quotes ``uv run pytest``.

A value inside a longer word counts too, when the rest of the word is ``old``'s: in
``localhost:8443/health``, made from ``old``'s ``localhost:8080/health``, the changed part
``8443`` is quoted when the turn states ``8443`` on its own or inside a word of its own
(``port 8443``, ``http://localhost:8443/health``), never as part of a longer number or name.
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
    new_words, old_words = words(new), words(old)
    known = set(old_words)
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
    for word in new_words:
        if word not in known and word not in where:
            part = changed_part(word, old_words)
            if part and _value(part) and _states(turn, part):
                return True
    return False


def changed_part(word: str, old_words: list[str]) -> str:
    """What ``word`` changed of the ``old_words`` word most like it (the longest start and
    end they share), widened to whole runs of letters and digits and without the marks
    around it: ``8443`` of ``localhost:8443/health`` against ``localhost:8080/health``.
    Empty when no old word shares a start or an end with ``word``."""
    best = (0, 0)
    for before in old_words:
        if before == word:
            continue
        head = 0
        most = min(len(word), len(before))
        while head < most and word[head] == before[head]:
            head += 1
        tail = 0
        while tail < most - head and word[-1 - tail] == before[-1 - tail]:
            tail += 1
        if head + tail > sum(best):
            best = (head, tail)
    if not sum(best):
        return ""
    start, end = best[0], len(word) - best[1]
    # A run of digits or letters is changed whole: 8080 to 8443 shares the leading 8.
    left = start == end or word[start].isalnum()
    right = start == end or word[end - 1].isalnum()
    while left and start > 0 and word[start - 1].isalnum():
        start -= 1
    while right and end < len(word) and word[end].isalnum():
        end += 1
    part = word[start:end]
    while part and not part[0].isalnum():
        part = part[1:]
    while part and not part[-1].isalnum():
        part = part[:-1]
    return part


def _states(text: str, value: str) -> bool:
    """Whether ``value`` is in ``text`` with no letter or digit right before or after it."""
    at = text.find(value)
    while at >= 0:
        after = at + len(value)
        if (at == 0 or not text[at - 1].isalnum()) and (
            after == len(text) or not text[after].isalnum()
        ):
            return True
        at = text.find(value, at + 1)
    return False


#: The least share of a change's new words that the evidence must hold.
DRAWN_SHARE = 0.5


def undrawn(new: str, old: str, evidence: str) -> list[str]:
    """Why ``new`` (in place of ``old``) is not drawn from ``evidence`` as a whole (the
    evidence turns' text, times and the handoffs the prompt showed); empty when it is.

    Every value ``new`` brings (a word holding a digit or one of ``/ . _ - = : @``: a port,
    a path, a URL, an option) must be stated by the evidence, whole or as the changed part
    of a word of ``old`` (:func:`changed_part`); and at least :data:`DRAWN_SHARE` of the
    words ``new`` brings (stemmed, common words left out) must be the evidence's. One run
    of two words copied from a turn no longer carries a change on its own: the payload
    beside it has to come from the evidence too."""
    from hippo_core.notes.terms import terms

    old_words = words(old)
    known, stated = set(old_words), set(words(evidence))
    missing = []
    for word in dict.fromkeys(words(new)):
        if word in known or word in stated or not _value(word):
            continue
        part = changed_part(word, old_words)
        if not (part and _value(part) and _states(evidence, part)) and not _states(evidence, word):
            missing.append(word)
    problems = []
    if missing:
        shown = ", ".join(f"`{w}`" for w in missing[:3]) + (" ..." if len(missing) > 3 else "")
        problems.append(f"new brings values no evidence states: {shown}")
    brought = set(terms(new)) - set(terms(old))
    if brought:
        found = len(brought & set(terms(evidence)))
        if found < DRAWN_SHARE * len(brought):
            problems.append(
                f"new is not drawn from the evidence: {found} of the {len(brought)} words it "
                f"brings are in the evidence (at least half must be)"
            )
    return problems
