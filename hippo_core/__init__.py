"""hippo: memory with a review trail for coding agents.

The public API for plugins and scripts. Plugins mark their hook functions with
:data:`hookimpl`; the hooks are documented in :mod:`hippo_core.hookspecs`.
"""

__version__ = "0.1.0"

from hippo_core.context import ContextBlock, ContextPart, OverBudget, build_context
from hippo_core.errors import HippoError, UsageError
from hippo_core.findings import Finding
from hippo_core.notes.note import Note
from hippo_core.plugins import hookimpl, load_plugins
from hippo_core.settings import Settings
from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource, Turn
from hippo_core.workspace import Workspace

__all__ = [
    "ContextBlock",
    "ContextPart",
    "Finding",
    "HippoError",
    "Note",
    "OverBudget",
    "Parsed",
    "Resume",
    "SessionInfo",
    "Settings",
    "TranscriptSource",
    "Turn",
    "UsageError",
    "Workspace",
    "__version__",
    "build_context",
    "hookimpl",
    "load_plugins",
]
