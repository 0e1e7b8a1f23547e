"""What ``hippo_event`` plugins hear (kept light: the session hooks send events too)."""

from __future__ import annotations

from hippo_core.base.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Event(Record):
    """Something that happened, for ``hippo_event`` plugins.

    A dream's and a review's: ``chunk-started``, ``proposal``, ``invalid``, ``verdict``,
    ``applying``, ``applied``, ``not-applied`` (confirmed, but the note changed or the edit
    no longer fits), ``chunk-done``, ``dream-finished``, ``reverted``. A session's:
    ``session-ended`` (its hook, ``hippo session end`` or the MCP tool ended it) and
    ``compacting`` (the agent is about to compact its context). A plugin sends its own
    under its name: the sleep pack's are ``sleep.<event>`` (``sleep.draft_submitted`` ...).
    """

    __slots__ = ("name", "data")
    name: str
    data: dict[str, Any]

    def __init__(self, name: str, data: dict[str, Any] | None = None) -> None:
        self._set(name=name, data={} if data is None else data)
