"""The markers around what hippo hands an agent, so that it is never taken for the person's.

An agent may put hippo's block where the person's words go: OpenCode's plugin and the
wrapper scripts send it with the first prompt, and Gemini CLI prepends a hook's context to
the prompt when it runs without a terminal. The hooks wrap what they print, and every
transcript source drops the wrapped span from the prompt it indexes, so ``hippo search``
finds what the person asked, and a note the block names is not a note the session mentioned.

Plain ``str`` methods only: the agents' hooks import this on every prompt.
"""

from __future__ import annotations

BEGIN = "<hippo-context>"
END = "</hippo-context>"


def wrap(text: str) -> str:
    """``text`` between the markers, each on its own line; nothing stays nothing."""
    if not text:
        return ""
    body = text if text.endswith("\n") else text + "\n"
    return f"{BEGIN}\n{body}{END}\n"


def strip(text: str) -> str:
    """``text`` without every wrapped span (an unclosed one runs to the end)."""
    while (start := text.find(BEGIN)) != -1:
        end = text.find(END, start)
        text = text[:start] + ("" if end == -1 else text[end + len(END) :])
    return text
