"""hippo: memory with a review trail for coding agents.

The public API for plugins and scripts. Plugins mark their hook functions with
:data:`hookimpl`; the hooks are documented in :mod:`hippo_core.hookspecs`.
"""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from hippo_core.context import ContextBlock, ContextPart, OverBudget, build_context
from hippo_core.errors import HippoError, UsageError
from hippo_core.findings import Finding
from hippo_core.notes.note import Note
from hippo_core.plugins import hookimpl, load_plugins
from hippo_core.settings import Settings
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource, Turn
from hippo_core.workspace import Workspace

if TYPE_CHECKING:
    from hippo_core.dream.model import (
        Call,
        CheckContext,
        Chunk,
        Event,
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

#: Dreaming's types, imported on first use: ``hippo context`` never needs them.
_DREAM_TYPES = frozenset(
    {
        "Call",
        "CheckContext",
        "Chunk",
        "Event",
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
    }
)


def __getattr__(name: str) -> Any:
    if name in _DREAM_TYPES:
        from hippo_core.dream import model

        return getattr(model, name)
    raise AttributeError(f"module 'hippo_core' has no attribute {name!r}")


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
