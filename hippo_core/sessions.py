"""Session records: ``.hippo/sessions/<id>.json``, one per agent session.

Ids become file names, so an id must match ``[A-Za-z0-9_-]{1,128}``; any other id is
replaced by ``h-`` and the first 32 hex digits of its SHA-256, the same every time.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from hippo_core.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.workspace import Workspace

_VALID_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def session_id(raw: str) -> str:
    """``raw`` when it is a valid id, else its deterministic hashed replacement."""
    if _VALID_ID.fullmatch(raw):
        return raw
    return "h-" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def read_record(workspace: Workspace, raw_id: str) -> dict[str, Any]:
    """The record of session ``raw_id``; a missing or unreadable record is an error."""
    sid = session_id(raw_id)
    path = workspace.sessions_dir / f"{sid}.json"
    shown = workspace.relative(path)
    try:
        record = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise HippoError(f"session {raw_id!r} not found: there is no {shown}") from None
    except (OSError, ValueError) as exc:
        raise HippoError(f"{shown}: not a readable session record ({exc})") from None
    if not isinstance(record, dict):
        raise HippoError(f"{shown}: not a session record (a JSON object is expected)")
    return record
