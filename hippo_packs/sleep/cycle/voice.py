"""The voice card: who the memories belong to, in the owner's words, first in every prompt
the drafting model reads.

Off unless ``[sleep.voice] enabled = true``: then nothing is written and no prompt changes.
On, the card is set (by a person with ``hippo voice set``, by the main model through the
``set_voice_card`` tool or ``PUT /voice``) with why it changed; each change is a version
(the last 200 are kept in ``.hippo/sleep/voice.json``, written whole and atomically), and
each draft records the version it was written under (``extra.model_voice``). The card and
its ``why`` are redacted before anything is kept, whichever way they came.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, redact_text
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle

#: How many versions ``voice.json`` keeps, and how much of each ``why``.
KEPT, WHY_CHARS = 200, 500
OFF = (
    "the voice card is off: opt in with enabled = true under [sleep.voice] in .hippo/settings.toml"
)


class Off(HippoError):
    """The voice card is off: nothing to show or set."""


def versions(cycle: Cycle) -> list[dict[str, Any]]:
    """Every kept version, oldest first; [] with no card. A file that cannot be read is an
    error, and is never written over."""
    path = store.folder(cycle.workspace, "voice.json")
    if not path.exists():
        return []
    try:
        found = store.read(path, cycle.workspace, "voice card")
    except HippoError as exc:
        raise HippoError(f"{exc}; the voice card is unreadable, and is left as it is") from None
    kept = found.get("versions")
    if not isinstance(kept, list) or not all(isinstance(v, dict) for v in kept):
        shown = cycle.workspace.relative(path)
        raise HippoError(f"{shown}: the voice card is unreadable (no list of versions)")
    return kept


def current(cycle: Cycle) -> dict[str, Any] | None:
    """The card in use: its last version, or None when it is off or was never set."""
    if not cycle.settings.voice.enabled:
        return None
    found = versions(cycle)
    return found[-1] if found else None


def show(cycle: Cycle) -> dict[str, Any]:
    """The card as the tools and ``GET /voice`` give it; ``ok: false`` when it is off."""
    if not cycle.settings.voice.enabled:
        return {"ok": False, "error": OFF}
    card = current(cycle)
    return {
        "ok": True,
        "version": card["version"] if card else 0,
        "text": card["text"] if card else None,
        "max_chars": cycle.settings.voice.max_chars,
    }


def set_card(
    cycle: Cycle, text: str, why: str, *, by: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Make ``text`` the card, a new version unless it is the card already; ``by`` is who
    sets it (:func:`hippo_core.acting_now` when not given), kept with the version: no
    draft written under it may be approved by the same session or client."""
    from hippo_core import acting_now

    settings = cycle.settings.voice
    if not settings.enabled:
        raise Off(OFF)
    text = redact_text(text.strip())
    if not text:
        raise HippoError("an empty card: say who these memories belong to")
    if len(text) > settings.max_chars:
        raise HippoError(
            f"the card is {len(text)} characters, capped at {settings.max_chars} "
            "(voice.max_chars). Trim it"
        )
    found = versions(cycle)
    if found and found[-1]["text"] == text:
        return {"ok": True, "changed": False, "version": found[-1]["version"]}
    version = (found[-1]["version"] if found else 0) + 1
    record = {"version": version, "text": text, "why": redact_text(why.strip())[:WHY_CHARS]}
    author = by if by is not None else acting_now(cycle.workspace, "set_voice_card")
    found.append({**record, "at": store.iso(store.now()), "by": author})
    store.write(store.folder(cycle.workspace, "voice.json"), {"versions": found[-KEPT:]})
    return {"ok": True, "changed": True, "version": version}


def history(cycle: Cycle) -> list[dict[str, Any]]:
    """Every kept version, newest first."""
    if not cycle.settings.voice.enabled:
        raise Off(OFF)
    return list(reversed(versions(cycle)))


def block(cycle: Cycle) -> tuple[str, int]:
    """What goes first in a drafting prompt, and the version it is; ("", 0) for none."""
    card = current(cycle)
    if card is None:
        return "", 0
    text = (
        "These memories belong to someone, and this is how they want them kept, in their "
        f"own words (voice card version {card['version']}):\n\n{card['text']}\n\n---\n\n"
    )
    return text, int(card["version"])
