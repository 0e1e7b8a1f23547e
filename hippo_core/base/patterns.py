"""Regular expressions compiled on first use.

Compiling a pattern costs about a tenth of a millisecond, and a module that holds twenty
costs every command that imports it, whether or not it reads anything: ``hippo ingest`` with
nothing new imports every transcript source, an agent's first prompt the redaction rules.
A :class:`Lazy` pattern is compiled when it is first used, once.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


class Lazy:
    """A pattern that ``re.compile(source, flags)`` makes when it is first used."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str | bytes, flags: int = 0) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[Any] | None = None

    @property
    def compiled(self) -> re.Pattern[Any]:
        """The compiled pattern (bind its methods in a loop that runs per line)."""
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def search(self, text: Any, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[Any] | None:
        return self.compiled.search(text, pos, endpos)

    def match(self, text: Any, pos: int = 0) -> re.Match[Any] | None:
        return self.compiled.match(text, pos)

    def fullmatch(self, text: Any) -> re.Match[Any] | None:
        return self.compiled.fullmatch(text)

    def finditer(self, text: Any) -> Iterator[re.Match[Any]]:
        return self.compiled.finditer(text)

    def findall(self, text: Any) -> list[Any]:
        return self.compiled.findall(text)

    def sub(self, replacement: Any | Callable[[re.Match[Any]], Any], text: Any) -> Any:
        return self.compiled.sub(replacement, text)

    def subn(self, replacement: Any, text: Any) -> tuple[Any, int]:
        return self.compiled.subn(replacement, text)
