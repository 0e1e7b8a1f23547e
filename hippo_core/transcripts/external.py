"""What a turn read from outside the project, as short descriptions a model can read.

Each source knows its agent's tools: which fetch a web page, search the web, call an MCP
server or hand work to a sub-agent that did. It describes each such read with the helpers
here (``web: WebFetch https://example.com/install``, ``MCP: github get_issue``,
``file outside the project: ~/Downloads/README.md``), and the index keeps them per turn,
in order, each once (:attr:`~hippo_core.transcripts.model.Turn.external`). What any
source gives, a plugin's too, is cleaned and bounded by :func:`kept` before it is stored.
"""

from __future__ import annotations

import os

from hippo_core.base.patterns import Lazy

#: hippo's own MCP server's calls, which are no read from outside.
HIPPO_MCP = "MCP: hippo "
#: A turn keeps at most this many descriptions; the rest are counted in one last line.
MAX_ITEMS = 20
#: A description is cut to this many characters.
MAX_CHARS = 160
#: Runs of whitespace and control characters (line breaks, tabs, escapes, U+2028 ...): a
#: description is one line, so a file name cannot reshape the prompt it is shown in.
_BLANKS = Lazy(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]+")
#: A URL's scheme, credentials, host and path (its query and fragment are left out: they
#: hold tokens more often than meaning).
_URL = Lazy(r"([a-zA-Z][a-zA-Z0-9+.-]*://)(?:[^/@\s]*@)?([^/?#\s]*)([^?#\s]*)")
_ANY_URL = Lazy(r"\b(?:https?|ftp)://[^\s\"'<>)\]]+")


def clean(text: str) -> str:
    """``text`` on one line, without control characters, at most :data:`MAX_CHARS` long."""
    text = _BLANKS.sub(" ", text).strip()
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rstrip() + "…"


def kept(items: list[str] | None) -> list[str] | None:
    """The descriptions a turn keeps: cleaned, each once, in order, at most
    :data:`MAX_ITEMS` and a last ``N more not listed``. None stays None: the source
    does not say what its turns read."""
    if items is None:
        return None
    # hippo's own MCP server (`hippo mcp install` names it hippo) serves the team's notes
    # and sessions: reading them is reading the project's memory, not the outside world.
    found = list(
        dict.fromkeys(
            text
            for text in map(clean, items)
            if text and text != HIPPO_MCP.strip() and not text.startswith(HIPPO_MCP)
        )
    )
    if len(found) <= MAX_ITEMS:
        return found
    return [*found[:MAX_ITEMS], f"{len(found) - MAX_ITEMS} more not listed"]


def link(url: str) -> str:
    """``url`` as a description shows it: scheme, host and path, without credentials,
    query or fragment."""
    found = _URL.match(url.strip())
    return "".join(found.groups()) if found else url.strip()


def links(text: str) -> list[str]:
    """The URLs a piece of text names (a fetch tool's prompt), as :func:`link` shows them."""
    if "://" not in text:
        return []
    return [link(m.group()) for m in _ANY_URL.finditer(text)]


def web(tool: str, target: str = "") -> str:
    """A page fetched or a search made: ``web: WebFetch https://...``,
    ``web: WebSearch "query"``."""
    return f"web: {tool} {target}".strip()


def searched(tool: str, query: str) -> str:
    """A web search: ``web: <tool> "<query>"``."""
    return web(tool, f'"{clean(query)}"' if query.strip() else "")


def fetched(tool: str, url: str) -> str:
    """A page fetched: ``web: <tool> <url>``."""
    return web(tool, link(url) if url else "")


def mcp(server: str, tool: str = "") -> str:
    """An MCP server's tool called: ``MCP: <server> <tool>``."""
    return f"MCP: {server} {tool}".strip()


def mcp_name(name: str) -> str | None:
    """``mcp__<server>__<tool>`` (Claude Code's, Codex's and many agents' way of naming
    an MCP tool) described, or None for any other name."""
    if not name.startswith("mcp__"):
        return None
    server, _, tool = name[len("mcp__") :].partition("__")
    return mcp(server, tool) if server else None


def subagent(tool: str, what: str) -> str:
    """What a sub-agent read, as the parent's turn tells it: ``sub-agent (<tool>): <what>``."""
    return f"sub-agent ({tool}): {what}"


def outside_file(path: str) -> str:
    """A file read outside the project, under the home folder shown as ``~``."""
    home = os.path.expanduser("~").rstrip("/")
    if home and path.startswith(home + "/"):
        path = "~" + path[len(home) :]
    return f"file outside the project: {path}"
