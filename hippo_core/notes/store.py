"""Every note of a workspace, by path, with link resolution: read from the notes index
(:mod:`hippo_core.notes.index`), which keeps what was parsed and reads only what changed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from hippo_core.notes.links import LinkResolver
from hippo_core.notes.note import Note


@dataclass
class NoteSet:
    """The notes of one ``notes_dir``, by path, with link resolution."""

    root: Path
    by_path: dict[str, Note]

    def __iter__(self) -> Iterator[Note]:
        return iter(self.by_path.values())

    def __len__(self) -> int:
        return len(self.by_path)

    def __contains__(self, path: object) -> bool:
        return path in self.by_path

    @cached_property
    def resolver(self) -> LinkResolver:
        return LinkResolver(self.by_path)

    def resolve(self, target: str) -> str | None:
        """The path of the note a link target names, or None when it dangles."""
        return self.resolver.resolve(target)
