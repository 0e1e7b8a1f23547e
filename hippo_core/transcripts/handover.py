"""The markers around what hippo hands an agent, so that it is never taken for the person's.

An agent may put hippo's block where the person's words go: OpenCode's plugin and the
wrapper scripts send it with the first prompt, and Gemini CLI folds every hook's context
into the user's message as ``<hook_context>...</hook_context>``, with ``<`` and ``>``
inside escaped (so hippo's markers arrive as ``&lt;hippo-context&gt;``), and hands its
BeforeAgent hook the prompt with SessionStart's context already in it. The hooks wrap what
they print, and the hooks' task text and every transcript source drop the wrapped spans
from the prompt they read (:func:`strip`), so ``hippo search`` finds what the person asked,
and a note the block names is not a note the session mentioned.

Plain ``str`` methods only: the agents' hooks import this on every prompt.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

BEGIN = "<hippo-context>"
END = "</hippo-context>"
#: hippo's markers as Gemini CLI hands a hook's context back, ``<`` and ``>`` escaped.
ESCAPED_BEGIN = "&lt;hippo-context&gt;"
ESCAPED_END = "&lt;/hippo-context&gt;"
#: Gemini CLI's wrapper around one hook's context in the user's message.
HOOK_BEGIN = "<hook_context>"
HOOK_END = "</hook_context>"
#: Any of these in a prompt means :func:`strip` has something to do.
MARKS = (BEGIN, ESCAPED_BEGIN, END, ESCAPED_END, HOOK_BEGIN, HOOK_END)


#: What a marker inside the text hippo wraps becomes: the same words, no longer a marker.
NEUTRAL = "\u2039"  # a single left-pointing angle quotation mark, for the marker's <


def wrap(text: str) -> str:
    """``text`` between the markers, each on its own line; nothing stays nothing. A marker
    inside ``text`` (a note or a core that quotes one) is neutralised first, its ``<``
    made :data:`NEUTRAL`, so the block ends exactly once, where hippo ends it."""
    if not text:
        return ""
    body = neutral(text if text.endswith("\n") else text + "\n")
    return f"{BEGIN}\n{body}{END}\n"


def neutral(text: str) -> str:
    """``text`` with each of hippo's markers (and Gemini CLI's wrapper) made plain words."""
    if "<" not in text and "&lt;" not in text:
        return text
    for mark in MARKS:
        if mark in text:
            opening = "&lt;" if mark.startswith("&lt;") else "<"
            text = text.replace(mark, NEUTRAL + mark[len(opening) :])
    return text


def handed(text: str) -> bool:
    """True when ``text`` holds something an agent was handed (a block, a hook's context)."""
    return any(mark in text for mark in MARKS)


def strip(text: str) -> str:
    """``text`` without what agents were handed: every ``<hook_context>`` span (nested ones
    inside it), then every block of hippo's, plain or escaped (a block inside a block
    goes with it; an unclosed one runs to the end, a stray end marker goes alone).

    A marker of hippo's counts only where hippo writes one: alone on its line (after
    Gemini CLI's ``<hook_context>`` tags, for an escaped one). A marker inside a line is
    the person's words (a pasted log saying "see <hippo-context> for details"), and
    neither it nor what follows it is taken out.

    A ``<hook_context>`` left open ends where the block of hippo's it holds ends; one
    that holds none is kept as it is, since nothing tells where the person's words
    begin again.
    """
    if HOOK_BEGIN in text or HOOK_END in text:
        text = _spans(text, (HOOK_BEGIN,), (HOOK_END,), _open_hook)
    if BEGIN in text or ESCAPED_BEGIN in text or END in text or ESCAPED_END in text:
        text = _spans(text, (BEGIN, ESCAPED_BEGIN), (END, ESCAPED_END), _open_block)
    return text


def _find(text: str, marks: tuple[str, ...], start: int) -> tuple[int, str]:
    """The first of ``marks`` at or after ``start``: its offset and itself (-1 if none).
    A marker of hippo's block is one only where hippo writes it (:func:`_alone`)."""
    found, which = -1, ""
    for mark in marks:
        at = text.find(mark, start)
        while at != -1 and mark not in _HOOK and not _alone(text, at, mark):
            at = text.find(mark, at + 1)
        if at != -1 and (found == -1 or at < found):
            found, which = at, mark
    return found, which


_HOOK = (HOOK_BEGIN, HOOK_END)


def _alone(text: str, at: int, mark: str) -> bool:
    """True when the marker at ``at`` stands alone on its line: nothing but blanks before
    and after it, or Gemini CLI's ``<hook_context>`` tags around it."""
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    before = text[line_start:at].replace(HOOK_BEGIN, "")
    after = text[at + len(mark) : len(text) if line_end == -1 else line_end]
    return not before.strip() and not after.replace(HOOK_END, "").strip()


def _spans(
    text: str,
    begins: tuple[str, ...],
    ends: tuple[str, ...],
    left_open: Callable[[str, int], int | None],
) -> str:
    """``text`` without the spans from a begin mark to its matching end mark, nested ones
    counted. A span whose own end is missing ends with the last span inside it that did
    end (a block pasted twice, the first one cut short); one with none such ends where
    ``left_open(text, start)`` says (``None``: it is no span, keep it)."""
    kept: list[str] = []
    at = 0
    while True:
        begin, _ = _find(text, begins, at)
        end, mark = _find(text, ends, at)
        if end != -1 and (begin == -1 or end < begin):
            kept.append(text[at:end])  # a stray end mark: it goes, what is around it stays
            at = end + len(mark)
            continue
        if begin == -1:
            kept.append(text[at:])
            return "".join(kept)
        kept.append(text[at:begin])
        close = _close(text, begin, begins, ends)
        if close is None:
            close = left_open(text, begin)
            if close is None:
                kept.append(text[begin:])
                return "".join(kept)
        at = close


def _close(text: str, begin: int, begins: tuple[str, ...], ends: tuple[str, ...]) -> int | None:
    """Where the span opened at ``begin`` ends: after its matching end mark, else after the
    last end mark of a span inside it, else ``None``."""
    depth, cursor, last = 0, begin, None
    while True:
        inner, opened = _find(text, begins, cursor)
        end, mark = _find(text, ends, cursor)
        if end == -1:
            return last
        if inner != -1 and inner < end:
            depth += 1
            cursor = inner + len(opened)
            continue
        depth -= 1
        cursor = last = end + len(mark)
        if depth == 0:
            return cursor


def _open_block(text: str, start: int) -> int:
    """An unclosed block of hippo's runs to the end (cut off while it was written)."""
    return len(text)


def _open_hook(text: str, start: int) -> int | None:
    """An unclosed ``<hook_context>`` holding a block of hippo's ends with that block (and
    the blank lines after it, which Gemini CLI puts before the person's words)."""
    begin, _ = _find(text, (BEGIN, ESCAPED_BEGIN), start)
    if begin == -1:
        return None
    end, mark = _find(text, (END, ESCAPED_END), begin)
    if end == -1:
        return len(text)
    close = end + len(mark)
    while close < len(text) and text[close] in "\r\n":
        close += 1
    return close
