"""A password written in a URL, which settings that are committed must not hold."""

from __future__ import annotations

#: Where a team index's password belongs instead of the committed settings.
PASSWORD_ADVICE = (
    "keep the password in ~/.pgpass or PGPASSWORD (or the whole URL in HIPPO_INDEX_URL) "
    "and write index_url without it"
)


def has_password(url: str) -> bool:
    """Whether ``url`` holds a password: after the user (``user:pw@``) or as a ``password``
    parameter (libpq takes both)."""
    from urllib.parse import parse_qs, urlsplit

    try:
        parts = urlsplit(url)
        return bool(parts.password) or any(parse_qs(parts.query).get("password", []))
    except ValueError:
        return False
