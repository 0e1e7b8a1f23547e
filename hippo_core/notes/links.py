"""``[[links]]``: finding them in a note and resolving them to notes.

``[[X]]``, ``[[X|alias]]`` and ``[[X#heading]]`` all name X. X resolves to ``<notes_dir>/X.md``
when that note exists; otherwise, when X has no ``/``, to the one note anywhere whose file
name is ``X.md``. Two such notes, or none, and the link dangles.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from hippo_core.base.patterns import Lazy

LINK = Lazy(r"\[\[([^\[\]\n]+?)\]\]")  # compiled when a note is read


def link_target(inner: str) -> str:
    """The X of ``[[X|alias]]`` or ``[[X#heading]]``, stripped of spaces."""
    return inner.split("|", 1)[0].split("#", 1)[0].strip()


def find_links(line: str) -> list[str]:
    """The targets of the links on one line, in order; links with an empty target skipped."""
    return [t for t in (link_target(m) for m in LINK.findall(line)) if t]


def resolve(
    target: str, has: Callable[[str], bool], named: Callable[[str], list[str]]
) -> str | None:
    """The note ``target`` names, or None when the link dangles.

    ``has(path)`` says whether a note is at ``path``; ``named(file_name)`` lists the notes
    with that file name (two are enough to know it is not one).
    """
    if not _stays_inside(target):
        return None
    exact = f"{target}.md"
    if has(exact):
        return exact
    if "/" in target:
        return None
    found = named(exact)
    return found[0] if len(found) == 1 else None


class LinkResolver:
    """Resolves link targets against a fixed set of note paths (relative, POSIX)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = set(paths)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in self._paths:
            self._by_name[path.rsplit("/", 1)[-1]].append(path)

    def resolve(self, target: str) -> str | None:
        """The note ``target`` names, or None when the link dangles."""
        return resolve(target, self._paths.__contains__, lambda name: self._by_name.get(name, []))


def _stays_inside(target: str) -> bool:
    # [[../../x]] or [[/etc/x]] must never reach outside notes_dir.
    if "\\" in target or target.startswith("/"):
        return False
    return not any(part in ("..", ".") for part in target.split("/"))
