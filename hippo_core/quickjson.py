"""JSON through the standard library's C accelerator, without importing :mod:`json`.

``json`` imports :mod:`re` and compiles seven patterns, which together cost an agent's hook
about as much as starting the interpreter; the C scanner and string encoder behind
``json.loads`` and ``json.dumps`` need neither. :func:`loads` and :func:`dumps` take only
what they handle with certainty and hand anything else (malformed text, a byte-order mark,
a value that is not plain JSON) to :mod:`json` itself, so the result is always json's:
``tests/test_quickjson.py`` checks it on generated values.
"""

from __future__ import annotations

import _json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"  # JSON's own, which str.strip() alone would exceed


class _Context:
    # What the scanner reads from json.JSONDecoder: its defaults.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


# typeshed types the argument as the scanner class; any object with these attributes works.
_scan = _json.make_scanner(_Context())  # type: ignore[arg-type]


def loads(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)``, for ``str`` or bytes (read as UTF-8 here; any other encoding,
    or a byte-order mark, is json's to read). A value nested too deeply for the parser is a
    ``ValueError`` like any other text that is not JSON, never a ``RecursionError``."""
    try:
        return _loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _loads(text: str | bytes | bytearray) -> Any:
    given = text
    if not isinstance(text, str):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return _stdlib(given)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if text.startswith("\ufeff") or "\0" in text[:4]:  # a mark, or UTF-16/32 read as UTF-8
        return _stdlib(given)
    try:
        value, end = _scan(text, start)
    except (StopIteration, ValueError):
        return _stdlib(given)
    if text[end:].strip(_WHITESPACE):
        return _stdlib(given)
    return value


def _stdlib(text: str | bytes | bytearray) -> Any:
    import json

    return json.loads(text)


def dumps(value: Any, *, indent: int | None = 2) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False)``; ``indent=None`` is the
    compact form, ``separators=(",", ":")``."""
    chunks: list[str] = []
    try:
        if indent is None:
            _write(value, chunks, "", "", 0, ":")
        else:
            _write(value, chunks, "\n", " " * indent, 0, ": ")
    except _NotPlain:
        import json

        if indent is None:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        return json.dumps(value, indent=indent, ensure_ascii=False)
    return "".join(chunks)


class _NotPlain(Exception):
    """A value json writes in a way of its own (or refuses): left to it."""


_string = _json.encode_basestring


def _write(value: Any, out: list[str], newline: str, step: str, depth: int, colon: str) -> None:
    kind = type(value)
    if kind is str:
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float:
        if value != value or value in (float("inf"), -float("inf")):
            raise _NotPlain
        out.append(float.__repr__(value))
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        if depth > 100:
            raise _NotPlain  # json's own recursion limit and cycle check decide
        inner = newline + step * (depth + 1)
        out.append("[")
        for at, item in enumerate(value):
            out.append(inner if at == 0 else "," + inner)
            _write(item, out, newline, step, depth + 1, colon)
        out.append(newline + step * depth + "]")
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        if depth > 100:
            raise _NotPlain
        inner = newline + step * (depth + 1)
        out.append("{")
        for at, (key, item) in enumerate(value.items()):
            if type(key) is not str:
                raise _NotPlain
            out.append(inner if at == 0 else "," + inner)
            out.append(_string(key))
            out.append(colon)
            _write(item, out, newline, step, depth + 1, colon)
        out.append(newline + step * depth + "}")
    else:
        raise _NotPlain


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
