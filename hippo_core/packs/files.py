"""The rules every file of a pack is read under: inside the pack, no symbolic links, at most
64 KiB, UTF-8; and :class:`PackError`, the one-line error for a pack hippo refuses.

Pack files are data: hippo reads them and never follows a symbolic link in a pack.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Collection, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

MAX_FILE_BYTES = 65536
"""The most bytes a prompt, a persona or a file they include may have."""
NO_LINKS = "is a symbolic link; hippo does not follow links in packs"
# A link swapped in after the checks is refused by the open; a FIFO cannot block it.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class PackError(HippoError):
    """A pack hippo refuses: one line naming the file (and line), then the problem."""

    def __init__(self, path: Path, problem: str, line: int | None = None) -> None:
        self.path = path
        self.problem = " ".join(problem.split())  # one line, whatever a parser said
        self.line = line
        super().__init__(self._text(os.fspath(path)))

    def _text(self, shown: str) -> str:
        where = f"{shown}:{self.line}" if self.line else shown
        return f"{where}: {self.problem}"

    def shown_in(self, workspace: Workspace) -> PackError:
        """The same error naming its file relative to ``workspace`` when inside it."""
        error = PackError(self.path, self.problem, self.line)
        error.args = (self._text(workspace.relative(self.path)),)
        return error


def unknown_key(key: str, keys: Collection[str]) -> str:
    """``unknown key 'promt' - did you mean 'prompt'?`` (or the list of keys)."""
    close = difflib.get_close_matches(key, list(keys), n=1, cutoff=0.6)
    hint = f" - did you mean '{close[0]}'?" if close else f"; the keys are: {', '.join(keys)}"
    return f"unknown key '{key}'{hint}"


def pack_path(rel: str) -> str:
    """``rel`` with ``.`` and inner ``..`` resolved; ValueError when it leaves the pack."""
    if "\\" in rel:
        raise ValueError("contains a backslash; separate folders with /")
    path = PurePosixPath(rel)
    if path.is_absolute():
        raise ValueError("is an absolute path; name a file relative to the pack")
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                raise ValueError("leaves the pack")
            parts.pop()
        elif part != ".":
            parts.append(part)
    if not parts:
        raise ValueError("must name a file of the pack")
    return "/".join(parts)


def read_pack_file(
    root: Path, rel: str, *, what: str, referrer: Path, line: int | None = None
) -> tuple[Path, str]:
    """The path and text of ``rel`` in the pack at ``root``, read without following links.

    Raises :class:`PackError` naming ``referrer`` (the file that names ``rel``) when the
    path leaves the pack, crosses a symbolic link, is missing, is not a regular file, has
    more than :data:`MAX_FILE_BYTES` bytes or is not UTF-8.
    """
    try:
        clean = pack_path(rel)
    except ValueError as exc:
        raise PackError(referrer, f"{what} '{rel}' {exc}", line) from None
    path = root
    for part in clean.split("/"):
        path = path / part
        shown = path.relative_to(root).as_posix()
        if path.is_symlink():
            raise PackError(referrer, f"{shown} {NO_LINKS}", line)
        if not path.exists():
            raise PackError(referrer, f"{what} {clean} does not exist", line)
    if not path.is_file():
        raise PackError(referrer, f"{what} {clean} is not a regular file", line)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise PackError(referrer, f"{clean} cannot be read: {exc.strerror}", line) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise PackError(referrer, f"{what} {clean} is not a regular file", line)
        raw = handle.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        size = max(info.st_size, len(raw))
        problem = f"{clean} is {size} bytes; prompts and personas may have at most {MAX_FILE_BYTES}"
        raise PackError(referrer, problem, line)
    try:
        return path, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PackError(
            referrer, f"{clean} is not UTF-8 (byte {exc.start}); save it as UTF-8", line
        ) from None


def locate(roots: Sequence[Path], rel: str) -> Path:
    """The first of ``roots`` (themes first, the pack last) that has ``rel``."""
    try:
        clean = pack_path(rel)
    except ValueError:
        return roots[-1]  # read_pack_file names the problem
    for root in roots[:-1]:
        if os.path.lexists(root / clean):
            return root
    return roots[-1]


def read_overlaid(
    roots: Sequence[Path], rel: str, *, what: str, referrer: Path, line: int | None = None
) -> tuple[Path, str]:
    """:func:`read_pack_file` of ``rel`` from the first of ``roots`` that has it."""
    return read_pack_file(locate(roots, rel), rel, what=what, referrer=referrer, line=line)
