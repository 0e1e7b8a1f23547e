"""Workspace settings as the rest of hippo uses them: a frozen dataclass.

The file is ``.hippo/settings.toml``. Validating it needs pydantic and tomlkit
(:mod:`hippo_core.settings_schema`), which the agent's hot path cannot afford to import, so
the validated result is cached, keyed by the file's bytes; the hot path reads the cache.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hippo_core.cache import read_cache, write_cache
from hippo_core.errors import HippoError

SETTINGS_FILE = "settings.toml"
DEFAULT_LOG_NAME = "Session log.md"
SCHEMA_TAG = b"settings 2\0"
"""Part of the cache key: a cache written before a setting existed must not be reused."""


@dataclass(frozen=True)
class OpenAISettings:
    """The ``[openai]`` table: an OpenAI-compatible chat completions endpoint."""

    url: str = "http://127.0.0.1:8080/v1"
    model: str = "default"
    api_key_env: str = ""
    max_tokens: int = 4000


@dataclass(frozen=True)
class Settings:
    """The validated settings of a workspace, defaults filled in."""

    notes_dir: str = "notes"
    entry_note: str = "Home.md"
    budget_bytes: int = 25600
    required_notes: tuple[str, ...] = ()
    sample_tasks: tuple[str, ...] = ()
    log_path: str | None = None
    transcript_dirs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    model_backend: str = "command"
    model_command: tuple[str, ...] = ()
    model_timeout_seconds: float = 600.0
    openai: OpenAISettings = field(default_factory=OpenAISettings)
    themes: tuple[str, ...] = ()
    registries: tuple[str, ...] = ()

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Settings:
        """Settings from plain values, as validated or cached (lists become tuples)."""
        values = dict(values)
        for name in ("required_notes", "sample_tasks", "model_command", "themes", "registries"):
            values[name] = tuple(values.get(name) or ())
        values["openai"] = OpenAISettings(**(values.get("openai") or {}))
        dirs = values.get("transcript_dirs") or {}
        values["transcript_dirs"] = {tool: tuple(folders) for tool, folders in dirs.items()}
        return cls(**values)

    @property
    def effective_log_path(self) -> str:
        """``log_path``, or ``<notes_dir>/Session log.md`` when it is not set."""
        return self.log_path or f"{self.notes_dir}/{DEFAULT_LOG_NAME}"


@dataclass(frozen=True)
class LoadedSettings:
    """Settings plus the warnings their file gave (each unknown key named once)."""

    settings: Settings
    warnings: tuple[str, ...] = field(default=())


def load_settings(path: Path, *, shown_as: str, cache_path: Path) -> LoadedSettings:
    """Read and validate a settings file; a missing file means every default.

    Raises :class:`~hippo_core.errors.HippoError` naming ``shown_as`` and the key when the
    file is not valid TOML or a value has the wrong type.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return LoadedSettings(Settings())
    except OSError as exc:
        raise HippoError(f"{shown_as}: cannot be read ({exc.strerror})") from None
    key = hashlib.sha256(SCHEMA_TAG + raw).hexdigest()
    cached = read_cache(cache_path, key)
    if isinstance(cached, dict):
        try:
            return _from_payload(cached)
        except (TypeError, ValueError):
            pass
    from hippo_core.settings_schema import validate_settings

    loaded = validate_settings(raw, shown_as=shown_as)
    write_cache(cache_path, key, _to_payload(loaded))
    return loaded


def _to_payload(loaded: LoadedSettings) -> dict[str, object]:
    values = {name: getattr(loaded.settings, name) for name in Settings.__dataclass_fields__}
    values["openai"] = asdict(loaded.settings.openai)
    return {"settings": values, "warnings": list(loaded.warnings)}


def _from_payload(payload: dict[str, object]) -> LoadedSettings:
    values, warnings = payload["settings"], payload["warnings"]
    if not isinstance(values, dict) or not isinstance(warnings, list):
        raise TypeError("a settings cache holds a mapping and a list")
    return LoadedSettings(Settings.from_values(values), tuple(str(w) for w in warnings))
