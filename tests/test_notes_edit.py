"""Tests for hippo_core.notes.edit: edits change only the bytes they must."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hippo_core.notes.edit import EditError, append_text, note_digest, replace_text

BOM = b"\xef\xbb\xbf"
KEYS = ["type", "status", "updated", "review_after", "sources", "owner", "tags"]

# Any valid UTF-8 text on one line. U+FEFF is left out: at the start of a
# note it is the BOM, which the generator draws on its own.
LINE = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\ufeff"), max_size=24)
# Text a model writes: "\n" line ends. No "-", so it can never form a "---"
# fence and turn body into frontmatter (that refusal has its own test).
MODEL_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r-\ufeff"), max_size=30)

PROPERTY = settings(max_examples=200, deadline=None)


@dataclass(frozen=True)
class Note:
    bom: bool
    frontmatter: str
    body: str
    eol: str

    @property
    def head(self) -> bytes:
        """The bytes before the body: BOM and frontmatter."""
        return (BOM if self.bom else b"") + self.frontmatter.encode("utf-8")

    @property
    def raw(self) -> bytes:
        return self.head + self.body.encode("utf-8")

    @property
    def crlf(self) -> bool:
        # A note with no line end at all counts as LF.
        return self.eol == "\r\n" and "\n" in self.frontmatter + self.body


@st.composite
def notes(draw: st.DrawFn) -> Note:
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    frontmatter = ""
    if draw(st.booleans()):
        keys = draw(st.permutations(KEYS))[: draw(st.integers(1, len(KEYS)))]
        lines = ["---"]
        for key in keys:
            lines.append(f"{key}: {draw(LINE)}")
            if draw(st.booleans()):
                lines.append(f"# {draw(LINE)}")
        lines.append(draw(st.sampled_from(["---", "..."])))
        frontmatter = eol.join(lines) + eol
    body_lines = draw(st.lists(LINE, min_size=1, max_size=8))
    # Without frontmatter, a first body line of "---" would open a block.
    assume(frontmatter or body_lines[0] != "---")
    body = eol.join(body_lines) + (eol if draw(st.booleans()) else "")
    return Note(draw(st.booleans()), frontmatter, body, eol)


def occurrences(text: str, part: str) -> int:
    """Count occurrences of `part` in `text`, overlapping ones included."""
    return sum(text.startswith(part, i) for i in range(len(text)))


@PROPERTY
@given(note=notes(), new=MODEL_TEXT, data=st.data())
def test_replace_changes_only_the_matched_span(note: Note, new: str, data: st.DataObject) -> None:
    assume(note.body)
    start = data.draw(st.integers(0, len(note.body) - 1), label="start")
    end = data.draw(st.integers(start + 1, len(note.body)), label="end")
    old = note.body[start:end]
    assume(occurrences(note.raw.decode("utf-8"), old) == 1)
    if note.crlf:
        # Do not split a "\r\n" pair; that edit would break the note's line ends.
        assume(not old.startswith("\n") and not old.endswith("\r"))
    given_old = old
    if note.crlf and data.draw(st.booleans(), label="model writes LF"):
        given_old = old.replace("\r\n", "\n")

    result = replace_text(note.raw, given_old, new)

    written = new.replace("\n", "\r\n") if note.crlf else new
    before = note.head + note.body[:start].encode("utf-8")
    after = note.body[end:].encode("utf-8")
    # (a) bytes before and after the match are identical, new text in between.
    assert result == before + written.encode("utf-8") + after
    # (b) BOM and frontmatter are untouched.
    assert result.startswith(note.head)
    # (c) the reverse edit restores the note. `old` as it stands in the note:
    # replacing the whole body can leave no line end to call the note CRLF by.
    if written and occurrences(result.decode("utf-8"), written) == 1:
        assert replace_text(result, new, old) == note.raw


@PROPERTY
@given(note=notes(), text=MODEL_TEXT)
def test_append_keeps_the_note_as_a_prefix(note: Note, text: str) -> None:
    assume(text.strip())
    result = append_text(note.raw, text)

    # (d) every original byte stays, in place.
    assert result.startswith(note.raw)
    added = result[len(note.raw) :].decode("utf-8")
    eol = "\r\n" if note.crlf else "\n"
    if note.raw and not note.raw.endswith(b"\n"):
        assert added.startswith(eol)
        added = added[len(eol) :]
    assert added.endswith(eol)
    content = added[: -len(eol)]
    assert not content.endswith(("\n", "\r"))
    if note.crlf:
        assert content.count("\n") == content.count("\r\n")
        content = content.replace("\r\n", "\n")
    assert content == text.rstrip("\n")


NOTE = b"---\ntype: policy  # kept\nstatus: current\n---\n# Title\nThe limit is 5.\n"


def test_replace_in_body_keeps_frontmatter_and_comments() -> None:
    result = replace_text(NOTE, "limit is 5", "limit is 7")
    assert result == NOTE.replace(b"limit is 5", b"limit is 7")


@pytest.mark.parametrize(
    ("raw", "old", "message"),
    [
        (NOTE, "limit is 9", "old text not found"),
        (NOTE, "", "old text is empty"),
        (NOTE, "status: current", "old text lies in the frontmatter"),
        (b"---\nk: v\n...\nbody\n", "k: v", "old text lies in the frontmatter"),
        (b"body \xff\n", "body", "note is not UTF-8"),
        (b"a cat and a cat\n", "cat", "old text found 2 times; it must occur exactly once"),
        # Overlapping occurrences count: "aa" occurs twice in "aaa".
        (b"aaa\n", "aa", "old text found 2 times; it must occur exactly once"),
        # Unique in the body is not enough: it must be unique in the whole note.
        (
            b"---\ntype: policy\n---\npolicy\n",
            "policy",
            "old text found 2 times; it must occur exactly once",
        ),
    ],
)
def test_replace_errors(raw: bytes, old: str, message: str) -> None:
    with pytest.raises(EditError) as excinfo:
        replace_text(raw, old, "x")
    assert str(excinfo.value) == message
    assert isinstance(excinfo.value, ValueError)


def test_replace_translates_lf_to_crlf_in_a_crlf_note() -> None:
    raw = b"---\r\ntype: log\r\n---\r\nline one\r\nline two\r\nend"
    result = replace_text(raw, "line one\nline two", "first\nsecond")
    assert result == b"---\r\ntype: log\r\n---\r\nfirst\r\nsecond\r\nend"


def test_replace_does_not_translate_in_a_note_with_bare_lf() -> None:
    # Mixed line ends: not a CRLF note, so "\n" is matched as written.
    raw = b"one\r\ntwo\nthree\n"
    assert replace_text(raw, "two\nthree", "2\n3") == b"one\r\n2\n3\n"
    with pytest.raises(EditError, match=r"^old text not found$"):
        replace_text(raw, "one\ntwo", "x")


def test_replace_keeps_bom_and_missing_final_newline() -> None:
    raw = BOM + b"---\r\nb: 2\r\na: 1\r\n---\r\nbody \xc3\xa9t\xc3\xa9"
    result = replace_text(raw, "été", "hiver")
    assert result == BOM + b"---\r\nb: 2\r\na: 1\r\n---\r\nbody hiver"


def test_unclosed_frontmatter_is_body() -> None:
    raw = b"---\ntype: policy\nno closing line\n"
    assert replace_text(raw, "type: policy", "x") == b"---\nx\nno closing line\n"


def test_fence_must_be_exact() -> None:
    # "--- " is not a fence, so the note has no frontmatter.
    raw = b"--- \nk: v\n---\n"
    assert replace_text(raw, "k: v", "x") == b"--- \nx\n---\n"


def test_replace_refuses_to_create_frontmatter() -> None:
    with pytest.raises(EditError, match=r"^edit would change the frontmatter$"):
        replace_text(b"Title\nk: v\n---\n", "Title", "---")


def test_append_adds_the_note_line_end_first() -> None:
    assert append_text(b"# T\nlast", "more") == b"# T\nlast\nmore\n"
    assert append_text(b"# T\r\nlast", "a\nb") == b"# T\r\nlast\r\na\r\nb\r\n"


def test_append_ends_with_one_line_end() -> None:
    assert append_text(b"x\n", "more\n\n\n") == b"x\nmore\n"
    assert append_text(b"", "first") == b"first\n"


def test_append_keeps_bom_and_frontmatter() -> None:
    raw = BOM + b"---\r\na: 1\r\n---"
    assert append_text(raw, "body") == raw + b"\r\nbody\r\n"


@pytest.mark.parametrize(
    ("raw", "text", "message"),
    [
        (b"x\n", "", "appended text is empty"),
        (b"x\n", " \n\t\n", "appended text is empty"),
        (b"\xff", "more", "note is not UTF-8"),
        (b"---\nk: v\n", "---", "edit would change the frontmatter"),
    ],
)
def test_append_errors(raw: bytes, text: str, message: str) -> None:
    with pytest.raises(EditError) as excinfo:
        append_text(raw, text)
    assert str(excinfo.value) == message


def test_note_digest() -> None:
    assert note_digest(b"") == (
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert note_digest(NOTE) == "sha256:" + hashlib.sha256(NOTE).hexdigest()
    assert note_digest(NOTE) != note_digest(NOTE + b"\n")
