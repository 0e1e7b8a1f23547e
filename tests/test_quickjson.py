"""`hippo_core.quickjson` is `json` without importing it: the same values, the same errors."""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hippo_core import quickjson

SETTINGS = settings(max_examples=200, deadline=None)

NAN, INF = float("nan"), float("inf")

# -- strategies ----------------------------------------------------------------------------

#: Characters of every kind: control characters, non-ASCII, astral, and lone surrogates
#: (which a Python str holds and json writes and reads back).
CHARS = (
    st.characters()
    | st.characters(max_codepoint=0x1F)
    | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
    | st.sampled_from(list('"\\/\x7f\x85\xa0\u2028\u2029\ufeff\ufffféß\U0001f600'))
)
TEXT = st.text(CHARS, max_size=12)
INTS = (
    st.integers()
    | st.integers(min_value=-(10**300), max_value=10**300)
    | st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 2**64, 10**4299])
)
FLOATS = st.floats() | st.sampled_from(
    [0.0, -0.0, 1e300, -1e300, 1e16, 5e-324, 2.2250738585072014e-308, NAN, INF, -INF]
)
SCALARS = st.none() | st.booleans() | INTS | FLOATS | TEXT
#: What json.loads can give: None, bools, ints, floats, str, lists and dicts with str keys.
JSON = st.recursive(
    SCALARS,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(TEXT, kids, max_size=4),
    max_leaves=20,
)


class Str(str):
    pass


class Int(int):
    pass


class Float(float):
    pass


class Color(enum.IntEnum):
    RED = 1


class Mapping(dict):  # type: ignore[type-arg]
    pass


class Sequence(list):  # type: ignore[type-arg]
    pass


#: Keys json.dumps takes (str, int, float, bool, None), subclasses, and one it refuses.
KEYS = (
    TEXT
    | INTS
    | FLOATS
    | st.booleans()
    | st.none()
    | TEXT.map(Str)
    | st.just((1, 2))
    | st.just(Color.RED)
)
ODD_SCALARS = (
    TEXT.map(Str)
    | st.integers().map(Int)
    | st.floats().map(Float)
    | st.just(Color.RED)
    | st.just({1, 2})
    | st.just(b"bytes")
)
#: What a caller may hand json.dumps: plain JSON, tuples, non-str keys, subclasses, and a few
#: values json refuses (a set, bytes, a tuple key), whose error must be json's too.
VALUES = st.recursive(
    SCALARS | ODD_SCALARS,
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.lists(kids, max_size=4).map(tuple)
        | st.lists(kids, max_size=3).map(Sequence)
        | st.dictionaries(TEXT, kids, max_size=4)
        | st.dictionaries(KEYS, kids, max_size=4)
        | st.dictionaries(TEXT, kids, max_size=3).map(Mapping)
    ),
    max_leaves=20,
)
INDENTS = st.sampled_from([None, 0, 1, 2, 4])  # None: the compact form

#: JSON's own whitespace, other Unicode spaces str.strip() would take, a BOM, NUL, garbage.
AROUND = st.text(
    st.sampled_from(list(" \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2000\u2028\u3000\ufeff\x00x,]}")),
    max_size=4,
)
#: Text made of JSON's punctuation and words, so that much of it is nearly JSON.
JSONISH = st.text(st.sampled_from(list('{}[]":,-+.0123456789eEtruefalsnulINfiy \t\n\r\\\xa0')))


# -- comparing -----------------------------------------------------------------------------


def same(a: object, b: object) -> bool:
    """Equal and of the same types all the way down; NaN equals NaN, -0.0 is not 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    return a == b


def label(value: object) -> str:
    """A short test id: repr cut to 40 characters (a 4,301-digit int has no repr)."""
    try:
        text = repr(value)
    except ValueError:
        text = f"<{type(value).__name__} too long to print>"
    return text if len(text) <= 40 else f"{text[:37]}..."


def outcome(call: Callable[[], object]) -> tuple[object, ...]:
    try:
        return ("value", call())
    except Exception as exc:
        return ("raised", type(exc), str(exc))


def assert_loads_like_json(text: str | bytes) -> None:
    expected = outcome(lambda: json.loads(text))
    got = outcome(lambda: quickjson.loads(text))
    if expected[0] == "value" and got[0] == "value":
        assert same(got[1], expected[1]), (text, got, expected)
    elif expected[:2] == ("raised", RecursionError):  # too deep: hippo's is a ValueError
        assert got == ("raised", ValueError, "JSON nested too deeply"), text
    else:
        assert got == expected, text


def assert_dumps_like_json(value: object, indent: int | None = 2) -> None:
    if indent is None:  # quickjson's compact form
        expected = outcome(lambda: json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    else:
        expected = outcome(lambda: json.dumps(value, indent=indent, ensure_ascii=False))
    got = outcome(lambda: quickjson.dumps(value, indent=indent))
    assert got == expected, value


# -- loads ---------------------------------------------------------------------------------


@SETTINGS
@given(JSON, st.booleans(), st.sampled_from([None, 0, 2]))
def test_loads_reads_what_json_wrote(value: object, ensure_ascii: bool, indent: int | None) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    assert_loads_like_json(text)
    assert_loads_like_json(text.encode("utf-8", "surrogatepass"))
    assert same(quickjson.loads(text), json.loads(text))


@SETTINGS
@given(JSON, AROUND, AROUND)
def test_loads_of_json_with_anything_around_it(value: object, before: str, after: str) -> None:
    text = before + json.dumps(value, ensure_ascii=False) + after
    assert_loads_like_json(text)
    assert_loads_like_json(text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(st.text(CHARS) | JSONISH)
def test_loads_of_any_text(text: str) -> None:
    assert_loads_like_json(text)
    assert_loads_like_json(text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(st.binary(max_size=16) | JSONISH.map(str.encode))
@example(b"\xef\xbb\xbf1")
def test_loads_of_any_bytes(data: bytes) -> None:
    assert_loads_like_json(data)


MALFORMED = [
    "",
    " ",
    " \t\n\r",
    "-",
    "--1",
    "1 2",
    "1x",
    "[1] [2]",
    "[1,]",
    '{"a": 1,}',
    '{"a" 1}',
    "{1: 2}",
    "[",
    "tru",
    "01",
    "1.",
    ".5",
    "+1",
    "nan",
    "Infinityx",
    '"abc',
    '"\\x"',
    '"\\u12"',
    '"\t"',
    "'a'",
    "\ufeff",
    "\ufeff1",
    "\ufeff \t\n\r1",
    "\xa01",
    "1\xa0",
    "\u20281",
    "1\u3000",
    "\x0b1",
    "1\x0c",
    "1\x00",
    "9" * 4301,
    "[" * 100_000 + "]" * 100_000,
]
VALID = [
    " \t\n\r1 \t\n\r",
    "-0",
    "-0.0",
    "1e400",
    "-1e400",
    "NaN",
    "-Infinity",
    '"\\ud800"',
    '"\\ud83d\\ude00"',
    '{"a": 1, "a": 2}',
    "9" * 4300,
]


@pytest.mark.parametrize("text", MALFORMED + VALID, ids=label)
def test_loads_of_crafted_text(text: str) -> None:
    assert_loads_like_json(text)


BYTES = [
    b"\x80",
    b'"caf\xe9"',
    b'"caf\xc3\xa9"',
    b'"\xed\xa0\x80"',  # a surrogate, which json decodes with surrogatepass
    b"\xef\xbb\xbf1",  # a UTF-8 byte-order mark, which json reads past in bytes
    b'\xef\xbb\xbf{"a": [1]}',
    b"\xef\xbb\xbf",
    b"\xff\xfe1\x00",  # UTF-16 with its mark
    b"\xfe\xff\x001",
    b"1\x00\x00\x00",  # UTF-32 without one
    b"\x00\x00\x001",
    b"\x001",  # UTF-16 without one
    b"1\x00",
]


@pytest.mark.parametrize(
    "data",
    dict.fromkeys([*BYTES, *(text.encode("utf-8", "surrogatepass") for text in MALFORMED + VALID)]),
    ids=label,
)
def test_loads_of_crafted_bytes(data: bytes) -> None:
    assert_loads_like_json(data)


# -- dumps ---------------------------------------------------------------------------------


@SETTINGS
@given(JSON, INDENTS)
def test_dumps_of_json_values(value: object, indent: int | None) -> None:
    assert_dumps_like_json(value, indent)


@SETTINGS
@given(VALUES, INDENTS)
def test_dumps_of_any_value(value: object, indent: int | None) -> None:
    assert_dumps_like_json(value, indent)


def nested(depth: int, leaf: object, wrap: Callable[[object], object]) -> object:
    value = leaf
    for _ in range(depth):
        value = wrap(value)
    return value


def circular_list() -> list[object]:
    items: list[object] = [1]
    items.append(items)
    return items


def circular_dict() -> dict[str, object]:
    mapping: dict[str, object] = {"a": 1}
    mapping["b"] = [mapping]
    return mapping


@pytest.mark.parametrize(
    "value",
    [
        {1: "a", 2: "b"},
        {"a": 1, 2: [3]},
        {True: 1, None: 2, 1.5: 3, -0.0: 4, NAN: 5, INF: 6},
        {(1, 2): 3},
        (1, (2, 3), []),
        ((),),
        [{}, [], (), ""],
        NAN,
        [INF, -INF],
        {"a": {"b": NAN}},
        -0.0,
        1e300,
        10**4300,
        Str("x"),
        {Str("k"): 1},
        Int(3),
        Float(1.5),
        Color.RED,
        Mapping(a=1),
        Sequence([1]),
        {1, 2},
        b"x",
        ...,
        '\x00\x1f\x7f\u2028\ud800\U0001f600é"\\/',
        circular_list(),
        circular_dict(),
        *(nested(depth, 1, lambda v: [v]) for depth in (99, 100, 101, 102, 300)),
        *(nested(depth, 1, lambda v: {"k": v}) for depth in (99, 100, 101, 102, 300)),
        *(nested(depth, NAN, lambda v: (v,)) for depth in (100, 101, 102)),
    ],
    ids=label,
)
def test_dumps_of_crafted_values(value: object) -> None:
    assert_dumps_like_json(value)
    assert_dumps_like_json(value, indent=0)


# -- imports -------------------------------------------------------------------------------

PROBE = """
import sys
from hippo_core import quickjson
value = quickjson.loads('{"a": [1, -2.5, null, true, false, "\\u00e9x"], "b": {}}')
text = quickjson.dumps(value)
assert quickjson.loads(text.encode()) == value, text
print(",".join(sorted(name for name in ("json", "re") if name in sys.modules)))
"""


def test_quickjson_imports_neither_json_nor_re() -> None:
    # Without site (-S): this venv's editable-install finder imports re at start-up.
    root = str(Path(quickjson.__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": root}
    baseline = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            "import sys; print('json' in sys.modules, 're' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert baseline.stdout.split() == ["False", "False"], "the interpreter itself imports them"
    result = subprocess.run(
        [sys.executable, "-S", "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert result.stdout.strip() == "", f"quickjson imported: {result.stdout.strip()}"
