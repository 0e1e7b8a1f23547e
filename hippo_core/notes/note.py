"""A note: what hippo reads from one Markdown file below ``notes_dir``."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from hippo_core.notes.frontmatter import Meta, Problem, read_meta
from hippo_core.notes.links import find_links
from hippo_core.notes.text import CODE_FENCE, decode_note, split_frontmatter, words

_HEADING = re.compile(r"(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


@dataclass(frozen=True)
class Note:
    """A parsed note: ``path`` (relative to ``notes_dir``, with ``/`` separators), ``title``,
    ``headings``, ``first_line``, ``links`` and ``meta`` (its frontmatter)."""

    path: str
    title: str
    headings: tuple[str, ...] = ()
    first_line: str = ""
    links: tuple[tuple[str, int], ...] = ()
    """Each link's target and the line it is on."""
    meta: Meta = field(default_factory=Meta)
    problems: tuple[Problem, ...] = ()
    has_frontmatter: bool = False

    @property
    def vocabulary(self) -> frozenset[str]:
        """The words of its title and headings: what a task's words are matched against."""
        return frozenset(w for text in (self.title, *self.headings) for w in words(text))

    def to_json(self) -> dict[str, Any]:
        m = self.meta
        return {
            "path": self.path,
            "title": self.title,
            "headings": list(self.headings),
            "first_line": self.first_line,
            "links": [list(link) for link in self.links],
            "meta": [
                m.type,
                m.status,
                m.updated and m.updated.isoformat(),
                m.review_after and m.review_after.isoformat(),
                None if m.sources is None else list(m.sources),
            ],
            "problems": [[p.code, p.detail, p.line] for p in self.problems],
            "has_frontmatter": self.has_frontmatter,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Note:
        kind, status, updated, review_after, sources = data["meta"]
        return cls(
            path=data["path"],
            title=data["title"],
            headings=tuple(data["headings"]),
            first_line=data["first_line"],
            links=tuple((str(t), int(n)) for t, n in data["links"]),
            meta=Meta(
                kind,
                status,
                updated and dt.date.fromisoformat(updated),
                review_after and dt.date.fromisoformat(review_after),
                None if sources is None else tuple(sources),
            ),
            problems=tuple(Problem(c, d, n) for c, d, n in data["problems"]),
            has_frontmatter=data["has_frontmatter"],
        )


def unreadable_note(path: str, why: str) -> Note:
    """A note whose file cannot be read as a note: its stem as title, and the problem."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return Note(path, stem, problems=(Problem("unreadable note", why, 1),))


def parse_note(path: str, raw: bytes) -> Note:
    """Read a note's frontmatter, title, headings, first body line and links."""
    text, why = decode_note(raw)
    if text is None:
        return unreadable_note(path, why)
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    split = split_frontmatter(text)
    meta, problems = read_meta(split)
    title: str | None = None
    headings: list[str] = []
    first_line = ""
    links: list[tuple[str, int]] = []
    in_fence = False
    body = text[split.body_start :].splitlines()
    for number, line in enumerate(body, start=split.body_line):
        if CODE_FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        links.extend((target, number) for target in find_links(line))
        heading = _HEADING.fullmatch(line)
        if heading:
            headings.append(heading.group(2))
            if title is None and line.startswith("# "):
                title = heading.group(2)
                first_line = ""  # the first body line comes after the title
            continue
        if not first_line and line.strip():
            first_line = line.strip()
    return Note(
        path=path,
        title=title or stem,
        headings=tuple(headings),
        first_line=first_line,
        links=tuple(links),
        meta=meta,
        problems=tuple(problems),
        has_frontmatter=split.block is not None or split.unclosed,
    )
