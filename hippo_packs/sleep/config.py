"""The ``[sleep]`` table of ``.hippo/settings.toml``: the cycle's defaults and clamps.

Values below a floor are raised to it rather than refused (``tick_seconds = 1`` runs every
30 s), as the service the cycle comes from does; a value of the wrong type is an error. The
drafting model is ``[sleep.model]``: an OpenAI-compatible endpoint, or none (``url = ""``,
the default), which is mechanical mode.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from hippo_core import HippoError


def _floor(limit: float) -> Any:
    def raise_to(value: float) -> float:
        return max(limit, value)

    return raise_to


class SleepLifecycle(BaseModel):
    """``[sleep.model.lifecycle]``: start the model's server when a sleep or a redraft needs
    it, and stop it when the cycle is over."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    manage: bool = Field(
        False,
        description="Start and stop the model's server (on when server and model_path are set).",
    )
    server: str = Field("", description="The server program, such as llama-server.")
    model_path: str = Field("", description="The model file the server loads.")
    server_args: str = Field("-ngl 99 -c 8192", description="More arguments for the server.")
    start: str = Field("", description="A whole start command line, instead of the three above.")
    health_url: str = Field(
        "", description="Ready when this answers 200 (default: url without /v1, + /health)."
    )
    ready_timeout_seconds: float = Field(240.0, gt=0, description="How long the start may take.")
    poll_seconds: float = Field(2.0, gt=0, description="How often readiness is asked.")
    keep_warm_seconds: float = Field(300.0, ge=0, description="Kept up this long after a call.")
    handover: bool = Field(False, description="Stop it before the main model is woken.")

    @property
    def managed(self) -> bool:
        return self.manage or bool(self.server and self.model_path) or bool(self.start)


class SleepModel(BaseModel):
    """``[sleep.model]``: the small model that writes drafts."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    url: str = Field("", description='Base URL up to /v1; "" is mechanical mode (no model).')
    name: str = Field("default", description="The model name sent with each request.")
    api_key_env: str = Field("", description="Environment variable holding an API key.")
    timeout_seconds: float = Field(120.0, gt=0, description="Seconds one answer may take.")
    max_tokens: int = Field(2000, gt=0, description="How long one answer may be, in tokens.")
    extra_body: dict[str, Any] = Field(
        default_factory=lambda: {"chat_template_kwargs": {"enable_thinking": False}},
        description="Merged into every chat request.",
    )
    retry_after_seconds: float = Field(
        900.0, ge=0, description="After the model could not be reached, wait this long."
    )
    draft: Literal["extractive", "abstractive"] = Field(
        "extractive",
        description="extractive: the model chooses fragments and cores, hippo writes the "
        "text; abstractive: the model writes it.",
    )
    response_format: Literal["auto", "json_schema", "json_object", "none"] = Field(
        "auto", description="How the answer's JSON schema is sent; auto tries each form."
    )
    lifecycle: SleepLifecycle = Field(default_factory=SleepLifecycle)  # type: ignore[arg-type]


def _sendable_url(value: str, info: ValidationInfo) -> str:
    """A URL a bearer and the cycle's events may be sent to (see ``outbound_url_problem``)."""
    from hippo_core import outbound_url_problem

    problem = value and outbound_url_problem(
        value,
        allow_plain_http=bool(info.data.get("allow_plain_http")),
        allow_link_local=bool(info.data.get("allow_link_local")),
    )
    if problem:
        raise ValueError(problem)
    return value


#: The events the webhook hears unless ``[sleep.notify] events`` says otherwise.
NOTIFY_EVENTS = ["draft_submitted", "sleep_failed", "chain_ended", "purged"]


class SleepNotify(BaseModel):
    """``[sleep.notify]``: the webhook that hears the cycle's events, best effort."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # Declared before webhook_url, whose check reads them.
    allow_plain_http: bool = Field(
        False, description="Allow plain http:// to another machine (default: https only)."
    )
    allow_link_local: bool = Field(
        False, description="Allow a link-local or cloud-metadata address (169.254.0.0/16...)."
    )
    webhook_url: str = Field("", description="POST each chosen event here as JSON; empty: off.")
    bearer_token: str = Field(
        "", description="The bearer to present (bearer_token_env keeps it out)."
    )
    bearer_token_env: str = Field("", description="An environment variable holding the bearer.")
    bearer_token_keyring: str = Field(
        "", description='A system keyring entry holding it, as "service/name".'
    )
    secret: str = Field("", description="The key that signs each body (secret_env keeps it out).")
    secret_env: str = Field("", description="An environment variable holding the signing key.")
    secret_keyring: str = Field("", description='A keyring entry holding it, as "service/name".')
    events: list[str] = Field(
        default_factory=lambda: list(NOTIFY_EVENTS), description="The events to send."
    )
    timeout_seconds: float = Field(10.0, gt=0, description="How long one POST may take.")

    _sendable = field_validator("webhook_url")(_sendable_url)


#: The events that wake the main model unless ``[sleep.ripple] events`` says otherwise.
RIPPLE_EVENTS = [
    "brief_requested",
    "draft_submitted",
    "tend_resubmitted",
    "brief_unmatched",
    "sleep_failed",
]


class SleepRipple(BaseModel):
    """``[sleep.ripple]``: how the cycle wakes the main model when it is its turn."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    type: str = Field("", description='"script" (run a command), "endpoint" (POST), or "": off.')
    command: list[str] = Field(
        default_factory=lambda: ["claude", "-p", "{message}"],
        description="The script's argv, run without a shell; {message}, {event}, {draft_id}.",
    )
    cwd: str = Field("", description="The folder the script runs in (default: the workspace).")
    run_as: str = Field("", description="The account the script runs as (required as root).")
    stdin: bool = Field(False, description="Send the message on stdin instead of in {message}.")
    timeout_seconds: float = Field(900.0, gt=0, description="How long one ripple may run.")
    # Declared before url, whose check reads them.
    allow_plain_http: bool = Field(
        False, description="Allow plain http:// to another machine (default: https only)."
    )
    allow_link_local: bool = Field(
        False, description="Allow a link-local or cloud-metadata address (169.254.0.0/16...)."
    )
    url: str = Field("", description="The endpoint to POST to, for type = endpoint.")
    bearer_token: str = Field("", description="The endpoint's bearer.")
    bearer_token_env: str = Field("", description="An environment variable holding it.")
    bearer_token_keyring: str = Field("", description='A keyring entry, as "service/name".')
    secret: str = Field("", description="The key that signs each body (X-Hippo-Signature-256).")
    secret_env: str = Field("", description="An environment variable holding the signing key.")
    secret_keyring: str = Field("", description='A keyring entry holding it, as "service/name".')
    events: list[str] = Field(
        default_factory=lambda: list(RIPPLE_EVENTS), description="The events that ripple."
    )
    messages: dict[str, str] = Field(
        default_factory=dict, description="Your wording per event (and tend_resubmitted_terminal)."
    )

    _sendable = field_validator("url")(_sendable_url)

    @field_validator("type")
    @classmethod
    def _kind(cls, value: str) -> str:
        if value in ("", "off", "none"):
            return ""
        if value not in ("script", "endpoint"):
            raise ValueError(f"ripple.type must be script, endpoint or empty, not '{value}'")
        return value


class SleepVoice(BaseModel):
    """``[sleep.voice]``: the voice card, the owner's words first in every drafting prompt."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    enabled: bool = Field(False, description="Opt in: keep a voice card and use it.")
    max_chars: int = Field(1500, ge=1, description="The longest card, in characters.")


class SleepServe(BaseModel):
    """``[sleep.serve]``: where ``hippo sleep serve`` listens, and the bearer it asks for."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    host: str = Field(
        "127.0.0.1", description="The address to listen on; beyond loopback a bearer is required."
    )
    port: int = Field(7424, ge=0, le=65535, description="The port to listen on; 0 picks one.")
    bearer_token: str = Field(
        "", description="The bearer every request must present (bearer_token_env keeps it out)."
    )
    bearer_token_env: str = Field("", description="An environment variable holding the bearer.")
    bearer_token_keyring: str = Field(
        "",
        description='A system keyring entry holding the bearer, as "service/name" (needs the '
        "keyring package).",
    )
    bearer: Literal["auto", "none"] = Field(
        "auto",
        description='"auto": the bearer set above, or one made on first start and kept in '
        '.hippo/sleep/serve.token; "none": no bearer (loopback only).',
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description='More Host headers to answer, as "name:port" (that port) or "name" (any).',
    )
    request_timeout_seconds: float = Field(
        10.0,
        ge=1,
        le=600,
        description="A client has this long to send a whole request, from connecting or from "
        "its last answer.",
    )

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not host_entry(entry):
                raise ValueError(
                    f"{entry!r} is not a Host: give a name or address, with :port or without "
                    '(e.g. "hippo.lan:7424", "[fe80::1]:7424")'
                )
        return [entry.lower() for entry in value]


def host_entry(entry: str) -> bool:
    """Whether ``entry`` is a Host header value: a DNS name, an IPv4 address or a bracketed
    IPv6 address, with ``:port`` (1 to 65535) or without."""
    found = re.fullmatch(
        r"(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::([0-9]{1,5}))?",
        entry,
        re.ASCII | re.IGNORECASE,
    )
    return found is not None and (found.group(2) is None or 1 <= int(found.group(2)) <= 65535)


class SleepSettings(BaseModel):
    """``[sleep]``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    mode: Literal["thread", "external"] = "thread"
    review: Literal["model", "person"] = Field(
        "model",
        description='Who may approve drafts: "model" (the main model, through its tools, or a '
        'person), or "person" (only `hippo review` in a terminal).',
    )
    interval_seconds: float = Field(
        72000.0, description="Bedtime: this long after a sleep; 600 or more."
    )
    at: str = Field("", description="Bedtime at a local wall-clock time, HH:MM, instead.")
    warmup_seconds: float = Field(
        300.0, ge=0, description="A service started past bedtime ticks this soon, not later."
    )
    gap_grace_intervals: float = 3.0
    brief_request: bool = True
    brief_check_misses: int = Field(3, ge=1)
    brief_pull: bool = False
    tick_seconds: float = Field(300.0, description="How often a tick runs; 30 or more.")
    tend_cycle: bool = True
    tend_interval_seconds: float = Field(
        600.0, description="How often the tend cycle redrafts; 60 or more."
    )
    nudge_wait_seconds: float = 180.0
    max_entries_per_run: int = Field(500, ge=1)
    promote_min_evidence: int = Field(3, ge=1)
    max_attempts: int = Field(3, description="Attempts of a chain, the last terminal; 1 to 10.")
    candidate_cores: int = Field(5, ge=0)
    cores_dir: str = Field("cores", description="Folder of the cores, inside notes_dir.")
    short_term_seconds: float = Field(691200.0, gt=0, description="Fragments age out after.")
    pruned_safety_days: float = Field(14.0, ge=0, description="Pruned fragments kept this long.")
    model: SleepModel = Field(default_factory=SleepModel)  # type: ignore[arg-type]
    serve: SleepServe = Field(default_factory=SleepServe)  # type: ignore[arg-type]
    voice: SleepVoice = Field(default_factory=SleepVoice)  # type: ignore[arg-type]
    notify: SleepNotify = Field(default_factory=SleepNotify)  # type: ignore[arg-type]
    ripple: SleepRipple = Field(default_factory=SleepRipple)  # type: ignore[arg-type]

    _raise_interval = field_validator("interval_seconds")(_floor(600))
    _raise_tick = field_validator("tick_seconds")(_floor(30))
    _raise_tend = field_validator("tend_interval_seconds")(_floor(60))

    @field_validator("max_attempts")
    @classmethod
    def _clamp_attempts(cls, value: int) -> int:
        return min(10, max(1, value))

    @field_validator("at")
    @classmethod
    def _wall_clock(cls, value: str) -> str:
        if value and not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", value):
            raise ValueError("must be a local time as HH:MM (24 hours), or empty")
        return value

    @field_validator("cores_dir")
    @classmethod
    def _inside(cls, value: str) -> str:
        parts = value.split("/")
        if not value or value.startswith("/") or ".." in parts or "\\" in value:
            raise ValueError("must be a relative folder inside notes_dir")
        return value.strip("/")

    @property
    def heartbeat(self) -> float:
        """How often a tick runs: ``tick_seconds``, or sooner when the tend cycle wants it."""
        if self.tend_cycle:
            return min(self.tick_seconds, self.tend_interval_seconds)
        return self.tick_seconds


def bearer_of(block: SleepServe | SleepNotify | SleepRipple, table: str) -> str:
    """The bearer a block names: from its environment variable, the system keyring or the
    block itself (the first that is set); "" for none. A pointer to nothing is an error."""
    return _credential(block, table, "bearer_token")


def secret_of(block: SleepNotify | SleepRipple, table: str) -> str:
    """The key that signs what a block sends, found as :func:`bearer_of` finds a bearer."""
    return _credential(block, table, "secret")


def _credential(block: BaseModel, table: str, key: str) -> str:
    import os

    variable, entry = getattr(block, f"{key}_env"), getattr(block, f"{key}_keyring")
    if variable:
        value = os.environ.get(variable, "")
        if not value:
            raise HippoError(
                f"{table} {key}_env names {variable}, which is not set: "
                "export it, or change the setting"
            )
        return value
    if entry:
        service, _, name = entry.partition("/")
        try:
            import keyring  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            raise HippoError(
                f"{table} {key}_keyring needs the keyring package: pip install keyring"
            ) from None
        value = keyring.get_password(service, name) or ""
        if not value:
            raise HippoError(
                f"{table} {key}_keyring: the keyring has no password for service "
                f"{service!r}, name {name!r}"
            )
        return str(value)
    return str(getattr(block, key))


def load(workspace: Any, plugins: Any) -> tuple[SleepSettings, list[str]]:
    """The workspace's ``[sleep]`` settings and the lines naming keys that were ignored."""
    from hippo_core import settings_table

    settings, warnings = settings_table(workspace, plugins, "sleep")
    if not isinstance(settings, SleepSettings):
        raise HippoError("the [sleep] settings table is owned by another plugin")
    return settings, warnings
