"""The ``[triggers]`` table, validated (kept apart so a hook that finds no table never
imports pydantic)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Triggers(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    after_sessions: int = Field(
        0, ge=0, description="Dream once this many sessions ended since the last dream (0: off)."
    )
    on_compact: bool = Field(
        False, description="Dream when an agent compacts its context (its PreCompact hook)."
    )
