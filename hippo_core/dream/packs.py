"""Loading the packs whose passes a dream runs, checking every file before anything runs.

Which packs are here, and the themes over them, is :mod:`hippo_core.packs.survey`; this
module reads each pack's passes, prompts and personas (through the themes that are on) and
refuses anything a dream could trip on. Pack files are data: hippo never runs them.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hippo_core.dream.model import Pass
from hippo_core.packs.files import (
    MAX_FILE_BYTES,
    NO_LINKS,
    PackError,
    read_overlaid,
    read_pack_file,
    unknown_key,
)
from hippo_core.packs.manifest import MANIFEST, PROTOCOL, Manifest

if TYPE_CHECKING:
    from hippo_core.packs.survey import Found
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace

__all__ = [
    "MAX_FILE_BYTES",
    "PROTOCOL",
    "Pack",
    "PackError",
    "check_pack",
    "read_pack_file",
    "read_persona",
]


@dataclass(frozen=True)
class Pack:
    """One pack that runs: its folder, where it came from, and its validated passes."""

    name: str
    root: Path
    source: str
    """``workspace``, or ``<distribution> <version>`` for a distribution's pack."""
    passes: tuple[Pass, ...]
    manifest: Manifest | None = None
    themes: tuple[str, ...] = ()
    """The themes on over this pack, in the order they apply."""


class PassFile(BaseModel):
    """``passes/<name>.toml`` as written; paths and names are checked after this."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    protocol: str
    prompt: str
    reads: list[str]
    reviewer: str
    per_note: bool
    input_budget_bytes: int = Field(200_000, gt=0)
    review: str | list[str] = "model"
    system: str = ""


PASS_KEYS = tuple(PassFile.model_fields)
EXPECTED = {
    "protocol": f'"{PROTOCOL}"',
    "prompt": "a string",
    "reads": "a list of strings",
    "reviewer": "a string",
    "per_note": "true or false",
    "input_budget_bytes": "a whole number above 0",
    "review": 'a reviewer\'s name, or a list of them ("secret-scan", "model")',
    "system": "a string",
}


def check_pack(
    root: Path,
    plugins: Plugins,
    *,
    beside: dict[str, Path] | None = None,
    present: frozenset[str] = frozenset(),
) -> Pack:
    """Check the pack (or theme) in the folder ``root`` as the loader would, on its own.

    It needs a ``pack.toml``. A theme is checked against the pack it overlays when that is
    in ``beside`` (the packs of the workspace at hand, by name) or a plugin ships it
    (hippo's own ``core``, say). ``present``: distributions (canonical names) its
    ``requires`` may name though they are not installed (the one being checked). Raises
    :class:`PackError`.
    """
    from hippo_core.packs.survey import Found, check_requirements, theme_overrides

    manifest = read_manifest_required(root)
    check_requirements(manifest, root / MANIFEST, present)
    found = Found(manifest.name, root, "folder", manifest)
    if manifest.is_theme:
        shipped = plugins.packs().get(manifest.overlays)
        target = (beside or {}).get(manifest.overlays) or (shipped and shipped.directory)
        if not target:
            theme_overrides(found, root)  # the structure, at least: no passes, no links
            return Pack(found.name, root, found.source, (), manifest)
        theme_overrides(found, target)
        base = Found(manifest.overlays, target, "folder", None)
        readers, reviewers = sorted(plugins.readers()), sorted(plugins.reviewers())
        load_found(base, readers, reviewers, (root,), (found.name,))
        return Pack(found.name, root, found.source, (), manifest)
    readers, reviewers = sorted(plugins.readers()), sorted(plugins.reviewers())
    pack = load_found(found, readers, reviewers, (), ())
    _refuse_twins([pack], None)
    return pack


def read_manifest_required(root: Path) -> Manifest:
    """``pack.toml`` of the pack at ``root``, which must have one."""
    from hippo_core.packs.manifest import read_manifest

    if not root.is_dir():
        raise PackError(root, "is not a folder; give the folder that holds pack.toml")
    manifest = read_manifest(root)
    if manifest is None:
        raise PackError(root, f"has no {MANIFEST}; a pack needs one (hippo pack new writes it)")
    return manifest


def read_system(pass_: Pass) -> str | None:
    """The proposer's system prompt (the pass's instructions, apart from the material), or
    None for a pass that keeps its instructions in its prompt."""
    if not pass_.system:
        return None
    return read_overlaid(pass_.roots, pass_.system, what="system", referrer=pass_.file)[1]


def read_persona(pass_: Pass) -> str:
    """The text of the pass's reviewer persona (a theme's when one is on), checked again."""
    return read_overlaid(pass_.roots, pass_.reviewer, what="reviewer", referrer=pass_.file)[1]


def sorted_passes(packs: list[Pack]) -> list[Pass]:
    return sorted((p for pack in packs for p in pack.passes), key=lambda p: p.key)


def load_found(
    found: Found,
    readers: list[str],
    reviewers: list[str],
    overlays: tuple[Path, ...],
    themes: tuple[str, ...],
) -> Pack:
    """Read and check the passes of the pack ``found``, with the themes' folders over it."""
    root = found.root
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
            passes.append(_load_pass(found.name, root, entry, readers, reviewers, overlays))
    return Pack(found.name, root, found.source, tuple(passes), found.manifest, themes)


def _load_pass(
    pack: str,
    root: Path,
    file: Path,
    readers: list[str],
    reviewers: list[str],
    overlays: tuple[Path, ...],
) -> Pass:
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
    chain = _review_chain(fields.review, reviewers, file)
    roots = (*overlays, root)
    prompt = read_overlaid(roots, fields.prompt, what="prompt", referrer=file)[0]
    reviewer = read_overlaid(roots, fields.reviewer, what="reviewer", referrer=file)[0]
    system = _system(roots, fields.system, file) if fields.system else ""
    pass_ = Pass(
        pack=pack,
        name=file.stem,
        root=root,
        prompt=_relative(prompt, roots),
        reads=tuple(fields.reads),
        reviewer=_relative(reviewer, roots),
        per_note=fields.per_note,
        input_budget_bytes=fields.input_budget_bytes,
        review=", ".join(chain),
        overlays=overlays,
        system=system,
    )
    check_prompt(pass_, readers)
    return pass_


def _system(roots: tuple[Path, ...], name: str, file: Path) -> str:
    """The system prompt's path in the pack: a plain text the model gets as it is, so a
    placeholder in it (which would reach the model unfilled) is refused."""
    path, text = read_overlaid(roots, name, what="system", referrer=file)
    for number, line in enumerate(text.splitlines(), start=1):
        if "{{" in line or "{%" in line:
            problem = (
                "a system prompt is sent as it is and takes no placeholders or template tags; "
                "put the material in the pass's prompt"
            )
            raise PackError(path, problem, number)
    return _relative(path, roots)


def _review_chain(value: str | list[str], reviewers: list[str], file: Path) -> list[str]:
    """The pass's reviewers in order: one name, or a chain that must all confirm."""
    chain = [value] if isinstance(value, str) else value
    if not chain:
        raise PackError(file, "review: an empty list; name a reviewer, or several in order")
    for position, name in enumerate(chain):
        if "," in name:
            raise PackError(file, f"review: '{name}' holds a comma; give a list of names")
        if name not in reviewers:
            listing = _listing("reviewers", reviewers)
            raise PackError(file, f"review: '{name}' is not a reviewer here; {listing}")
        if name in chain[:position]:
            raise PackError(file, f"review: '{name}' is listed twice")
        if name == "queue" and position != len(chain) - 1:
            raise PackError(
                file,
                "review: 'queue' leaves the verdict to a person, so it can only end a chain; "
                "put it last",
            )
    return list(chain)


def _relative(path: Path, roots: tuple[Path, ...]) -> str:
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    raise AssertionError(f"{path} is in none of the pack's folders")


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
            raise PackError(file, unknown_key(key, PASS_KEYS))
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


def _refuse_twins(packs: list[Pack], workspace: Workspace | None) -> None:
    # --pass selects by file name, so a name may be used once over all packs.
    seen: dict[str, Pass] = {}
    for pass_ in sorted_passes(packs):
        first = seen.setdefault(pass_.name, pass_)
        if first is not pass_:
            other = workspace.relative(pass_.file) if workspace else str(pass_.file)
            problem = f"another pass is named '{pass_.name}': {other}; pass names must be unique"
            error = PackError(first.file, problem)
            raise error.shown_in(workspace) if workspace else error
