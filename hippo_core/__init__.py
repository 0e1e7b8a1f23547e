"""hippo: memory with a review trail for coding agents.

The public API for plugins and scripts. Plugins mark their hook functions with
:data:`hookimpl`; the hooks are documented in :mod:`hippo_core.hookspecs`.

Every name below is imported on first use (a module ``__getattr__``), so ``import
hippo_core`` costs next to nothing: an agent's hooks import the package on every prompt.
"""

from __future__ import annotations

from hippo_core.version import __version__

# Not typing.TYPE_CHECKING: importing typing costs the agent's hooks a few milliseconds.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hippo_core.budget import ContextBlock, ContextPart, OverBudget
    from hippo_core.context import build_context
    from hippo_core.dream.model import (
        Call,
        CheckContext,
        Chunk,
        Evidence,
        Item,
        ModelBackend,
        ModelUnreachable,
        Pass,
        Proposal,
        ProposalKind,
        ReadContext,
        Reader,
        Reply,
        Reviewer,
        ReviewRequest,
        SessionView,
        TurnText,
        Validator,
        Verdict,
    )
    from hippo_core.errors import HippoError, UsageError
    from hippo_core.events import Event
    from hippo_core.findings import Finding
    from hippo_core.notes.note import Note
    from hippo_core.plugins import hookimpl, load_plugins
    from hippo_core.settings import Settings
    from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource, Turn
    from hippo_core.workspace import Workspace

#: Where each public name lives.
_HOMES = {
    "hippo_core.budget": ("ContextBlock", "ContextPart", "OverBudget"),
    "hippo_core.context": ("build_context",),
    "hippo_core.events": ("Event",),
    "hippo_core.dream.model": (
        "Call",
        "CheckContext",
        "Chunk",
        "Evidence",
        "Item",
        "ModelBackend",
        "ModelUnreachable",
        "Pass",
        "Proposal",
        "ProposalKind",
        "ReadContext",
        "Reader",
        "Reply",
        "Reviewer",
        "ReviewRequest",
        "SessionView",
        "TurnText",
        "Validator",
        "Verdict",
    ),
    "hippo_core.errors": ("HippoError", "UsageError"),
    "hippo_core.findings": ("Finding",),
    "hippo_core.notes.note": ("Note",),
    "hippo_core.plugins": ("hookimpl", "load_plugins"),
    "hippo_core.settings": ("Settings",),
    "hippo_core.transcripts.model": ("Parsed", "Resume", "SessionInfo", "TranscriptSource", "Turn"),
    "hippo_core.workspace": ("Workspace",),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'hippo_core' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


__all__ = [
    "Call",
    "CheckContext",
    "Chunk",
    "ContextBlock",
    "ContextPart",
    "Event",
    "Evidence",
    "Finding",
    "HippoError",
    "Item",
    "ModelBackend",
    "ModelUnreachable",
    "Note",
    "OverBudget",
    "Parsed",
    "Pass",
    "Proposal",
    "ProposalKind",
    "ReadContext",
    "Reader",
    "Reply",
    "Resume",
    "ReviewRequest",
    "Reviewer",
    "SessionInfo",
    "SessionView",
    "Settings",
    "TranscriptSource",
    "Turn",
    "TurnText",
    "UsageError",
    "Validator",
    "Verdict",
    "Workspace",
    "__version__",
    "build_context",
    "hookimpl",
    "load_plugins",
]
