"""dsh: an agent hippo reads the transcripts of, and installs nothing for (it has no
hooks hippo knows of)."""

from __future__ import annotations

from hippo_core.plugins.agent import Agent
from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hippo_core.transcripts.model import TranscriptSource


def _sources() -> list[TranscriptSource]:
    from hippo_core.transcripts.sources.dsh import DshSource

    return [DshSource()]


AGENT = Agent("dsh", sources=_sources)


@hookimpl
def hippo_register_agents(register: Callable[[Agent], None]) -> None:
    register(AGENT)
