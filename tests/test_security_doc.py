"""docs/security.md says what the sleep service refuses, in a table: each row is sent here
to a real ``hippo sleep serve`` on 127.0.0.1, and must get the answer the row gives and
change nothing."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from tests.sleep_scene import Sleepy
from tests.test_sleep_service import kept, serving, sleepy, stop, with_work

__all__ = ["sleepy"]  # the fixture, used here

DOC = Path(__file__).resolve().parent.parent / "docs" / "security.md"
MARKER = "<!-- the service's refusals: tests/test_security_doc.py sends each row -->"


def rows() -> list[tuple[str, str, str, int]]:
    """The table after the marker: (method, path, what it is sent with, status)."""
    text = DOC.read_text(encoding="utf-8")
    assert MARKER in text, "docs/security.md lost its table of the service's refusals"
    found = []
    for line in text.split(MARKER, 1)[1].strip().splitlines()[2:]:
        if not line.startswith("|"):
            break
        request, sent, answer = (cell.strip() for cell in line.strip("|").split("|"))
        method, path = request.strip("`").split(" ", 1)
        found.append((method, path, sent, int(answer)))
    return found


def test_the_table_covers_each_check_of_the_service() -> None:
    answers = {status for *_, status in rows()}
    assert {421, 401, 403, 415, 400, 200} <= answers


def test_every_row_of_the_table_is_what_the_service_answers(sleepy: Sleepy) -> None:
    with_work(sleepy)
    served = serving(sleepy.root)
    try:
        before = kept(sleepy.root)
        for method, path, sent, status in rows():
            path = quote(path.replace("<bearer>", served.token), safe="/?=&")
            token, headers, body = _sent(sent, served.token)
            if method in ("POST", "PUT") and body is None and "Content-Type" in headers:
                body = "{}"
            got, answer_headers, data = served.raw(method, path, body, token=token, headers=headers)
            assert got == status, (method, path, sent, got, data[:300])
            if status >= 400 and "json" in answer_headers.get("Content-Type", ""):
                assert b'"error"' in data, data
        assert kept(sleepy.root) == before
    finally:
        assert "Traceback" not in stop(served)


def _sent(sent: str, bearer: str) -> tuple[str, dict[str, str], str | None]:
    """What the row's "sent with" cell means: the bearer (or none, or a header in its place),
    a header, or a body."""
    if sent == "the bearer":
        return bearer, {}, None
    if sent == "no bearer":
        return "", {}, None
    body = re.fullmatch(r"the body `(.*)`", sent)
    if body:
        return bearer, {}, body.group(1)
    header = re.fullmatch(r"`([A-Za-z-]+): (.*)`", sent)
    assert header, f"a row of docs/security.md's table this test cannot send: {sent}"
    name, value = header.group(1), header.group(2).replace("<bearer>", bearer)
    if name == "Authorization":
        return "", {name: value}, None
    return bearer, {name: value}, None
