"""JSON through the standard library's :mod:`json`, strict: :func:`loads` raises ``ValueError``,
and nothing else, for any text that is not JSON (cut short, nested too deeply, or holding
the ``NaN`` and ``Infinity`` that :mod:`json` accepts). The standard library because, once
:mod:`re` is loaded (a console script imports it), :mod:`json` costs about 1 ms to import:
ujson costs more and reads text that is not JSON, orjson ten times more (it imports
dataclasses, uuid, datetime and json itself).
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


def _refuse(constant: str) -> NoReturn:
    raise ValueError(f"{constant} is not JSON")


# One decoder for every call: json.loads makes a new one whenever it is given an option.
_DECODER = json.JSONDecoder(parse_constant=_refuse)


def loads(text: str | bytes | bytearray) -> Any:
    """The value of the JSON ``text``; bytes are read as ``json.loads`` reads them (UTF-8,
    -16 or -32, past a byte-order mark). Text that is not JSON raises ``ValueError``
    (``UnicodeDecodeError`` for bytes of no such encoding), whatever is wrong with it."""
    if isinstance(text, str):
        if text.startswith("\ufeff"):  # json.loads's own refusal, in its words
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    else:
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def dumps(value: Any, *, indent: int | None = 2) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False)``; ``indent=None`` is the
    compact form, ``separators=(",", ":")``."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=indent)


def well_formed(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings made U+FFFD: JSON can escape one
    (``"\\ud800"``, as JavaScript writes it), UTF-8, and so every file and index, cannot."""
    if isinstance(value, str):
        if value.isascii():
            return value
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, dict):
        return {well_formed(key): well_formed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [well_formed(item) for item in value]
    return value
