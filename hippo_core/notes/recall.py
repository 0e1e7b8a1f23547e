"""Notes as an agent asks for them mid-session: the best for a query with their text, and
one note by its path, each within a byte limit.

Recall ranks by BM25 over each note's title, headings, body and file name (the terms index
that verify's turn search and ``hippo eval context`` use), so a note is found by what it
says, not only by its headings.
"""

from __future__ import annotations

import os
from typing import Any

from hippo_core.base.errors import HippoError
from hippo_core.notes.terms import terms
from hippo_core.notes.text import decode_note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace


def recall(workspace: Workspace, query: str, *, limit: int, max_bytes: int) -> dict[str, Any]:
    """The ``limit`` notes BM25 ranks best for ``query``, best first, each with its text while
    the texts fit in ``max_bytes``: whole, except the first, which is cut rather than left
    out; a note left out says so and keeps its place (read it with ``read_note``)."""
    index = workspace.terms_index
    paths = index.bm25_paths(terms(query), limit)
    titles = dict(zip(paths, (title for title, _ in index.shown(paths)), strict=True))
    left = max_bytes
    found = []
    for path in paths:
        raw = _read(workspace, os.path.join(workspace.notes_dir, path))
        row: dict[str, Any] = {
            "path": workspace.relative(os.path.join(workspace.notes_dir, path)),
            "title": titles[path],
            "bytes": len(raw),
        }
        text = _text(workspace, path, raw)
        if len(raw) <= left:
            row.update(text=text, truncated=False)
            left -= len(raw)
        elif left == max_bytes:
            row.update(text=cut(text, left), truncated=True)
            left = 0
        else:
            row.update(text=None, truncated=False, left_out=f"over max_bytes ({left} left)")
        found.append(row)
    return {"query": query, "notes": found}


def read_note(workspace: Workspace, given: str, *, max_bytes: int) -> str:
    """The text of the note at ``given`` (from the notes folder or from the workspace), cut
    at ``max_bytes`` with a last line saying so."""
    path = note_path(workspace, given)
    raw = _read(workspace, path)
    text = _text(workspace, path, raw)
    if len(raw) <= max_bytes:
        return text
    return cut(text, max_bytes) + f"\n[cut at {max_bytes} of {len(raw)} bytes]\n"


def note_path(workspace: Workspace, given: str) -> str:
    """The file of the note ``given`` names: a ``.md`` file below ``notes_dir`` that exists,
    by its path from ``notes_dir`` (``Deploy.md``) or from the workspace (``notes/...``)."""
    notes = os.path.realpath(workspace.notes_dir)
    shown = workspace.relative(workspace.notes_dir)
    if "\0" not in given:
        found = [os.path.realpath(os.path.join(base, given)) for base in (notes, workspace.folder)]
        inside = [p for p in found if os.path.commonpath([notes, p]) == notes and p.endswith(".md")]
        for path in inside:
            if os.path.isfile(path):
                return path
        if inside:
            raise HippoError(f"no note {given!r}: there is no such file below {shown}/")
    raise HippoError(
        f"{given!r} is not a note of this workspace; give the path of a .md file below "
        f"{shown}/, such as Deploy.md or {shown}/Deploy.md"
    )


def cut(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` of UTF-8, at the last line end that fits when
    there is one, never inside a character."""
    head = text.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")
    line_end = head.rfind("\n")
    return head[: line_end + 1] if line_end > 0 else head


def _read(workspace: Workspace, path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        shown = workspace.relative(path)
        raise HippoError(f"note {shown} cannot be read: {exc.strerror}") from None


def _text(workspace: Workspace, path: str, raw: bytes) -> str:
    text, why = decode_note(raw)
    if text is None:
        shown = workspace.relative(os.path.join(workspace.notes_dir, path))
        raise HippoError(f"note {shown} is {why}")
    return text
