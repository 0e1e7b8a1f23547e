"""The context block: parts from every plugin, in order, fitted to a byte budget.

Required parts always go in, and when they alone exceed the budget the block is refused.
An optional part goes in only whole and only if it fits; what is left out is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hippo_core.errors import HippoError, UsageError

if TYPE_CHECKING:
    from hippo_core.plugins import Plugins
    from hippo_core.workspace import Workspace


@dataclass(frozen=True)
class ContextPart:
    """One part of the block. ``text`` is whole lines, each ending in a newline."""

    name: str
    text: str
    required: bool
    order: int

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


@dataclass(frozen=True)
class Omission:
    """An optional part that did not fit: printed as ``omitted: <part> (<bytes>)``."""

    name: str
    size: int

    def render(self) -> str:
        return f"omitted: {self.name} ({self.size})"


@dataclass(frozen=True)
class ContextBlock:
    """The block as built: its text, the parts in it and the parts left out."""

    text: str
    budget: int
    parts: tuple[ContextPart, ...] = ()
    omitted: tuple[Omission, ...] = field(default=())

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


class OverBudget(HippoError):
    """The required parts alone do not fit the budget."""

    def __init__(self, required: int, budget: int) -> None:
        super().__init__(f"context over budget: {required} > {budget}")
        self.required = required
        self.budget = budget


def check_budget(budget: int) -> int:
    """A budget must be a positive number of bytes."""
    if budget <= 0:
        raise UsageError(f"--budget must be a positive number of bytes, not {budget}")
    return budget


def fit(parts: list[ContextPart], budget: int) -> ContextBlock:
    """Fit ``parts`` to ``budget``: every required part, then each optional one that fits."""
    parts = sorted((p for p in parts if p.text), key=lambda p: p.order)
    required = sum(p.size for p in parts if p.required)
    if required > budget:
        raise OverBudget(required, budget)
    used = required
    kept: list[ContextPart] = []
    omitted: list[Omission] = []
    for part in parts:
        if part.required:
            kept.append(part)
        elif used + part.size <= budget:
            kept.append(part)
            used += part.size
        else:
            omitted.append(Omission(part.name, part.size))
    text = "".join(p.text for p in kept)
    return ContextBlock(text, budget, tuple(kept), tuple(omitted))


def build_context(
    workspace: Workspace,
    *,
    task: str | None = None,
    session: str | None = None,
    budget: int | None = None,
    plugins: Plugins | None = None,
) -> ContextBlock:
    """Build the block for a session: the parts every plugin gives, fitted to the budget."""
    from hippo_core.plugins import load_plugins

    budget = check_budget(workspace.settings.budget_bytes if budget is None else budget)
    plugins = plugins or load_plugins()
    return fit(plugins.context_parts(workspace, session, task), budget)
