"""JSON objects kept one per file (session records, proposals, receipts, reviews)."""

from __future__ import annotations

from hippo_core.base.errors import HippoError
from hippo_core.files import jsontext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike
    from pathlib import Path
    from typing import Any


def read_json_object(
    path: str | PathLike[str], shown: str, *, kind: str, missing: str = ""
) -> dict[str, Any]:
    """The JSON object in ``path``; anything else is one error naming ``shown``.

    ``kind`` names what the file should hold (``session record``); ``missing`` replaces
    the message for a file that does not exist.
    """
    try:
        with open(path, "rb") as handle:
            value = jsontext.loads(handle.read())
    except FileNotFoundError:
        raise HippoError(missing or f"{shown} does not exist") from None
    except (OSError, ValueError) as exc:
        raise HippoError(f"{shown}: not a readable {kind} ({exc})") from None
    if not isinstance(value, dict):
        raise HippoError(f"{shown}: not a {kind} (a JSON object is expected)")
    return value


def json_objects_in(directory: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every readable JSON object in ``directory``, by file name; others are skipped."""
    found = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            value = jsontext.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(value, dict):
            found.append((path, value))
    return found
