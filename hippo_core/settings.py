"""Workspace settings as the rest of hippo uses them: frozen dataclasses, defaults filled in.

The file they come from is read by :mod:`hippo_core.settings_file` and validated by
:mod:`hippo_core.settings_schema`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_LOG_NAME = "Session log.md"


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
