"""`hippo_core.files.jsontext` is `json`, strict: the same values and errors for JSON, and a
ValueError, never another exception, for any text that is not JSON."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hippo_core.files import jsontext

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
FINITE = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.0, -0.0, 1e300, -1e300, 1e16, 5e-324, 2.2250738585072014e-308]
)
FLOATS = FINITE | st.floats() | st.sampled_from([NAN, INF, -INF])


def values_of(floats: st.SearchStrategy[float]) -> st.SearchStrategy[object]:
    """What json.loads can give: None, bools, ints, floats, str, lists and str-keyed dicts."""
    return st.recursive(
        st.none() | st.booleans() | INTS | floats | TEXT,
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(TEXT, kids, max_size=4),
        max_leaves=20,
    )


#: Values json writes as JSON ...
JSON = values_of(FINITE)
#: ... and as the NaN and Infinity that it reads back and JSON does not have.
ANY_FLOATS = values_of(FLOATS)
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


class Constant(Exception):
    """json met NaN, Infinity or -Infinity."""


def constant(name: str) -> object:
    raise Constant(name)


def expected(text: str | bytes) -> tuple[object, ...]:
    """What json.loads makes of ``text``, where what JSON does not allow is a ValueError."""
    try:
        return ("value", json.loads(text, parse_constant=constant))
    except Constant as exc:
        return ("raised", ValueError, f"{exc} is not JSON")
    except RecursionError:
        return ("raised", ValueError, "JSON nested too deeply")
    except Exception as exc:
        return ("raised", type(exc), str(exc))


def assert_loads_like_json(text: str | bytes) -> None:
    want = expected(text)
    got = outcome(lambda: jsontext.loads(text))
    if want[0] == "value" and got[0] == "value":
        assert same(got[1], want[1]), (text, got, want)
    else:
        assert got == want, text
    if got[0] == "raised":
        assert isinstance(got[1], type) and issubclass(got[1], ValueError), (text, got)


def assert_dumps_like_json(value: object, indent: int | None = 2) -> None:
    if indent is None:  # jsontext's compact form
        want = outcome(lambda: json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    else:
        want = outcome(lambda: json.dumps(value, indent=indent, ensure_ascii=False))
    assert outcome(lambda: jsontext.dumps(value, indent=indent)) == want, value


# -- loads ---------------------------------------------------------------------------------


@SETTINGS
@given(ANY_FLOATS, st.booleans(), st.sampled_from([None, 0, 2]))
def test_loads_reads_what_json_wrote(value: object, ensure_ascii: bool, indent: int | None) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    assert_loads_like_json(text)
    assert_loads_like_json(text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(JSON, INDENTS)
def test_loads_gives_back_what_dumps_wrote(value: object, indent: int | None) -> None:
    assert same(jsontext.loads(jsontext.dumps(value, indent=indent)), value)


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
@given(st.binary(max_size=16) | st.binary() | JSONISH.map(str.encode))
@example(b"\xef\xbb\xbf1")
def test_loads_of_any_bytes(data: bytes) -> None:
    assert_loads_like_json(data)


#: Cut short, as a line an agent is still writing is. json's C scanner, driven without
#: json's decoder, raised SystemError on these in a process that had not imported json.
CUT_SHORT = [
    '{"a": 1, "b',
    '{"a": 1, "b"',
    '{"a": 1, "b":',
    '{"a": "x\\',
    '{"a": "x\\u00',
    '["x", "y',
    '[1, "x',
    '{"a"',
    '"\\u12',
]
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
    "[01]",
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
    *CUT_SHORT,
]
#: What json accepts and JSON does not have: a ValueError here.
CONSTANTS = ["NaN", "Infinity", "-Infinity", "[1, NaN]", '{"a": {"b": [Infinity]}}', " -Infinity "]
VALID = [
    " \t\n\r1 \t\n\r",
    "-0",
    "-0.0",
    "1e400",  # JSON's grammar; a number beyond a double, which json reads as inf
    "-1e400",
    '"NaN"',
    '"\\ud800"',
    '"\\ud83d\\ude00"',
    '{"a": 1, "a": 2}',
    "9" * 4300,
]


@pytest.mark.parametrize("text", MALFORMED + CONSTANTS + VALID, ids=label)
def test_loads_of_crafted_text(text: str) -> None:
    assert_loads_like_json(text)


@pytest.mark.parametrize("text", CONSTANTS)
def test_the_constants_json_accepts_are_not_json(text: str) -> None:
    json.loads(text)  # json takes them ...
    for given_as in (text, text.encode()):
        with pytest.raises(ValueError, match=r"^(NaN|Infinity|-Infinity) is not JSON$"):
            jsontext.loads(given_as)  # ... JSON does not


BYTES = [
    b"\x80",
    b'"caf\xe9"',
    b'"caf\xc3\xa9"',
    b'"caf\xc3',  # cut inside a character
    b'"\xed\xa0\x80"',  # a surrogate, which json decodes with surrogatepass
    b"\xef\xbb\xbf1",  # a UTF-8 byte-order mark, which json reads past in bytes
    b'\xef\xbb\xbf{"a": [1]}',
    b"\xef\xbb\xbf",
    b"\xef\xbb\xbf\xef\xbb\xbf1",
    b"\xff\xfe1\x00",  # UTF-16 with its mark
    b"\xfe\xff\x001",
    b"1\x00\x00\x00",  # UTF-32 without one
    b"\x00\x00\x001",
    b"\x001",  # UTF-16 without one
    b"1\x00",
    b"\xff\xfeN\x00a\x00N\x00",  # NaN in UTF-16
]


@pytest.mark.parametrize(
    "data",
    dict.fromkeys(
        [
            *BYTES,
            *(text.encode("utf-8", "surrogatepass") for text in MALFORMED + CONSTANTS + VALID),
        ]
    ),
    ids=label,
)
def test_loads_of_crafted_bytes(data: bytes) -> None:
    assert_loads_like_json(data)


FRESH = """
import sys
from hippo_core.files import jsontext
for text in sys.argv[1:]:
    try:
        jsontext.loads(text)
    except Exception as exc:
        print("ValueError" if isinstance(exc, ValueError) else type(exc).__name__)
"""


def test_a_cut_line_is_a_value_error_in_a_fresh_interpreter() -> None:
    # The first text a hook or an ingest parses may be a cut line: json is not loaded yet.
    # Without site (-S), whose editable-install finder imports modules of its own.
    root = str(Path(jsontext.__file__).parent.parent)
    result = subprocess.run(
        [sys.executable, "-S", "-c", FRESH, *CUT_SHORT],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": root},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ValueError"] * len(CUT_SHORT)


def test_loads_takes_bytearray() -> None:
    assert jsontext.loads(bytearray(b'{"a": [1, "\xc3\xa9"]}')) == {"a": [1, "é"]}


# -- real lines, cut at every byte ---------------------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
#: Long enough to hold every kind of record these agents write, short enough that cutting
#: each at every byte (a parse of every prefix) takes a second or two.
LONGEST = 1500


def real_lines(tool: str) -> list[bytes]:
    """The distinct records of ``tool``'s fixtures up to ``LONGEST`` bytes, each as written:
    a line of a JSON Lines log, or for OpenCode a row's JSON."""
    if tool == "opencode":
        database = FIXTURES / "opencode" / "opencode.db"
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
            found = [
                str(data).encode()
                for table in ("message", "part")
                for (data,) in conn.execute(f"SELECT data FROM {table} ORDER BY id")
            ]
        conn.close()
    else:
        found = [
            line
            for path in sorted((FIXTURES / tool).rglob("*.jsonl"))
            for line in path.read_bytes().splitlines()
        ]
    return list(dict.fromkeys(line for line in found if line.strip() and len(line) <= LONGEST))


def assert_value_or_value_error(text: str | bytes, whole: object) -> None:
    """``jsontext.loads(text)`` is json's value (``whole``, for the uncut line), or a
    ValueError; nothing else."""
    try:
        value = jsontext.loads(text)
    except ValueError:
        return
    except Exception as exc:
        raise AssertionError(f"{type(exc).__name__} ({exc}) on {text[-60:]!r}") from None
    # A cut record is never JSON: only the whole line gets here.
    assert same(value, json.loads(text)), text[-60:]
    assert same(value, whole), text[-60:]


@pytest.mark.parametrize("tool", ["claude-code", "codex", "command-code", "gemini", "opencode"])
def test_a_real_line_cut_at_any_byte_is_its_value_or_a_value_error(tool: str) -> None:
    lines = real_lines(tool)
    assert len(lines) >= 20, f"too few lines of {tool} to mean much"
    for line in lines:
        whole = json.loads(line)
        assert isinstance(whole, dict), line[:60]
        for cut in range(len(line) + 1):
            part = line[:cut]
            assert_value_or_value_error(part, whole)
            # What a transcript reader tries next with bytes that are not UTF-8.
            assert_value_or_value_error(part.decode("utf-8", "replace"), whole)


# -- dumps ---------------------------------------------------------------------------------


@SETTINGS
@given(ANY_FLOATS, INDENTS)
def test_dumps_of_json_values(value: object, indent: int | None) -> None:
    assert_dumps_like_json(value, indent)


class Str(str):
    pass


class Mapping(dict):  # type: ignore[type-arg]
    pass


#: What a caller may hand json.dumps besides JSON: tuples, non-str keys, subclasses, and a
#: few values json refuses (a set, bytes, a tuple key), whose error must be json's too.
VALUES = st.recursive(
    st.none() | INTS | FLOATS | TEXT | TEXT.map(Str) | st.just({1, 2}) | st.just(b"bytes"),
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.lists(kids, max_size=4).map(tuple)
        | st.dictionaries(TEXT | INTS | FLOATS | st.none() | st.just((1, 2)), kids, max_size=4)
        | st.dictionaries(TEXT, kids, max_size=3).map(Mapping)
    ),
    max_leaves=20,
)


@SETTINGS
@given(VALUES, INDENTS)
def test_dumps_of_any_value(value: object, indent: int | None) -> None:
    assert_dumps_like_json(value, indent)


def test_dumps_keeps_non_ascii_and_is_compact_or_indented_by_two() -> None:
    value = {"é": ["ß", 1]}
    assert jsontext.dumps(value) == '{\n  "é": [\n    "ß",\n    1\n  ]\n}'
    assert jsontext.dumps(value, indent=None) == '{"é":["ß",1]}'


# -- well_formed ---------------------------------------------------------------------------


@SETTINGS
@given(JSON)
def test_well_formed_leaves_only_what_utf8_can_hold(value: object) -> None:
    made = jsontext.well_formed(value)
    json.dumps(made, ensure_ascii=False).encode("utf-8")  # no lone surrogate is left
    assert same(jsontext.well_formed(made), made)
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return
    assert same(made, value)  # a value that had none is unchanged


def test_well_formed_makes_a_lone_surrogate_a_replacement_character() -> None:
    value = jsontext.loads('{"a\\ud800": ["x\\udfffy", "\\ud83d\\ude00", 1]}')
    assert jsontext.well_formed(value) == {"a\ufffd": ["x\ufffdy", "\U0001f600", 1]}
