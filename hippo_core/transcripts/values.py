"""Reading values out of records whose shape is not guaranteed.

Agents change their formats without notice, so a source takes every field as it comes:
a value of the wrong type reads as empty, never as an exception.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hippo_core.files import jsontext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    """``value`` if it is a string, else ``""``."""
    return value if isinstance(value, str) else ""


def json_object(value: Any) -> dict[str, Any]:
    """A JSON object, or a string holding one (tool arguments are often kept as text)."""
    if isinstance(value, str):
        try:
            value = jsontext.loads(value)
        except ValueError:
            return {}
    return as_dict(value)


def iso_from_epoch(value: Any, per_second: int = 1000) -> str | None:
    """An epoch count (milliseconds by default) as an ISO 8601 UTC time, or None.

    Milliseconds give ``2026-11-30T04:40:30.123Z``; finer units keep microseconds.
    """
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        moment = datetime.fromtimestamp(value / per_second, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    timespec = "milliseconds" if per_second <= 1000 else "microseconds"
    return moment.isoformat(timespec=timespec).replace("+00:00", "Z")
