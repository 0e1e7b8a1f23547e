"""Small value classes for the agent's hot path and the ingest, without :mod:`dataclasses`.

``dataclasses`` imports :mod:`inspect`, which costs an agent's hook about the interpreter's
start-up again. The value classes the hooks, ``hippo context`` and ``hippo ingest`` use
(settings, the block, plugin records, sessions and turns) derive from :class:`Record`
(frozen) or :class:`Struct` (changed as it is built) instead: equality, a repr and
``as_dict()`` from the class's ``__slots__``, its fields in order.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Record:
    """A frozen value: its fields are its ``__slots__``, set once by ``__init__``."""

    __slots__: tuple[str, ...] = ()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot set {name!r}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, nested records as dictionaries too."""
        return {
            name: value.as_dict() if isinstance(value, Record) else value
            for name, value in zip(self.__slots__, self._values(), strict=True)
        }


class Struct(Record):
    """A :class:`Record` whose fields may be set again (a turn being built); not hashable."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
