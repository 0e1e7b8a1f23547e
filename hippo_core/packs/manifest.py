"""``pack.toml``: what a pack says about itself, read with pydantic.

::

    name = "decisions"                 # the pack's folder name under .hippo/packs/
    version = "0.1.0"                  # PEP 440
    description = "One line saying what it does."
    protocol = "HIPPO_V1"
    hippo = ">=0.1"                    # the hippo versions it works with (PEP 440 specifiers)
    requires = ["hippo-jira>=1.2"]     # distributions whose plugins it needs (optional)
    overlays = "core"                  # themes only: the pack whose files it overrides
    license = "MIT"                    # optional
    homepage = "https://example.org"   # optional
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from hippo_core.base.distribution import upgrade_hint
from hippo_core.packs.files import NO_LINKS, PackError, unknown_key

MANIFEST = "pack.toml"
PROTOCOL = "HIPPO_V1"
NAME_RULE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class ManifestFile(BaseModel):
    """``pack.toml`` as written."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str
    version: str
    description: str
    protocol: str
    hippo: str = ""
    requires: list[str] = []
    overlays: str = ""
    license: str = ""
    homepage: str = ""


KEYS = tuple(ManifestFile.model_fields)
EXPECTED = {
    "requires": "a list of requirement strings",
}


@dataclass(frozen=True)
class Manifest:
    """A checked ``pack.toml``."""

    name: str
    version: str
    description: str
    protocol: str = PROTOCOL
    hippo: str = ""
    requires: tuple[str, ...] = ()
    overlays: str = ""
    license: str = ""
    homepage: str = ""

    @property
    def is_theme(self) -> bool:
        return bool(self.overlays)

    def missing_hippo(self, version: str) -> str | None:
        """Why hippo ``version`` is not one this pack works with; None when it is."""
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        if not self.hippo or Version(version) in SpecifierSet(self.hippo, prereleases=True):
            return None
        return (
            f"needs hippo {self.hippo} and this is hippo {version}; "
            f"upgrade hippo ({upgrade_hint()}) or install an older version of the pack"
        )

    def missing_distributions(self, present: frozenset[str] = frozenset()) -> list[str]:
        """The requirements of ``requires`` that no installed distribution satisfies (a
        name in ``present``, canonical, counts as satisfied)."""
        from importlib.metadata import PackageNotFoundError, version

        from packaging.requirements import Requirement
        from packaging.utils import canonicalize_name

        missing = []
        for text in self.requires:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) in present:
                continue
            try:
                found = version(requirement.name)
            except PackageNotFoundError:
                missing.append(text)
                continue
            if not requirement.specifier.contains(found, prereleases=True):
                missing.append(text)
        return missing


def read_manifest(root: Path) -> Manifest | None:
    """The pack's ``pack.toml``, checked; None when the pack has none.

    Raises :class:`PackError` naming the file for anything wrong in it.
    """
    file = root / MANIFEST
    if file.is_symlink():
        raise PackError(root, f"{MANIFEST} {NO_LINKS}")
    if not file.exists():
        return None
    if not file.is_file():
        raise PackError(file, "must be a regular file")
    try:
        values = tomllib.loads(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PackError(file, f"not UTF-8 (byte {exc.start}); save it as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise PackError(file, f"not valid TOML: {exc}") from None
    return parse_manifest(values, file)


def parse_manifest(values: dict[str, Any], file: Path) -> Manifest:
    """A :class:`Manifest` from ``pack.toml``'s values; ``file`` is named in errors."""
    for key in values:
        if key not in KEYS:
            raise PackError(file, unknown_key(key, KEYS))
    try:
        fields = ManifestFile.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0])
        if error["type"] == "missing":
            raise PackError(file, f"missing key '{key}'") from None
        expected = EXPECTED.get(key, "a string")
        raise PackError(file, f"'{key}' must be {expected}") from None
    if fields.protocol != PROTOCOL:
        raise PackError(file, f'protocol must be "{PROTOCOL}", found "{fields.protocol}"')
    if not NAME_RULE.match(fields.name):
        raise PackError(
            file,
            f"name '{fields.name}' must be lower-case letters, digits, '-' or '_', "
            "starting with a letter or digit (it is the pack's folder name)",
        )
    _check_versions(fields, file)
    return Manifest(
        name=fields.name,
        version=fields.version,
        description=fields.description,
        protocol=fields.protocol,
        hippo=fields.hippo,
        requires=tuple(fields.requires),
        overlays=fields.overlays,
        license=fields.license,
        homepage=fields.homepage,
    )


def _check_versions(fields: ManifestFile, file: Path) -> None:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        Version(fields.version)
    except InvalidVersion:
        raise PackError(
            file, f"version '{fields.version}' is not a version like 1.0 or 0.2.1"
        ) from None
    try:
        SpecifierSet(fields.hippo)
    except InvalidSpecifier:
        raise PackError(
            file, f"hippo '{fields.hippo}' is not a version specifier like >=0.1 or >=0.1,<2"
        ) from None
    for text in fields.requires:
        try:
            Requirement(text)
        except InvalidRequirement:
            raise PackError(
                file, f"requires: '{text}' is not a requirement like hippo-jira>=1.2"
            ) from None
