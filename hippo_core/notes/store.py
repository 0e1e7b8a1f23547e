"""Every note of a workspace: discovery, parsing and a cache keyed by each file's stat.

A workspace of thousands of notes is read on every ``hippo context``, which sits on the
agent's critical path, so what was parsed is cached in ``.hippo/cache/notes.json`` and a note
is parsed again only when its size, mtime or inode changed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from hippo_core.cache import read_cache, write_cache
from hippo_core.notes.links import LinkResolver
from hippo_core.notes.note import Note, parse_note

# A file modified this recently may change again within the same mtime tick, so its entry
# is not trusted to a later run (git's "racy" index entries, same remedy).
_RACY_SECONDS = 2.0


def discover(notes_dir: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Each ``*.md`` file below ``notes_dir`` and its stat, hidden names and links skipped."""
    stack = [("", notes_dir)]
    while stack:
        prefix, folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((f"{prefix}{entry.name}/", Path(entry.path)))
            elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                yield f"{prefix}{entry.name}", entry.stat(follow_symlinks=False)


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


def load_notes(notes_dir: Path, *, cache_path: Path) -> NoteSet:
    """Parse every note below ``notes_dir``, reusing cached results for unchanged files."""
    key = os.fspath(notes_dir.resolve())
    cached = read_cache(cache_path, key)
    old: dict[str, object] = cached if isinstance(cached, dict) else {}
    fresh: dict[str, object] = {}
    notes: dict[str, Note] = {}
    changed = False
    racy_after = time.time() - _RACY_SECONDS
    for path, stat in sorted(discover(notes_dir)):
        stamp = [stat.st_size, stat.st_mtime_ns, stat.st_ino]
        entry = old.get(path)
        note = _cached_note(entry, stamp)
        if note is None:
            note = _parse_file(notes_dir, path)
            entry = [stamp, note.to_json()]
            changed = True
        notes[path] = note
        if stat.st_mtime < racy_after:
            fresh[path] = entry
    if changed or fresh.keys() != old.keys():
        write_cache(cache_path, key, fresh)
    return NoteSet(notes_dir, notes)


def _cached_note(entry: object, stamp: list[int]) -> Note | None:
    if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == stamp):
        return None
    try:
        return Note.from_json(entry[1])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _parse_file(notes_dir: Path, path: str) -> Note:
    try:
        raw = (notes_dir / path).read_bytes()
    except OSError as exc:
        from hippo_core.notes.frontmatter import Problem

        reason = exc.strerror or type(exc).__name__
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        return Note(path, stem, problems=(Problem("unreadable note", reason, 1),))
    return parse_note(path, raw)
