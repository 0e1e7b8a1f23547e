"""An eval case of a pack: ``eval/<case>/``, its ``case.toml`` and what a good run changes.

The layout, shared by everything that reads or writes cases (docs/eval.md)::

    eval/<case>/case.toml
    eval/<case>/notes/**.md            the workspace's notes
    eval/<case>/transcripts/<tool>/... each read like that agent's own home folder
    eval/<case>/recorded.json          written by --record, read by --replay

Every problem with a case is one line naming its file; all of a case's are reported at once.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hippo_core.base.errors import HippoError

WORKSPACE = "{{workspace}}"
"""In a transcript file: the absolute path of the case's workspace (JSON-string-escaped)."""


class CaseError(HippoError):
    """Cases hippo cannot run: one line per problem, each naming its file."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class ExpectModel(BaseModel):
    """One ``[[expect]]`` table: a change a good run makes."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    note: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    contains: list[str] = Field(default_factory=list)

    @field_validator("note")
    @classmethod
    def _inside_notes(cls, value: str) -> str:
        path = PurePosixPath(value)
        if "\\" in value or path.is_absolute() or ".." in path.parts:
            raise ValueError("must be a path relative to notes/, with / between folders")
        return path.as_posix()


class CaseModel(BaseModel):
    """``case.toml`` as written."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    description: str
    passes: list[str] | None = Field(None, min_length=1)
    expect: list[ExpectModel] = Field(default_factory=list)


@dataclass(frozen=True)
class Expect:
    note: str
    kind: str
    contains: tuple[str, ...]

    def matches(self, note: str, kind: str, new: str) -> bool:
        """Same note, same kind, and ``new`` holds every string of ``contains``."""
        return (
            PurePosixPath(note).as_posix() == self.note
            and kind == self.kind
            and all(part in new for part in self.contains)
        )


@dataclass(frozen=True)
class Case:
    """One case, checked: its folder, what it says and which passes it runs."""

    name: str
    folder: Path
    description: str
    passes: tuple[str, ...] | None
    """Names of the pack's passes to run; None runs all of them."""
    expect: tuple[Expect, ...]

    @property
    def label(self) -> str:
        """``eval/<case>``: how messages name the case."""
        return f"eval/{self.name}"

    @property
    def notes(self) -> Path:
        return self.folder / "notes"

    @property
    def transcripts(self) -> Path:
        return self.folder / "transcripts"

    @property
    def recorded(self) -> Path:
        return self.folder / "recorded.json"


def case_names(pack_root: Path) -> list[str]:
    """The folders of ``eval/``, sorted (hidden ones skipped)."""
    folder = pack_root / "eval"
    if not folder.is_dir():
        return []
    return sorted(e.name for e in folder.iterdir() if e.is_dir() and not e.name.startswith("."))


def load_case(
    pack_root: Path, name: str, *, kinds: Collection[str], sources: Collection[str]
) -> Case:
    """The case ``eval/<name>`` of the pack at ``pack_root``; raises :class:`CaseError`."""
    folder = pack_root / "eval" / name
    file = folder / "case.toml"
    shown = shown_path(file)
    problems: list[str] = []
    model = _read(file, shown, problems)
    if not (folder / "notes").is_dir():
        problems.append(
            f"{shown_path(folder / 'notes')}: missing; a case needs a notes/ folder "
            "holding the workspace's notes (notes/**.md)"
        )
    problems += _transcript_problems(folder / "transcripts", sources)
    if model is not None:
        available = sorted(p.stem for p in (pack_root / "passes").glob("*.toml"))
        for pass_name in model.passes or []:
            if pass_name not in available:
                problems.append(
                    f"{shown}: passes: '{pass_name}' is not a pass of this pack; "
                    f"its passes are: {', '.join(available) or 'none'}"
                )
        for number, expect in enumerate(model.expect, 1):
            if expect.kind not in kinds:
                problems.append(
                    f"{shown}: expect {number}: kind '{expect.kind}' is not a kind here; "
                    f"the kinds are: {', '.join(sorted(kinds))}"
                )
    if problems or model is None:
        raise CaseError(problems)
    return Case(
        name,
        folder,
        model.description,
        tuple(model.passes) if model.passes is not None else None,
        tuple(Expect(e.note, e.kind, tuple(e.contains)) for e in model.expect),
    )


def _read(file: Path, shown: str, problems: list[str]) -> CaseModel | None:
    if not file.is_file():
        problems.append(f'{shown}: missing; write it with at least description = "..."')
        return None
    try:
        values = tomllib.loads(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        problems.append(f"{shown}: not UTF-8 (byte {exc.start}); save it as UTF-8")
        return None
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"{shown}: not valid TOML: {' '.join(str(exc).split())}")
        return None
    try:
        return CaseModel.model_validate(values)
    except ValidationError as exc:
        problems.extend(f"{shown}: {_problem(error)}" for error in exc.errors())
        return None


def _problem(error: Any) -> str:
    """One pydantic error as a line: where in the file, and what is wrong."""
    loc = error["loc"]
    where = _where(loc)
    if error["type"] == "extra_forbidden":
        keys = list(CaseModel.model_fields if len(loc) == 1 else ExpectModel.model_fields)
        close = difflib.get_close_matches(str(loc[-1]), keys, n=1, cutoff=0.6)
        hint = f" - did you mean '{close[0]}'?" if close else f"; the keys are: {', '.join(keys)}"
        return f"unknown key '{where}'{hint}"
    if error["type"] == "missing":
        return f"{where}: missing"
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message[:1].lower() + message[1:]}"


def _where(loc: tuple[Any, ...]) -> str:
    # ("expect", 0, "kind") -> "expect 1: kind", as a person counts the [[expect]] tables.
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts[-1] = f"{parts[-1]} {part + 1}:" if parts else str(part + 1)
        else:
            parts.append(str(part))
    return " ".join(parts).rstrip(":")


def _transcript_problems(folder: Path, sources: Collection[str]) -> list[str]:
    if not folder.exists():
        return []
    if not folder.is_dir():
        return [f"{shown_path(folder)}: not a folder; it holds one folder per agent"]
    return [
        f"{shown_path(entry)}: '{entry.name}' is no transcript source here; "
        f"name the folder for one of: {', '.join(sorted(sources))}"
        for entry in sorted(folder.iterdir())
        if not entry.name.startswith(".") and (not entry.is_dir() or entry.name not in sources)
    ]


def shown_path(path: Path) -> str:
    """``path`` as a person typed it: relative to the current folder when inside it."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix()
    except ValueError:
        return os.fspath(path)
