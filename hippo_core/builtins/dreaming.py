"""Dreaming's built-in parts, registered through the same hooks a third party uses: the
readers, the kinds of change, the checks, the reviewers, the note's applier and the model
backends.

The parts live in :mod:`hippo_core.dream` and are imported only when a hook is called,
so loading this plugin costs nothing on an agent's hot path (``hippo context``).
"""

from __future__ import annotations

from collections.abc import Callable

from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.dream.model import Applier, ProposalKind, Reader, Reviewer, Validator
    from hippo_core.plugins.hookspecs import BackendFactory


@hookimpl
def hippo_register_readers(register: Callable[[str, Reader], None]) -> None:
    from hippo_core.dream import readers

    register("sessions", readers.Sessions())
    register("notes", readers.Notes())
    register("turns", readers.Turns())
    register("human_confirmed", readers.HumanConfirmed())


@hookimpl
def hippo_register_kinds(register: Callable[[ProposalKind], None]) -> None:
    from hippo_core.dream import kinds

    register(kinds.Replace())
    register(kinds.Append())
    register(kinds.Create())


@hookimpl
def hippo_register_validators(register: Callable[[Validator], None]) -> None:
    from hippo_core.dream import validators

    register(validators.NoSecrets())  # first: a later check's problem may quote the text
    register(validators.NotePath())
    register(validators.EvidenceExists())
    register(validators.KindChecks())
    register(validators.DrawnFromEvidence())
    register(validators.HumanConfirmed())


@hookimpl
def hippo_register_reviewers(register: Callable[[Reviewer], None]) -> None:
    from hippo_core.dream import reviewers

    register(reviewers.ModelReviewer())
    register(reviewers.QueueReviewer())


@hookimpl
def hippo_register_appliers(register: Callable[[Applier], None]) -> None:
    from hippo_core.dream.appliers import NoteWriter

    register(NoteWriter())


@hookimpl
def hippo_register_backends(register: Callable[[str, BackendFactory], None]) -> None:
    from hippo_core.dream.backends import CommandBackend, OpenAIBackend

    register("command", CommandBackend.from_workspace)
    register("openai", OpenAIBackend.from_workspace)
