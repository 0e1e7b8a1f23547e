"""The parts of the context block, and the rule that fits them to a byte budget.

Required parts always go in, and when they alone exceed the budget the block is refused.
An optional part goes in only whole and only if it fits; what is left out is reported.
"""

from __future__ import annotations

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.base.records import Record
from hippo_core.base.terminal import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


class ContextPart:
    """One part of the context block; its text is whole lines, each ending in a newline, or a
    function that makes them.

    ``text`` is the text, or a function that makes it: a part the caller does not need (the
    session-start hook prints only required parts) is then never computed.
    """

    __slots__ = ("_make", "_text", "name", "order", "required")

    def __init__(
        self, name: str, text: str | Callable[[], str], required: bool, order: int
    ) -> None:
        self.name = name
        self.required = required
        self.order = order
        self._text: str | None = printable(text) if isinstance(text, str) else None
        self._make: Callable[[], str] | None = None if isinstance(text, str) else text

    @property
    def text(self) -> str:
        """The part's text as the block holds it: with nothing a terminal obeys and
        nothing hidden (:func:`~hippo_core.base.terminal.printable`), whoever made it."""
        if self._text is None:
            assert self._make is not None
            self._text = printable(self._make())
        return self._text

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))

    def __repr__(self) -> str:
        kind = "required" if self.required else "optional"
        return f"ContextPart({self.name!r}, {kind}, order={self.order})"


class Omission(Record):
    """An optional part that did not fit: printed as ``omitted: <part> (<bytes>)``."""

    __slots__ = ("name", "size")
    name: str
    size: int

    def __init__(self, name: str, size: int) -> None:
        self._set(name=name, size=size)

    def render(self) -> str:
        return f"omitted: {self.name} ({self.size})"


class ContextBlock(Record):
    """The block as built: its text, the parts in it and the parts left out."""

    __slots__ = ("text", "budget", "parts", "omitted")
    text: str
    budget: int
    parts: tuple[ContextPart, ...]
    omitted: tuple[Omission, ...]

    def __init__(
        self,
        text: str,
        budget: int,
        parts: tuple[ContextPart, ...] = (),
        omitted: tuple[Omission, ...] = (),
    ) -> None:
        self._set(text=text, budget=budget, parts=parts, omitted=omitted)

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
