"""The pack registry index format: its pydantic models, JSON schema and validation.

An index is one TOML file, or JSON with the same structure when its name ends in ``.json``::

    format = 1
    [[pack]]
    name = "decisions"
    summary = "One line."
    license = "MIT"
    homepage = "https://example.org"    # optional
    tags = ["decisions"]                # optional
    [[pack.versions]]
    version = "0.1.0"                   # PEP 440
    hippo = ">=0.1"                     # the hippo versions it works with
    passes = ["decisions"]              # the passes it provides (none for a theme)
    overlays = ""                       # themes: the pack whose files it overrides
    yanked = ""                         # non-empty: why it was withdrawn
    source = { distribution = "hippo-memory>=0.1" }
    # or: source = { archive = "https://host/x-0.1.0.tar.gz", sha256 = "<64 hex digits>" }
    # or: source = { distribution = "hippo-pack-x==0.1.0", sha256 = "<its wheel's digest>" }

:mod:`hippo_core.packs.index` holds an index as hippo uses it, and
:mod:`hippo_core.packs.registries` where the registries are and how they are read.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hippo_core.packs.archive import ARCHIVE_SUFFIXES, archive_kind, is_url, url_problem
from hippo_core.packs.files import unknown_key
from hippo_core.packs.manifest import NAME_RULE

PASS_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


# The index as written


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SourceModel(_Model):
    """Where a version comes from: a distribution, or an archive and its digest."""

    model_config = ConfigDict(title="Source")

    distribution: str = Field(
        "",
        description="A pip requirement for a distribution that ships the pack "
        '(hippo-memory for the packs inside hippo), e.g. "hippo-jira>=1.2".',
    )
    archive: str = Field(
        "",
        description="An https URL or a path (relative to the index when the index is a path) "
        "of a .tar.gz, .tgz or .zip holding the pack.",
    )
    sha256: str = Field(
        "",
        description="The archive's SHA-256 in hex, required with archive; or, with a "
        "distribution pinned to one version (==), its wheel's. Checked on install.",
    )


class VersionModel(_Model):
    """One version of a pack."""

    model_config = ConfigDict(title="Version")

    version: str = Field(description="The pack's version (PEP 440), as its pack.toml says.")
    hippo: str = Field(
        description='The hippo versions it works with, a PEP 440 specifier set (">=0.1"); '
        "empty for any."
    )
    passes: list[str] = Field(
        default_factory=list, description="The passes it provides (none for a theme)."
    )
    overlays: str = Field(
        "", description="Themes: the pack whose prompts and personas it overlays."
    )
    yanked: str = Field(
        "", description="Non-empty: why this version was withdrawn; installed only when named."
    )
    source: SourceModel


class PackModel(_Model):
    """One pack and its versions."""

    model_config = ConfigDict(title="Pack")

    name: str = Field(description="The pack's name, as in its pack.toml (its folder name).")
    summary: str = Field(description="One line saying what it does.")
    license: str = Field(description="An SPDX license expression, e.g. MIT.")
    homepage: str = Field("", description="Where to read about it.")
    tags: list[str] = Field(default_factory=list, description="Words hippo pack search matches.")
    versions: list[VersionModel] = Field(min_length=1)


class IndexModel(_Model):
    """A pack registry's index file."""

    model_config = ConfigDict(title="Index")

    format: Literal[1] = Field(description="The index format; 1.")
    pack: list[PackModel] = Field(default_factory=list)


_KEYS: dict[type[BaseModel], tuple[str, ...]] = {
    model: tuple(model.model_fields) for model in (IndexModel, PackModel, VersionModel, SourceModel)
}
_EXPECTED = {
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "literal_error": "1",
    "too_short": "a list of at least one version",
}


def schema() -> dict[str, Any]:
    """The JSON schema of an index file (``registry/schema.json``)."""
    return IndexModel.model_json_schema()


# Checking an index


def index_problems(raw: bytes, where: str, *, as_json: bool) -> tuple[IndexModel | None, list[str]]:
    """The index in ``raw`` and every problem with it, one line each naming ``where``."""
    prefix = f"registry {where}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [f"{prefix}: not UTF-8 (byte {exc.start})"]
    try:
        values = json.loads(text) if as_json else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if as_json else "TOML"
        return None, [f"{prefix}: not valid {kind}: {' '.join(str(exc).split())}"]
    if not isinstance(values, dict):
        return None, [f"{prefix}: must be a JSON object with format and pack"]
    try:
        model = IndexModel.model_validate(values)
    except ValidationError as exc:
        # A misspelt key is an unknown key and a missing one: name the unknown one first, as
        # its suggestion says what is missing.
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        return None, [f"{prefix}: {_problem(error, values)}" for error in errors]
    return model, [f"{prefix}: {problem}" for problem in _entry_problems(model, where)]


def _problem(error: Any, values: dict[str, Any]) -> str:
    """One pydantic error as ``pack 'x' version 0.1.0: <what is wrong>``."""
    loc = list(error["loc"])
    model: type[BaseModel] = IndexModel
    where: list[str] = []
    node: Any = values
    keys: list[str] = []
    while loc:
        part = loc.pop(0)
        if isinstance(part, int) and keys and keys[-1] in ("pack", "versions"):
            node = node[part] if isinstance(node, list) and part < len(node) else {}
            field = "name" if keys[-1] == "pack" else "version"
            named = node.get(field) if isinstance(node, dict) else None
            if keys[-1] == "pack":
                where.append(f"pack '{named}'" if isinstance(named, str) else f"pack #{part + 1}")
                model = PackModel
            else:
                shown = named if isinstance(named, str) else f"#{part + 1}"
                where[-1] += f" version {shown}"
                model = VersionModel
            keys = []
            continue
        keys.append(str(part))
        if isinstance(node, dict):
            node = node.get(part, {})
        if part == "source" and loc:
            model = SourceModel
            where.append("source")
            keys = []
    kind = error["type"]
    key = ".".join(keys)
    if kind == "missing":
        problem = f"missing key '{key}'"
    elif kind == "extra_forbidden":
        problem = unknown_key(key, _KEYS[model])
    else:
        expected = _EXPECTED.get(kind)
        if expected:
            problem = f"'{key}' must be {expected}" if key else f"must be {expected}"
        else:
            problem = f"'{key}': {error['msg']}" if key else str(error["msg"])
        if kind == "too_short" and key == "versions":
            problem = "'versions' must list at least one version"
    return ": ".join([*where, problem])


def _entry_problems(model: IndexModel, where: str) -> list[str]:
    from packaging.version import InvalidVersion, Version

    problems: list[str] = []
    seen: set[str] = set()
    for number, pack in enumerate(model.pack, start=1):
        named = f"pack '{pack.name}'" if pack.name else f"pack #{number}"
        if not NAME_RULE.match(pack.name):
            problems.append(
                f"{named}: name must be lower-case letters, digits, '-' or '_', "
                "starting with a letter or digit (as in pack.toml)"
            )
        if pack.name in seen:
            problems.append(f"{named}: listed twice; give each pack one entry")
        seen.add(pack.name)
        if not pack.summary.strip() or "\n" in pack.summary:
            problems.append(f"{named}: summary must be one non-empty line")
        if not pack.license.strip():
            problems.append(f"{named}: license must name a license, e.g. MIT")
        if any(not tag.strip() for tag in pack.tags):
            problems.append(f"{named}: tags must be non-empty words")
        versions: dict[Version, str] = {}
        for entry in pack.versions:
            label = f"{named} version {entry.version}"
            try:
                parsed = Version(entry.version)
            except InvalidVersion:
                problems.append(f"{label}: not a version like 1.0 or 0.2.1 (PEP 440)")
            else:
                if parsed in versions:
                    problems.append(
                        f"{label}: listed twice (also as {versions[parsed]}); versions are unique"
                    )
                versions[parsed] = entry.version
            problems.extend(f"{label}: {problem}" for problem in _version_problems(entry, pack))
    return problems


def _wheel_pin_problems(source: SourceModel) -> list[str]:
    """A distribution's ``sha256`` is its wheel's: the requirement must name one version."""
    from packaging.requirements import InvalidRequirement, Requirement

    if not source.sha256 or source.archive:
        return []
    if not SHA256.match(source.sha256):
        return ["source: sha256 must be 64 hex digits (sha256sum prints it)"]
    try:
        specifiers = list(Requirement(source.distribution).specifier)
    except InvalidRequirement:
        return []  # named already
    if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
        return [
            "source: a sha256 with a distribution is its wheel's, so the requirement must "
            "name one version (hippo-x==1.2.0)"
        ]
    return []


def _version_problems(entry: VersionModel, pack: PackModel) -> list[str]:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    problems = []
    try:
        SpecifierSet(entry.hippo)
    except InvalidSpecifier:
        problems.append(f"hippo '{entry.hippo}' is not a version specifier like >=0.1 or >=0.1,<2")
    for position, name in enumerate(entry.passes):
        if not PASS_NAME.match(name):
            problems.append(f"passes: '{name}' is not a pass name (its file name, without .toml)")
        elif name in entry.passes[:position]:
            problems.append(f"passes: '{name}' is listed twice")
    if entry.overlays:
        if not NAME_RULE.match(entry.overlays) or entry.overlays == pack.name:
            problems.append(f"overlays: '{entry.overlays}' must name another pack")
        if entry.passes:
            problems.append("a theme (overlays) provides no passes; passes must be empty")
    if "\n" in entry.yanked:
        problems.append("yanked must be one line saying why")
    source = entry.source
    if source.distribution and source.archive:
        problems.append("source has both distribution and archive; give one")
    elif not source.distribution and not source.archive:
        problems.append("source needs distribution (a pip requirement) or archive")
    if source.distribution:
        try:
            Requirement(source.distribution)
        except InvalidRequirement:
            problems.append(
                f"source: distribution '{source.distribution}' is not a requirement "
                "like hippo-jira>=1.2"
            )
        problems.extend(_wheel_pin_problems(source))
    if source.archive:
        if not source.sha256:
            problems.append("source needs sha256 with an archive")
        elif not SHA256.match(source.sha256):
            problems.append("source: sha256 must be 64 hex digits (sha256sum prints it)")
        if archive_kind(source.archive) is None:
            problems.append(f"source: archive must end in {', '.join(ARCHIVE_SUFFIXES)}")
        if is_url(source.archive):
            problem = url_problem(source.archive)
            if problem:
                problems.append(f"source: archive {source.archive}: {problem}")
    return problems
