"""Workspace settings as the rest of hippo uses them: frozen values, defaults filled in.

The file they come from is read by :mod:`hippo_core.settings.file` and validated by
:mod:`hippo_core.settings.schema`. These are :class:`~hippo_core.base.records.Record` values
rather than dataclasses: every agent hook reads them, and dataclasses cost it an import.
"""

from __future__ import annotations

from hippo_core.base.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_LOG_NAME = "Session log.md"


class OpenAISettings(Record):
    """The ``[openai]`` table: an OpenAI-compatible chat completions endpoint."""

    __slots__ = ("url", "model", "api_key_env", "max_tokens", "extra_body")
    url: str
    model: str
    api_key_env: str
    max_tokens: int
    extra_body: dict[str, Any]

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080/v1",
        model: str = "default",
        api_key_env: str = "",
        max_tokens: int = 4000,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self._set(
            url=url,
            model=model,
            api_key_env=api_key_env,
            max_tokens=max_tokens,
            extra_body={} if extra_body is None else extra_body,
        )


class Settings(Record):
    """The core settings of a workspace (``workspace.settings``), validated, defaults filled in."""

    __slots__ = (
        "notes_dir",
        "entry_note",
        "budget_bytes",
        "relevance",
        "required_notes",
        "sample_tasks",
        "dreamed_days",
        "risky_review",
        "log_path",
        "transcript_dirs",
        "model_backend",
        "model_command",
        "model_timeout_seconds",
        "openai",
        "themes",
        "registries",
        "disabled_packs",
        "index_url",
        "index_project",
        "index_share",
        "tables",
    )
    notes_dir: str
    entry_note: str
    budget_bytes: int
    relevance: str
    """How the context block ranks notes for a task: ``headings`` (the spec's rule) or
    ``bm25``."""
    required_notes: tuple[str, ...]
    sample_tasks: tuple[str, ...]
    dreamed_days: int
    """For how many days a note a dream changed is marked so in the context block."""
    risky_review: str
    """Who lands a dream's risky change: ``person`` (it waits for ``hippo review``) or
    ``pass`` (the pass's reviewers alone)."""
    log_path: str | None
    transcript_dirs: dict[str, tuple[str, ...]]
    model_backend: str
    model_command: tuple[str, ...]
    model_timeout_seconds: float
    openai: OpenAISettings
    themes: tuple[str, ...]
    registries: tuple[str, ...]
    disabled_packs: tuple[str, ...]
    """Packs (and themes) that do not run in this workspace, though they are installed."""
    index_url: str
    """A team index on PostgreSQL (``postgresql+psycopg://...``); empty: only the local one."""
    index_project: str
    """The name this workspace's sessions go by in the team index; empty: the folder's."""
    index_share: str
    """What ingest sends the team index: ``workspace`` (its sessions) or ``machine`` (also
    every other session this machine indexed, under no project)."""
    tables: dict[str, dict[str, Any]]
    """Tables hippo itself does not know (``[sleep]``), as written: the plugin that owns
    one (``hippo_register_settings``) validates it when it reads it."""

    def __init__(
        self,
        notes_dir: str = "notes",
        entry_note: str = "Home.md",
        budget_bytes: int = 25600,
        relevance: str = "headings",
        required_notes: tuple[str, ...] = (),
        sample_tasks: tuple[str, ...] = (),
        dreamed_days: int = 30,
        risky_review: str = "person",
        log_path: str | None = None,
        transcript_dirs: dict[str, tuple[str, ...]] | None = None,
        model_backend: str = "command",
        model_command: tuple[str, ...] = (),
        model_timeout_seconds: float = 600.0,
        openai: OpenAISettings | None = None,
        themes: tuple[str, ...] = (),
        registries: tuple[str, ...] = (),
        disabled_packs: tuple[str, ...] = (),
        index_url: str = "",
        index_project: str = "",
        index_share: str = "workspace",
        tables: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self._set(
            notes_dir=notes_dir,
            entry_note=entry_note,
            budget_bytes=budget_bytes,
            relevance=relevance,
            required_notes=required_notes,
            sample_tasks=sample_tasks,
            dreamed_days=dreamed_days,
            risky_review=risky_review,
            log_path=log_path,
            transcript_dirs={} if transcript_dirs is None else transcript_dirs,
            model_backend=model_backend,
            model_command=model_command,
            model_timeout_seconds=model_timeout_seconds,
            openai=OpenAISettings() if openai is None else openai,
            themes=themes,
            registries=registries,
            disabled_packs=disabled_packs,
            index_url=index_url,
            index_project=index_project,
            index_share=index_share,
            tables={} if tables is None else tables,
        )

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Settings:
        """Settings from plain values, as validated or cached (lists become tuples)."""
        values = dict(values)
        for name in (
            "required_notes",
            "sample_tasks",
            "model_command",
            "themes",
            "registries",
            "disabled_packs",
        ):
            values[name] = tuple(values.get(name) or ())
        values["openai"] = OpenAISettings(**(values.get("openai") or {}))
        dirs = values.get("transcript_dirs") or {}
        values["transcript_dirs"] = {tool: tuple(folders) for tool, folders in dirs.items()}
        return cls(**values)

    @property
    def effective_log_path(self) -> str:
        """``log_path``, or ``<notes_dir>/Session log.md`` when it is not set."""
        return self.log_path or f"{self.notes_dir}/{DEFAULT_LOG_NAME}"


class LoadedSettings(Record):
    """Settings plus the warnings their file gave (each unknown key named once)."""

    __slots__ = ("settings", "warnings")
    settings: Settings
    warnings: tuple[str, ...]

    def __init__(self, settings: Settings, warnings: tuple[str, ...] = ()) -> None:
        self._set(settings=settings, warnings=warnings)
