"""The public API: what `hippo_core` exports is deliberate."""

from __future__ import annotations

import hippo_core


def test_all_is_the_public_api():
    assert sorted(hippo_core.__all__) == [
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
    for name in hippo_core.__all__:
        assert getattr(hippo_core, name) is not None
