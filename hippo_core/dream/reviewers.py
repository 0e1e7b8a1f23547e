"""The built-in reviewers: ``model`` (a second model run, the pass's persona as its system
prompt) and ``queue`` (the verdict waits for ``hippo review``)."""

from __future__ import annotations

from hippo_core.dream.model import ReviewRequest, Verdict

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
