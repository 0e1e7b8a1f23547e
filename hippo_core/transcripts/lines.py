"""Reading JSON Lines that an agent may still be writing.

Lines are split on ``b"\\n"`` only (never on U+2028 or the other breaks ``str.splitlines``
knows), read as a stream so a 10 MB line or a 200 MB file costs no more memory than its
largest line. A terminated line that is not JSON is corrupt: skipped and counted, never
fatal. An unterminated last line is used when it parses, but not committed, so the next
read sees it again, grown or finished.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from hippo_core.files import jsontext
from hippo_core.transcripts.model import Resume

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Record:
    """One JSON value read from a line, with the line's byte range.

    A line the reader's ``light`` test picked is not parsed: ``data`` is None and ``line``
    holds its bytes.
    """

    __slots__ = ("data", "end", "line", "start")

    def __init__(self, start: int, end: int, data: Any, line: bytes = b"") -> None:
        self.start, self.end, self.data, self.line = start, end, data, line


def loads(line: bytes) -> Any:
    """``json.loads`` that tolerates bytes that are not UTF-8 (replaced, not fatal)."""
    try:
        return jsontext.loads(line)
    except UnicodeDecodeError:
        return jsontext.loads(line.decode("utf-8", "replace"))


#: What reading a record of the wrong shape can raise in a source (a list where a string
#: belongs, a number too large for a date): the record is counted corrupt and passed over.
RECORD_ERRORS = (
    TypeError,
    ValueError,
    AttributeError,
    KeyError,
    IndexError,
    OverflowError,
    RecursionError,
)


class JsonLines:
    """Iterate the JSON records of a file from ``resume.offset``.

    ``wanted`` sees each raw line first; a line it rejects is passed over without being
    parsed (the cheap way past the large records a source never reads). A line ``light``
    accepts is handed over unparsed, for a source that needs only a byte or two of it (a
    large tool result whose only news is that it arrived); the source may set ``light``
    again between records (to parse what it would pass over while it waits for one). After
    iteration,
    ``committed`` is the offset past the last complete line and ``corrupt`` the number of
    corrupt lines past ``resume.seen``.
    """

    def __init__(
        self,
        path: Path,
        resume: Resume,
        *,
        wanted: Callable[[bytes], bool] | None = None,
        light: Callable[[bytes], bool] | None = None,
        lines: Iterable[bytes] | None = None,
    ) -> None:
        self.path = path
        self.resume = resume
        self.wanted = wanted
        self.light = light
        self.lines = lines
        self.committed = resume.offset
        self.corrupt = 0

    def misshapen(self, record: Record) -> None:
        """Count ``record`` corrupt: valid JSON that a source could not read (its fields of
        the wrong types), once, as a line that is not JSON is."""
        if record.start >= self.resume.seen:
            self.corrupt += 1

    def __iter__(self) -> Iterator[Record]:
        if self.lines is not None:
            yield from self._records(self.lines, self.resume.offset)
            return
        with self.path.open("rb") as file:
            file.seek(self.resume.offset)
            yield from self._records(file, self.resume.offset)

    def _records(self, lines: Iterable[bytes], position: int) -> Iterator[Record]:
        wanted = self.wanted
        for line in lines:
            start, position = position, position + len(line)
            terminated = line.endswith(b"\n")
            if terminated:
                self.committed = position
            if not line.strip() or (wanted is not None and not wanted(line)):
                continue
            light = self.light  # a source may change it between records
            if light is not None and light(line):
                yield Record(start, position, None, line)
                continue
            try:
                data = loads(line)
            except ValueError:
                if terminated and start >= self.resume.seen:
                    self.corrupt += 1
                continue
            yield Record(start, position, data)
