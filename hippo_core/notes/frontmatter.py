"""Frontmatter: where the block is, and the five keys hippo reads from it.

hippo reads ``type``, ``status``, ``updated``, ``review_after`` and ``sources`` and never
writes frontmatter; every other key is someone else's and is left alone.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from hippo_core.notes.text import Split

MAX_FRONTMATTER_BYTES = 64 * 1024
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Meta:
    """The known keys, each None when absent or of the wrong shape."""

    type: str | None = None
    status: str | None = None
    updated: dt.date | None = None
    review_after: dt.date | None = None
    sources: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Problem:
    """A frontmatter problem: ``invalid frontmatter`` (error) or ``bad frontmatter``."""

    code: str
    detail: str
    line: int


def read_meta(split: Split) -> tuple[Meta, list[Problem]]:
    """Parse the block and take the known keys; a key of the wrong shape is left out."""
    if split.unclosed:
        return Meta(), [
            Problem("invalid frontmatter", "the block opened on line 1 never closes", 1)
        ]
    block = split.block
    if block is None:
        return Meta(), []
    if len(block.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        return Meta(), [Problem("invalid frontmatter", "the block is over 64 KiB", 1)]
    try:
        data = _load_yaml(block)
    except Exception as exc:  # any YAML error: the message is all we need
        mark = getattr(exc, "problem_mark", None)
        where = 2 + mark.line if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return Meta(), [Problem("invalid frontmatter", f"not valid YAML: {problem}", where)]
    if data is None:
        return Meta(), []
    if not isinstance(data, dict):
        kind = type(data).__name__
        return Meta(), [Problem("bad frontmatter", f"the block is a {kind}, not a mapping", 1)]
    problems: list[Problem] = []
    meta = Meta(
        type=_text(data.get("type")),
        status=_text(data.get("status")),
        updated=_date(data, "updated", problems),
        review_after=_date(data, "review_after", problems),
        sources=_sources(data, problems),
    )
    return meta, problems


def _load_yaml(block: str) -> Any:
    import yaml

    return yaml.load(block, Loader=_loader())


_LOADER: Any = None


def _loader() -> Any:
    """YAML's safe loader without its timestamp rule: a date stays the text it was written
    as, so that ``2026-02-30`` is a bad value (``_date`` says so), not a YAML error."""
    global _LOADER
    if _LOADER is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        timestamp = "tag:yaml.org,2002:timestamp"
        resolvers = {
            first: [(tag, pattern) for tag, pattern in rules if tag != timestamp]
            for first, rules in base.yaml_implicit_resolvers.items()
        }
        _LOADER = type("DatelessLoader", (base,), {"yaml_implicit_resolvers": resolvers})
    return _LOADER


def _text(value: Any) -> str | None:
    # type and status are free text: any scalar is taken as written, nothing is checked.
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)


def _date(data: dict[Any, Any], key: str, problems: list[Problem]) -> dt.date | None:
    if key not in data:
        return None
    value = data[key]
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str) and _DATE.fullmatch(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    problems.append(Problem("bad frontmatter", f"{key}: {value!r} is not a YYYY-MM-DD date", 1))
    return None


def _sources(data: dict[Any, Any], problems: list[Problem]) -> tuple[str, ...] | None:
    if "sources" not in data:
        return None
    value = data["sources"]
    if isinstance(value, list) and all(isinstance(item, str) and item for item in value):
        return tuple(value)
    problems.append(Problem("bad frontmatter", f"sources: {value!r} is not a list of paths", 1))
    return None
