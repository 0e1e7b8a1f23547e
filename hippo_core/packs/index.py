"""A registry's index as hippo uses it: :class:`Registry`, :class:`Release`,
:class:`IndexPack` and :class:`Index`, and :func:`parse_index` to read one from bytes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.files.home import user_path
from hippo_core.packs.archive import is_url
from hippo_core.packs.registry import IndexModel, index_problems

if TYPE_CHECKING:
    from packaging.version import Version

SHIPPED_DISTRIBUTION = "hippo-memory"
"""The distribution a release names when its pack ships inside hippo."""


@dataclass(frozen=True)
class Registry:
    """A registry: ``label`` as people name it, ``location`` its absolute path or URL."""

    label: str
    location: str

    @property
    def is_url(self) -> bool:
        return is_url(self.location)

    @property
    def is_json(self) -> bool:
        from urllib.parse import urlsplit

        name = urlsplit(self.location).path if self.is_url else self.location
        return name.lower().endswith(".json")

    def resolve(self, archive: str) -> str:
        """An archive's location: a URL, or a path relative to this index's folder."""
        if is_url(archive):
            return archive
        if self.is_url:
            from urllib.parse import urljoin

            return urljoin(self.location, archive)
        path = user_path(archive)
        return str(path if path.is_absolute() else Path(self.location).parent / path)


@dataclass(frozen=True)
class Release:
    """One version of a pack in an index."""

    name: str
    version: str
    hippo: str
    passes: tuple[str, ...]
    overlays: str
    yanked: str
    distribution: str
    archive: str
    sha256: str
    registry: Registry

    @property
    def parsed(self) -> Version:
        from packaging.version import Version

        return Version(self.version)

    @property
    def shipped(self) -> bool:
        """Whether the pack ships inside hippo (its source is hippo-memory)."""
        return bool(self.distribution) and _dist_name(self.distribution) == SHIPPED_DISTRIBUTION

    def works_with(self, hippo_version: str) -> bool:
        from packaging.specifiers import SpecifierSet

        return SpecifierSet(self.hippo).contains(hippo_version, prereleases=True)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


@dataclass(frozen=True)
class IndexPack:
    """One pack in an index, its versions newest first."""

    name: str
    summary: str
    license: str
    homepage: str
    tags: tuple[str, ...]
    releases: tuple[Release, ...]
    registry: Registry

    def installable(self, hippo_version: str) -> list[Release]:
        """Versions that are not yanked and work with ``hippo_version``, newest first."""
        return [r for r in self.releases if not r.yanked and r.works_with(hippo_version)]

    def newest(self, hippo_version: str) -> Release | None:
        """The newest installable version (a final release over a pre-release)."""
        found = self.installable(hippo_version)
        finals = [release for release in found if not release.parsed.is_prerelease]
        chosen = finals or found
        return chosen[0] if chosen else None

    def find(self, version: str) -> Release | None:
        from packaging.version import InvalidVersion, Version

        try:
            wanted = Version(version)
        except InvalidVersion:
            return None
        return next((r for r in self.releases if r.parsed == wanted), None)

    def matches(self, query: str) -> bool:
        words = (self.name, self.summary, *self.tags)
        return not query or any(query.lower() in word.lower() for word in words)


@dataclass(frozen=True)
class Index:
    """A registry's packs by name; ``fetched`` is when a cached copy was fetched ('' for a
    path)."""

    registry: Registry
    packs: dict[str, IndexPack]
    fetched: str = ""


def parse_index(raw: bytes, registry: Registry, fetched: str = "") -> Index:
    """The :class:`Index` in ``raw``; raises :class:`HippoError` with the first problem."""
    model, problems = index_problems(raw, registry.location, as_json=registry.is_json)
    if model is None or problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise HippoError(problems[0] + more)
    return Index(registry, _packs(model, registry), fetched)


def _packs(model: IndexModel, registry: Registry) -> dict[str, IndexPack]:
    packs = {}
    for pack in model.pack:
        releases = tuple(
            sorted(
                (
                    Release(
                        name=pack.name,
                        version=entry.version,
                        hippo=entry.hippo,
                        passes=tuple(entry.passes),
                        overlays=entry.overlays,
                        yanked=entry.yanked,
                        distribution=entry.source.distribution,
                        archive=entry.source.archive,
                        sha256=entry.source.sha256.lower(),
                        registry=registry,
                    )
                    for entry in pack.versions
                ),
                key=lambda release: release.parsed,
                reverse=True,
            )
        )
        packs[pack.name] = IndexPack(
            name=pack.name,
            summary=pack.summary,
            license=pack.license,
            homepage=pack.homepage,
            tags=tuple(pack.tags),
            releases=releases,
            registry=registry,
        )
    return packs


def _dist_name(requirement: str) -> str:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return canonicalize_name(Requirement(requirement).name)
