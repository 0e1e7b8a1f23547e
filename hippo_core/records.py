"""Small frozen value classes for the agent's hot path, without :mod:`dataclasses`.

``dataclasses`` imports :mod:`inspect`, which costs an agent's hook about the interpreter's
start-up again. The few value classes the hooks and ``hippo context`` use (settings, the
block, plugin records) derive from :class:`Record` instead: equality, hashing, a repr and
:meth:`Record.as_dict` from the class's ``__slots__``; assignment after ``__init__`` refused.
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
