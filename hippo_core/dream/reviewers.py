"""The built-in reviewers: ``model`` (a second model run, the pass's persona as its system
prompt) and ``queue`` (the verdict waits for ``hippo review``); and :func:`review_chain`,
which asks a pass's reviewers in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.dream.model import ReviewRequest, Verdict

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins

#: How much of a reviewer's reply its review record keeps.
MAX_KEPT = 64 * 1024


class ModelReviewer:
    """Asks the model; a reply that is not the one JSON object counts as a rejection.

    A model that cannot answer raises :class:`~hippo_core.dream.model.ModelUnreachable`,
    which fails the run instead of counting rejections.
    """

    name = "model"

    def review(self, request: ReviewRequest) -> Verdict:
        from hippo_core.dream.review import parse_verdict, review_prompt

        if request.backend is None:
            raise ValueError("the model reviewer needs a model backend")
        reply = request.backend.complete(review_prompt(request), system=request.persona)
        if reply.too_large:
            return Verdict(self.name, "reject", "", reply.call, "the reply was too large to read")
        verdict, notes, problem = parse_verdict(reply.text)
        kept = reply.text[:MAX_KEPT]
        return Verdict(self.name, verdict, notes, reply.call, problem, kept)  # type: ignore[arg-type]


class QueueReviewer:
    """Leaves the proposal pending; a person or an agent decides with ``hippo review``."""

    name = "queue"

    def review(self, request: ReviewRequest) -> Verdict:
        return Verdict(self.name, "pending")


def review_chain(plugins: Plugins, names: Sequence[str], request: ReviewRequest) -> Verdict:
    """Ask each reviewer of ``names`` in order; each must confirm, and the first that does
    not (rejects, or leaves it ``pending``) ends the chain and decides. For a chain the
    verdict is the deciding one's, with every step in ``steps``.

    A reviewer that raises rejects the change, naming what it raised (it fails closed); a
    :class:`~hippo_core.base.errors.HippoError` (a model that cannot answer) fails the run, as
    for a single reviewer.
    """
    reviewers = plugins.reviewers()
    steps: list[Verdict] = []
    for name in names:
        try:
            verdict = reviewers[name].review(request)
        except HippoError:
            raise
        except Exception as exc:
            said = " ".join(str(exc).split())
            problem = f"the reviewer {name} raised {type(exc).__name__}" + (
                f": {said}" if said else ""
            )
            verdict = Verdict(name, "reject", problem=problem)
        steps.append(verdict)
        if verdict.verdict != "confirm":
            break
    return steps[-1] if len(names) == 1 else replace(steps[-1], steps=tuple(steps))
