# Hookspecs have no body: pluggy calls the implementations, never these.
# mypy: disable-error-code="empty-body"
"""Every hook hippo calls. Built-in features implement them exactly as third parties do.

A plugin is a module or object with functions marked ``@hippo_core.hookimpl`` whose names
are the hooks below; a distribution offers one through an entry point in the group ``hippo``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from hippo_core.context import ContextPart
    from hippo_core.findings import Finding
    from hippo_core.notes.note import Note
    from hippo_core.transcripts.model import TranscriptSource
    from hippo_core.workspace import Workspace

hookspec = pluggy.HookspecMarker("hippo")


@hookspec
def hippo_register_packs(register: Callable[[str, Path], None]) -> None:
    """Register packs this plugin ships, as ``register(name, directory)``.

    Called once when hippo needs the list of packs it can install (``hippo init`` takes the
    one named ``core`` from here). The directory holds ``passes/``, ``prompts/`` and
    ``personas/``. Returns nothing.
    """


@hookspec
def hippo_register_sources(register: Callable[[TranscriptSource], None]) -> None:
    """Register transcript sources, as ``register(source)``.

    A source (:class:`~hippo_core.transcripts.model.TranscriptSource`) reads one agent's
    transcripts: it names its tool, finds its files and parses them into sessions and
    turns. Called by ``hippo ingest``; the first source registered under a name wins, so a
    plugin cannot silently replace a built-in one. Returns nothing.
    """


@hookspec
def hippo_context_parts(
    workspace: Workspace, session: str | None, task: str | None
) -> list[ContextPart]:
    """Contribute parts of the context block for a session starting in ``workspace``.

    Called by ``hippo context`` (and the session hooks) with the session id and the task
    given, each possibly None. Returns a list of :class:`~hippo_core.context.ContextPart`;
    hippo sorts every plugin's parts by ``order`` and fits the optional ones to the budget.
    A plugin that has nothing to say returns an empty list.
    """


@hookspec
def hippo_lint_note(workspace: Workspace, note: Note) -> list[Finding]:
    """Check one note; return its :class:`~hippo_core.findings.Finding` list.

    Called for every note by ``hippo notes lint``, ``hippo doctor`` and the linter counts of
    ``hippo context``. ``workspace.notes`` resolves links. Findings name the note's
    workspace-relative path in ``where``.
    """


@hookspec
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    """Check the workspace as a whole; return findings for ``hippo doctor``.

    Called once per ``hippo doctor`` run. An ``error`` finding makes doctor exit 1; warnings
    and ``info`` lines are shown but do not.
    """
