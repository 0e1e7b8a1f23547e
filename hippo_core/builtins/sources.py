"""The built-in transcript sources, one per agent, registered through the hook a
third-party source uses too.

The sources live in :mod:`hippo_core.transcripts.sources` and are imported only when the
hook is called (by ``hippo ingest``), never on an agent's hot path.
"""

from __future__ import annotations

from collections.abc import Callable

from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.transcripts.model import TranscriptSource


@hookimpl
def hippo_register_sources(register: Callable[[TranscriptSource], None]) -> None:
    from hippo_core.transcripts.sources import (
        claude_code,
        codex,
        command_code,
        dsh,
        gemini,
        muse,
        opencode,
    )

    register(claude_code.ClaudeCodeSource())
    register(codex.CodexSource())
    register(opencode.OpenCodeSource())
    register(command_code.CommandCodeSource())
    register(dsh.DshSource())
    register(gemini.GeminiSource())
    register(muse.MuseSource())
