"""Changes that go to a person, whatever a pass's reviewers say.

A dream's model reviewer is a semantic gate, and a model can be talked round: by a web
page an agent repeated, by a teammate's turn, by the change itself. So some changes are
never a model's to land (``risky_review = "person"``, the default): the pass's reviewers
still judge them, and one they confirm waits in ``hippo review`` for a person, with why.
A change is held when its new text brings, not already in the note:

- a URL;
- a command to run: a pipe into a shell or an interpreter, ``curl``, ``wget``, ``sudo``,
  ``rm -rf``, ``chmod +x``, ``eval``;
- a value shaped like a credential (what redaction would replace);

and whatever it brings when the note is the entry note or a required note (they reach every
session), or when its only evidence is an agent repeating what it read from outside the
project (a web page, an MCP tool, a file elsewhere).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo_core.dream.model import Proposal, TurnText
    from hippo_core.workspace.folder import Workspace

_URL = re.compile(r"\b(?:https?|ftp|file)://[^\s`'\"<>)]+|\bwww\.[^\s`'\"<>)]+", re.I)
_COMMAND = re.compile(
    r"\|\s*(?:sudo\s+)?(?:sh|bash|zsh|fish|python3?|perl|ruby|node|iex)\b"
    r"|\b(?:curl|wget|sudo|eval|Invoke-WebRequest|Invoke-Expression)\b"
    r"|\brm\s+-[a-z]*r[a-z]*f|\bchmod\s+\+x\b|\bbash\s+-c\b|\bpowershell\b",
    re.I,
)


def held_because(
    workspace: Workspace, proposal: Proposal, note_text: str, evidence: tuple[TurnText, ...]
) -> str:
    """Why ``proposal`` waits for a person (see the module), or "" when a pass's
    reviewers may land it. ``note_text``: the note as it is; ``evidence``: its turns."""
    from hippo_core.transcripts.privacy import redact

    settings = workspace.settings
    if settings.risky_review != "person":
        return ""
    reasons = []
    brought = [url for url in _URL.findall(proposal.new) if url not in note_text]
    if brought:
        reasons.append(f"its new text brings a URL ({brought[0]})")
    commands = [m.group(0).strip() for m in _COMMAND.finditer(proposal.new)]
    commands = [c for c in commands if c not in note_text]
    if commands:
        reasons.append(f"its new text brings a command to run ({commands[0]})")
    if redact(proposal.new).count > redact(proposal.old).count:
        reasons.append("its new text holds a value shaped like a credential")
    if proposal.note == settings.entry_note:
        reasons.append("it changes the entry note, which every session starts with")
    elif proposal.note in settings.required_notes:
        reasons.append("it changes a required note, which every session is pointed at")
    repeating = [turn for turn in evidence if turn.external]
    if evidence and len(repeating) == len(evidence):
        read = repeating[0].external or ()
        reasons.append(
            "its only evidence is an agent repeating what it read from outside the project"
            + (f" ({read[0]})" if read else "")
        )
    return "; ".join(reasons)
