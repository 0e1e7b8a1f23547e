"""Loading the packs whose passes a dream runs, checking every file before anything runs.

The packs are the folders under ``.hippo/packs/`` and the packs of installed distributions
(``hippo_register_packs`` from a plugin that is not hippo's own); a workspace folder shadows
a distribution's pack of the same name. hippo's core pack runs only through the copy that
``hippo init`` wrote, so that editing it takes effect.

Pack files are data: hippo reads them and never follows a symbolic link in a pack.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
import tomllib
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hippo_core.dream.model import Pass
from hippo_core.errors import HippoError, UsageError

if TYPE_CHECKING:
    from hippo_core.plugins import Plugins
    from hippo_core.workspace import Workspace

PROTOCOL = "HIPPO_V1"
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


@dataclass(frozen=True)
class Pack:
    """One pack that runs: its folder, where it came from, and its validated passes."""

    name: str
    root: Path
    source: str
    """``workspace``, or ``<distribution> <version>`` for a distribution's pack."""
    passes: tuple[Pass, ...]


class PassFile(BaseModel):
    """``passes/<name>.toml`` as written; paths and names are checked after this."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    protocol: str
    prompt: str
    reads: list[str]
    reviewer: str
    per_note: bool
    input_budget_bytes: int = Field(200_000, gt=0)
    review: str = "model"


PASS_KEYS = tuple(PassFile.model_fields)
EXPECTED = {
    "protocol": f'"{PROTOCOL}"',
    "prompt": "a string",
    "reads": "a list of strings",
    "reviewer": "a string",
    "per_note": "true or false",
    "input_budget_bytes": "a whole number above 0",
    "review": "a string",
}


def load_packs(workspace: Workspace, plugins: Plugins, *, only: str | None = None) -> list[Pack]:
    """Every pack that runs here, sorted by name, each checked entirely.

    ``only`` keeps the pass whose file name it is (and the pack holding it); raises
    :class:`UsageError` when no pass has that name, :class:`PackError` for a bad pack.
    """
    readers, reviewers = sorted(plugins.readers()), sorted(plugins.reviewers())
    try:
        packs = [
            _load_pack(name, root, source, readers, reviewers)
            for name, root, source in sorted(_pack_folders(workspace, plugins))
        ]
    except PackError as error:
        raise error.shown_in(workspace) from None
    _refuse_twins(workspace, packs)
    if only is None:
        return packs
    kept = [
        Pack(pack.name, pack.root, pack.source, tuple(p for p in pack.passes if p.name == only))
        for pack in packs
    ]
    if not any(pack.passes for pack in kept):
        known = ", ".join(p.key for p in _sorted_passes(packs)) or "none"
        raise UsageError(f"no pass named '{only}'; the passes here are: {known}")
    return [pack for pack in kept if pack.passes]


def load_passes(workspace: Workspace, plugins: Plugins, *, only: str | None = None) -> list[Pass]:
    """Every pass of every pack that runs here, in the order of ``<pack>/<name>``."""
    return _sorted_passes(load_packs(workspace, plugins, only=only))


def read_persona(pass_: Pass) -> str:
    """The text of the pass's reviewer persona, checked again as it is read."""
    return read_pack_file(pass_.root, pass_.reviewer, what="reviewer", referrer=pass_.file)[1]


def _sorted_passes(packs: list[Pack]) -> list[Pass]:
    return sorted((p for pack in packs for p in pack.passes), key=lambda p: p.key)


def _pack_folders(workspace: Workspace, plugins: Plugins) -> Iterator[tuple[str, Path, str]]:
    """``(name, folder, source)`` of each pack: the workspace's, then distributions'."""
    folder = workspace.packs_dir
    if folder.is_symlink():
        raise PackError(folder.parent, f"{folder.name} {NO_LINKS}")
    names: set[str] = set()
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                raise PackError(folder, f"{entry.name} {NO_LINKS}")
            if entry.is_dir():
                names.add(entry.name)
                yield entry.name, entry, "workspace"
    for name, source in plugins.packs().items():
        if source.plugin.builtin or name in names:
            continue
        origin = f"{source.plugin.distribution} {source.plugin.version}".strip()
        directory = source.directory
        if not name or name.startswith(".") or "/" in name or "\\" in name:
            raise PackError(
                directory, f"{origin} registers a pack named '{name}'; not a folder name"
            )
        if directory.is_symlink():
            raise PackError(directory, f"the pack folder of {origin} {NO_LINKS}")
        if not directory.is_dir():
            raise PackError(directory, f"the pack folder of {origin} does not exist")
        yield name, directory, origin


def _load_pack(
    name: str, root: Path, source: str, readers: list[str], reviewers: list[str]
) -> Pack:
    passes_dir = root / "passes"
    if passes_dir.is_symlink():
        raise PackError(root, f"passes {NO_LINKS}")
    if not passes_dir.is_dir():
        raise PackError(root, "a pack needs a passes/ folder holding its <name>.toml files")
    passes = []
    for entry in sorted(passes_dir.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            raise PackError(root, f"passes/{entry.name} {NO_LINKS}")
        if entry.suffix == ".toml":
            passes.append(_load_pass(name, root, entry, readers, reviewers))
    return Pack(name, root, source, tuple(passes))


def _load_pass(pack: str, root: Path, file: Path, readers: list[str], reviewers: list[str]) -> Pass:
    # render imports this module's file rules, so it is imported here rather than on top.
    from hippo_core.dream.render import check_prompt

    values = _parse(file)
    fields = _validate(values, file)
    for position, read in enumerate(fields.reads):
        if read in fields.reads[:position]:
            raise PackError(file, f"reads: '{read}' is listed twice")
        if read not in readers:
            raise PackError(
                file, f"reads: '{read}' is not a reader here; {_listing('readers', readers)}"
            )
    if fields.review not in reviewers:
        listing = _listing("reviewers", reviewers)
        raise PackError(file, f"review: '{fields.review}' is not a reviewer here; {listing}")
    prompt = read_pack_file(root, fields.prompt, what="prompt", referrer=file)[0]
    reviewer = read_pack_file(root, fields.reviewer, what="reviewer", referrer=file)[0]
    pass_ = Pass(
        pack=pack,
        name=file.stem,
        root=root,
        prompt=prompt.relative_to(root).as_posix(),
        reads=tuple(fields.reads),
        reviewer=reviewer.relative_to(root).as_posix(),
        per_note=fields.per_note,
        input_budget_bytes=fields.input_budget_bytes,
        review=fields.review,
    )
    check_prompt(pass_, readers)
    return pass_


def _listing(what: str, names: Collection[str]) -> str:
    return f"the {what} are: {', '.join(names)}" if names else f"no {what} are registered"


def _parse(file: Path) -> dict[str, Any]:
    if not file.is_file():
        raise PackError(file, "a pass must be a regular file")
    try:
        return tomllib.loads(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PackError(file, f"not UTF-8 (byte {exc.start}); save it as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise PackError(file, f"not valid TOML: {exc}") from None


def _validate(values: dict[str, Any], file: Path) -> PassFile:
    protocol = values.get("protocol", PROTOCOL)
    if protocol != PROTOCOL:
        # A file written for another protocol may have other keys: name the protocol first.
        raise PackError(file, f'protocol must be "{PROTOCOL}", found {_shown(protocol)}')
    for key in values:
        if key not in PASS_KEYS:
            close = difflib.get_close_matches(key, PASS_KEYS, n=1, cutoff=0.6)
            hint = (
                f" - did you mean '{close[0]}'?"
                if close
                else f"; the keys are: {', '.join(PASS_KEYS)}"
            )
            raise PackError(file, f"unknown key '{key}'{hint}")
    try:
        return PassFile.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0])
        if error["type"] == "missing":
            raise PackError(file, f"missing key '{key}'") from None
        found = _shown(values[key])
        raise PackError(file, f"'{key}' must be {EXPECTED[key]}, found {found}") from None


def _shown(value: Any) -> str:
    """A value from a pass file, written about as TOML would (for messages)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _refuse_twins(workspace: Workspace, packs: list[Pack]) -> None:
    # --pass selects by file name, so a name may be used once over all packs.
    seen: dict[str, Pass] = {}
    for pass_ in _sorted_passes(packs):
        first = seen.setdefault(pass_.name, pass_)
        if first is not pass_:
            other = workspace.relative(pass_.file)
            problem = f"another pass is named '{pass_.name}': {other}; pass names must be unique"
            raise PackError(first.file, problem).shown_in(workspace)


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
