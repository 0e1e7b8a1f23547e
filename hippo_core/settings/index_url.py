"""What a team index's URL (``index_url``, ``HIPPO_INDEX_URL``) must be before it is used.

Checked where the URL comes in (``hippo config set``, the settings file, the variable), so
that a mistake is one line naming it, not a traceback from SQLAlchemy's URL parser at the
first ingest or search.
"""

from __future__ import annotations


def index_url_problem(value: str) -> str:
    """What is wrong with ``value`` as a team index's URL, or "" (empty is the local index).

    The scheme, and what SQLAlchemy's URL parser would otherwise fail on with a traceback
    when the URL is first used: a port that is not a number from 1 to 65535, no host."""
    from urllib.parse import urlsplit

    if not value:
        return ""
    if not value.startswith(("postgresql://", "postgresql+psycopg://")):
        return "must be a postgresql+psycopg:// URL, or empty for the local index only"
    try:
        parts = urlsplit(value)
    except ValueError as exc:  # an unclosed [ of an IPv6 address
        return f"is not a URL ({exc})"
    try:
        port = parts.port
    except ValueError:
        given = parts.netloc.rpartition("@")[2].rpartition("]")[2].rpartition(":")[2]
        return f"the port {given!r} is not a number from 1 to 65535"
    if port == 0:
        return "the port 0 is not a number from 1 to 65535"
    if not parts.hostname and "host=" not in parts.query:
        return "names no host (postgresql+psycopg://USER@HOST:PORT/DATABASE)"
    return ""
