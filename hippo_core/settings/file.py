"""Reading ``.hippo/settings.toml``: validated once, then read from a cache.

Validating needs pydantic and tomlkit (:mod:`hippo_core.settings.schema`), which the agent's
hot path cannot afford to import, so the validated result is cached, keyed by the file's
bytes; the hot path reads the cache.
"""

from __future__ import annotations

from hippo_core.base.errors import HippoError
from hippo_core.files.cache import read_cache, write_cache
from hippo_core.settings.values import LoadedSettings, Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike

SETTINGS_FILE = "settings.toml"
SCHEMA_TAG = "settings 6\0"
"""Part of the cache key: a cache written before a setting existed must not be reused."""


def load_settings(
    path: str | PathLike[str], *, shown_as: str, cache_path: str | PathLike[str]
) -> LoadedSettings:
    """Read and validate a settings file; a missing file means every default.

    Raises :class:`~hippo_core.base.errors.HippoError` naming ``shown_as`` and the key when the
    file is not valid TOML or a value has the wrong type.
    """
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return LoadedSettings(Settings())
    except OSError as exc:
        raise HippoError(f"{shown_as}: cannot be read ({exc.strerror})") from None
    # The file's own bytes are the key (latin-1 maps each byte to one character): exact,
    # and no hash library to import on the hot path. A settings file is a few hundred bytes.
    key = SCHEMA_TAG + raw.decode("latin-1")
    cached = read_cache(cache_path, key)
    if isinstance(cached, dict):
        try:
            return _from_payload(cached)
        except (TypeError, ValueError):
            pass
    from hippo_core.settings.schema import validate_settings

    loaded = validate_settings(raw, shown_as=shown_as)
    write_cache(cache_path, key, _to_payload(loaded))
    return loaded


def _to_payload(loaded: LoadedSettings) -> dict[str, object]:
    return {"settings": loaded.settings.as_dict(), "warnings": list(loaded.warnings)}


def _from_payload(payload: dict[str, object]) -> LoadedSettings:
    values, warnings = payload["settings"], payload["warnings"]
    if not isinstance(values, dict) or not isinstance(warnings, list):
        raise TypeError("a settings cache holds a mapping and a list")
    return LoadedSettings(Settings.from_values(values), tuple(str(w) for w in warnings))
