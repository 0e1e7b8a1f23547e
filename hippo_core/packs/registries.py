"""Where pack registries are and reading them: hippo's own index, the ones the settings
name, and the cache of indexes fetched from URLs.

The registries hippo reads are its own index (``hippo_packs/registry.toml``, shipped
inside hippo; ``registry/index.toml`` in its repository), then ``registries`` from the
settings in order. An index at a URL is cached in ``$HIPPO_HOME/registries/`` and fetched
again only by ``hippo pack update`` (or when it never was); an index at a path is read
each time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.clock import stamp
from hippo_core.base.errors import HippoError, UsageError
from hippo_core.files.home import user_path
from hippo_core.packs.archive import MAX_BYTES, FetchError, is_url, read_bytes, url_problem
from hippo_core.packs.index import Index, Registry, parse_index

if TYPE_CHECKING:
    from hippo_core.settings.values import Settings

FIRST_PARTY = "hippo"
"""The label of hippo's own index, in messages, ``--registry`` and the lock file."""

Say = Callable[[str], None]


def quiet(line: str) -> None:
    """A :data:`Say` that says nothing."""
    return None


def first_party() -> Registry:
    """hippo's own index, shipped inside the ``hippo_packs`` package."""
    import hippo_packs

    return Registry(FIRST_PARTY, str(Path(hippo_packs.__file__).resolve().parent / "registry.toml"))


def registry_at(text: str, base: Path, *, what: str) -> Registry:
    """The registry ``text`` names: ``hippo``, a URL, or a path relative to ``base``.

    ``what`` says where the text came from (``settings registries``, ``--registry``),
    for the one-line error a location hippo will not read gives.
    """
    if text == FIRST_PARTY:
        return first_party()
    if is_url(text):
        problem = url_problem(text)
        if problem:
            raise UsageError(f"{what}: {text}: {problem}")
        return Registry(text, text)
    if not text.strip():
        raise UsageError(f"{what}: an empty location; give a path or an https URL")
    path = user_path(text)
    # Shown in messages: <workspace>/../team/index.toml reads better as the folder it is.
    return Registry(text, os.path.normpath(path if path.is_absolute() else base / path))


def configured(settings: Settings, root: Path) -> list[Registry]:
    """hippo's own index, then the settings' ``registries`` (paths relative to ``root``)."""
    found = [first_party()]
    for text in settings.registries:
        registry = registry_at(text, root, what="settings registries")
        if registry not in found:
            found.append(registry)
    return found


def cache_file(location: str) -> Path:
    """``$HIPPO_HOME/registries/<digest of the location>.json``."""
    import hashlib

    from hippo_core.files.home import hippo_home

    digest = hashlib.sha256(location.encode("utf-8")).hexdigest()[:24]
    return hippo_home() / "registries" / f"{digest}.json"


def _read_cached(registry: Registry) -> tuple[bytes, str] | None:
    try:
        stored = json.loads(cache_file(registry.location).read_bytes())
    except (OSError, ValueError):
        return None
    if (
        not isinstance(stored, dict)
        or stored.get("location") != registry.location
        or not isinstance(stored.get("index"), str)
        or not isinstance(stored.get("fetched"), str)
    ):
        return None
    return stored["index"].encode("utf-8"), stored["fetched"]


def _write_cached(registry: Registry, raw: bytes, fetched: str) -> None:
    from hippo_core.files.home import hippo_home
    from hippo_core.files.owner_only import owner_only_write

    payload = {"location": registry.location, "fetched": fetched, "index": raw.decode("utf-8")}
    text = json.dumps(payload, ensure_ascii=False, indent=1)
    owner_only_write(cache_file(registry.location), text, top=hippo_home())


def load_index(registry: Registry, *, refresh: bool = False, say: Say = quiet) -> Index:
    """A registry's index: read from its path, or from the cache for a URL.

    A URL is fetched when ``refresh`` or when it never was; unreachable with a cached copy,
    ``say`` warns and the copy is used. Raises :class:`HippoError` naming the registry when
    it cannot be read at all or is malformed.
    """
    if not registry.is_url:
        try:
            raw = read_bytes(registry.location, cap=MAX_BYTES)
        except FetchError as error:
            raise HippoError(
                f"registry {registry.location}: cannot be read ({error.reason})"
            ) from None
        return parse_index(raw, registry)
    cached = _read_cached(registry)
    if cached is not None and not refresh:
        return parse_index(cached[0], registry, cached[1])
    if cached is None:
        say(f"fetching registry {registry.location} (not fetched before)")
    try:
        raw = read_bytes(registry.location, cap=MAX_BYTES)
    except FetchError as error:
        if cached is None:
            raise HippoError(
                f"registry {registry.location}: cannot be fetched ({error.reason}) and never was; "
                "check the URL and the network, or remove it from registries in the settings"
            ) from None
        say(
            f"warning: registry {registry.location}: cannot be fetched ({error.reason}); "
            f"using the copy fetched {_shown_time(cached[1])}"
        )
        return parse_index(cached[0], registry, cached[1])
    fetched = stamp()
    index = parse_index(raw, registry, fetched)  # a malformed index is never cached
    _write_cached(registry, raw, fetched)
    return index


def _shown_time(stamp: str) -> str:
    return stamp.replace("T", " ").removesuffix("Z") + " UTC" if stamp.endswith("Z") else stamp
