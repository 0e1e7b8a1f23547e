"""``hippo pack search``: the packs the registries list, with what is installed here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hippo_core.packs.lock import Locked, read_lock
from hippo_core.packs.registries import Say, configured, first_party, load_index, quiet
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace


@dataclass(frozen=True)
class Hit:
    """One pack a search found."""

    name: str
    version: str
    """The newest version this hippo can install; empty when there is none."""
    summary: str
    registry: str
    installed: str
    """The version installed here (per the lock file); empty when it is not."""
    tags: tuple[str, ...] = ()
    license: str = ""
    homepage: str = ""
    code: bool = False
    """The newest version runs from a distribution pip installs: it carries code."""

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "version": self.version or None,
            "summary": self.summary,
            "registry": self.registry,
            "installed": self.installed or None,
            "tags": list(self.tags),
            "license": self.license,
            "homepage": self.homepage,
            "code": self.code,
        }


def search(
    workspace: Workspace | None, query: str = "", *, refresh: bool = False, say: Say = quiet
) -> list[Hit]:
    """The packs of every registry matching ``query`` (name, summary, tags; any case).

    Without a workspace only hippo's own registry is searched (the others are settings).
    ``refresh`` fetches every registry at a URL again. A registry that cannot be read is a
    warning (through ``say``) and the others are searched all the same.
    """
    from hippo_core.base.errors import HippoError

    if workspace is None:
        registries = [first_party()]
        locked: dict[str, Locked] = {}
    else:
        registries = configured(workspace.settings, workspace.root)
        locked = read_lock(workspace)
    hits = []
    for registry in registries:
        try:
            index = load_index(registry, refresh=refresh, say=say)
        except HippoError as error:
            say(f"warning: {error}")
            continue
        for pack in index.packs.values():
            if not pack.matches(query):
                continue
            newest = pack.newest(__version__)
            entry = locked.get(pack.name)
            hits.append(
                Hit(
                    name=pack.name,
                    version=newest.version if newest else "",
                    summary=pack.summary,
                    registry=registry.label,
                    installed=entry.version if entry else "",
                    tags=pack.tags,
                    license=pack.license,
                    homepage=pack.homepage,
                    code=bool(newest and newest.distribution and not newest.shipped),
                )
            )
    return sorted(hits, key=lambda hit: hit.name)
