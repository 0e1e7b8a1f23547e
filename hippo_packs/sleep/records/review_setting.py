"""``[sleep] review``, watched: every change is kept, and one that lowers it waits for a person.

``.hippo/sleep/review.json`` (this machine's, git-ignored) keeps the value hippo last saw,
the value a person last acknowledged, and each change: from what to what, when, how
(``hippo config set``, with who ran it, or an edit of the settings file, a pull of a
teammate's included) and whether a person has acknowledged it. Any sleep command notices a
change when it opens the cycle; ``hippo config set`` records its own with who ran it.

A change nobody acknowledged shows in ``hippo doctor`` and as a warning line of the
context block, and one from ``"person"`` to ``"model"`` does not take effect until a person
acknowledges it (``hippo sleep acknowledge``, at a terminal, with the code): an agent that
rewrites the setting from its shell gains nothing, and everyone sees it tried. The first
value hippo sees in a workspace is taken as acknowledged: it is the workspace's as cloned
(the default, ``"model"``, needs no record).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import Workspace

FILE = "review.json"
#: What the setting is when the settings do not give it: no record is kept for it.
DEFAULT = "model"
ACKNOWLEDGE = "hippo sleep acknowledge"
EDITED = "an edit of .hippo/settings.toml"


@dataclass(frozen=True)
class InForce:
    value: str
    """``person`` or ``model``: what a review is held to now."""
    why: str
    """The setting or the change that makes it so, in words."""


def state(workspace: Workspace) -> dict[str, Any]:
    return store.records_one(store.folder(workspace, FILE)) or {}


def _save(workspace: Workspace, value: dict[str, Any]) -> None:
    store.write(store.folder(workspace, FILE), value)


def notice(workspace: Workspace, now: str) -> None:
    """Keep a change of ``[sleep] review`` (its value ``now``) since hippo last saw it (an
    edit of the file); the first value seen is the workspace's own, acknowledged."""
    kept = state(workspace)
    seen = kept.get("seen", DEFAULT)
    if seen == now:
        return  # the default, never changed, is the workspace's without a record
    if "seen" not in kept and now == "person":
        kept = {"seen": now, "acknowledged": {"value": now, "at": store.iso(store.now())}}
    else:
        _change(kept, str(seen), now, how=EDITED, by=None)
    _save(workspace, kept)


def config_set(workspace: Workspace, old: Any, new: Any, by: dict[str, Any] | None) -> None:
    """Keep a change ``hippo config set`` made, with who ran it."""
    kept = state(workspace)
    if str(old) == str(new) or not isinstance(new, str):
        return
    if "seen" not in kept:  # the value before it, never changed, is the workspace's own
        kept["acknowledged"] = {"value": str(old), "at": store.iso(store.now())}
    _change(kept, str(old), new, how="hippo config set", by=by)
    _save(workspace, kept)


def _change(kept: dict[str, Any], old: str, new: str, *, how: str, by: Any) -> None:
    change = {"from": old, "to": new, "at": store.iso(store.now()), "how": how}
    if by:
        change["by"] = by
    kept.setdefault("changes", []).append({**change, "acknowledged": False})
    kept["seen"] = new


def waiting(workspace: Workspace) -> list[dict[str, Any]]:
    """The changes no person has acknowledged, oldest first."""
    changes = state(workspace).get("changes")
    if not isinstance(changes, list):
        return []
    return [c for c in changes if isinstance(c, dict) and not c.get("acknowledged")]


def in_force(workspace: Workspace, now: str) -> InForce:
    """``person`` when the setting (its value ``now``) says so, or when it said so until a
    change nobody has acknowledged; else ``model``."""
    if now == "person":
        return InForce("person", '[sleep] review = "person"')
    acknowledged = (state(workspace).get("acknowledged") or {}).get("value")
    if acknowledged == "person" and waiting(workspace):
        return InForce(
            "person",
            '[sleep] review was "person", and no person has acknowledged its change: '
            f"`{ACKNOWLEDGE}`",
        )
    return InForce(now, f'[sleep] review = "{now}"')


def acknowledge(workspace: Workspace, value: str, by: dict[str, Any]) -> dict[str, Any]:
    """A person acknowledges the setting as it is (``value``): every change so far."""
    notice(workspace, value)
    kept = state(workspace)
    changes = [c for c in kept.get("changes") or [] if isinstance(c, dict)]
    for change in changes:
        change["acknowledged"] = True
    kept["changes"] = changes
    kept["acknowledged"] = {"value": value, "at": store.iso(store.now()), "by": by}
    kept["seen"] = value
    _save(workspace, kept)
    return {"ok": True, "review": value, "acknowledged": len(changes)}


def described(change: dict[str, Any]) -> str:
    """A change in words, for doctor and the block."""
    from hippo_core import describe_decider

    how = str(change.get("how") or EDITED)
    by = change.get("by")
    if isinstance(by, dict):
        how += f" by {describe_decider(by)}"
    return (
        f'[sleep] review changed from "{change.get("from")}" to "{change.get("to")}" at '
        f"{change.get('at')} ({how})"
    )
