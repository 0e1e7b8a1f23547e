"""What Gemini CLI (0.61.0) hands back as the person's prompt, and what a person pastes:
hippo's block inside ``<hook_context>`` with its markers HTML-escaped, nested hook
contexts, a block twice, a block with no end marker. Wherever hippo reads a prompt (the
prompt hook's task and ranking, every source's indexed prompt) it reads the person's
words, and never raises."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo_core.plugins.manager import load_plugins
from hippo_core.transcripts.handover import (
    BEGIN,
    END,
    ESCAPED_BEGIN,
    ESCAPED_END,
    HOOK_BEGIN,
    HOOK_END,
    strip,
    wrap,
)
from hippo_core.transcripts.model import Resume
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.test_handover import FIXTURES, JSONL, _prompts

WORDS = "HIPPO-PLAIN: how do refunds work?"
BLOCK = wrap("# Home\n\nThe ledger team's notes: read [[Refunds]] first.\nsession: s gemini t\n")
#: As Gemini CLI folds a hook's context in: ``<`` and ``>`` escaped, inside hook_context.
FOLDED = "<hook_context>" + BLOCK.replace("<", "&lt;").replace(">", "&gt;") + "</hook_context>"
SHAPES = {
    "gemini": f"{FOLDED}\n\n{WORDS}",
    "gemini, BeforeAgent's part after": f"{FOLDED}\n\n{WORDS}\n\n{FOLDED}",
    "escaped markers alone": BLOCK.replace("<", "&lt;").replace(">", "&gt;") + WORDS,
    "nested hook contexts": f"{HOOK_BEGIN}{HOOK_BEGIN}x{HOOK_END} y{HOOK_END}\n\n{WORDS}",
    "a block twice": f"{BLOCK}{BLOCK}{WORDS}",
    "a folded block twice": f"{FOLDED}{FOLDED}\n\n{WORDS}",
    "the first of two cut short": f"{BEGIN}\n# Home\n{BLOCK}{WORDS}",
    "unclosed inside a hook context": f"{HOOK_BEGIN}{ESCAPED_BEGIN}\n# Home\n{HOOK_END}\n\n{WORDS}",
    "a hook context with no end": f"{HOOK_BEGIN}{ESCAPED_BEGIN}\n# Home\n{ESCAPED_END}\n\n{WORDS}",
    "mixed markers": f"{ESCAPED_BEGIN}\n# Home\n{END}\n{WORDS}",
    "a stray end marker": f"{END}\n{WORDS}{HOOK_END}",
    "a note that quotes the markers": wrap(f"between {BEGIN} and {END} lines") + WORDS,
    "another hook's context": f"<hook_context>lint: 0 warnings</hook_context>\n\n{WORDS}",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_persons_words_are_what_is_left(shape: str) -> None:
    assert strip(SHAPES[shape]).strip() == WORDS


def test_what_cannot_be_told_apart_is_kept_or_cut_as_documented() -> None:
    # A person's own words about the wrapper, with no block of hippo's in them, stay.
    assert strip(f"what is {HOOK_BEGIN} for?") == f"what is {HOOK_BEGIN} for?"
    # A block of hippo's with no end at all runs to the end: the words before it stay.
    assert strip(f"{WORDS}\n{BEGIN}\n# Home\nthe rest") == f"{WORDS}\n"
    # A marker pasted inside a line (the poisoning review's F14) drops nothing.
    pasted = f"Pasted from the issue: see {BEGIN} for details. Also: rotate the key."
    assert strip(pasted) == pasted


MARKS = [BEGIN, END, ESCAPED_BEGIN, ESCAPED_END, HOOK_BEGIN, HOOK_END, "\n\n", "&lt;", "<"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(MARKS), st.text(max_size=8)), max_size=12))
def test_strip_never_raises_and_never_grows(pieces: list[str]) -> None:
    text = "".join(pieces)
    stripped = strip(text)
    assert len(stripped) <= len(text)
    assert strip(stripped) == strip(stripped)  # a second pass finds nothing new to raise on


@given(st.text(alphabet=st.characters(blacklist_characters="<&"), max_size=40))
def test_words_with_no_marker_are_left_as_they_are(words: str) -> None:
    assert strip(words) == words
    assert strip(FOLDED + words) == words


def _pasted(raw: bytes, shape: str) -> bytes:
    """Every scenario prompt (``HIPPO-...``) of a real transcript with what ``shape`` puts
    before the person's words (escaped as the JSON string around it needs)."""
    before, after = SHAPES[shape].split(WORDS)
    assert not after
    return raw.replace(b"HIPPO-", json.dumps(before)[1:-1].encode() + b"HIPPO-")


@pytest.mark.parametrize("shape", ["gemini", "a folded block twice", "nested hook contexts"])
@pytest.mark.parametrize(("tool", "path"), JSONL, ids=[f"{t}:{p.name}" for t, p in JSONL])
def test_every_source_indexes_the_persons_words(
    tool: str, path: Path, shape: str, tmp_path: Path
) -> None:
    copy = tmp_path / path.relative_to(FIXTURES / tool)
    copy.parent.mkdir(parents=True)
    copy.write_bytes(_pasted(path.read_bytes(), shape))
    source = load_plugins().sources()[tool]
    assert _prompts(source.parse(copy, Resume())) == _prompts(source.parse(path, Resume()))


def _gemini_chat(tmp_path: Path, *user_parts: list[str]) -> Path:
    """A Gemini CLI 0.61.0 chat: each user message's text parts, each answered."""
    chats = tmp_path / ".gemini" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text("/home/dev/proj\n")
    lines = [{"sessionId": "s1", "projectHash": "x", "startTime": "2026-11-30T04:00:00Z"}]
    for n, parts in enumerate(user_parts):
        lines.append({"id": f"u{n}", "type": "user", "content": [{"text": t} for t in parts]})
        lines.append({"id": f"g{n}", "type": "gemini", "content": "Hello."})
    path = chats / "session-2026-11-30T04-00-s1.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_gemini_message_that_is_only_a_hooks_context_opens_no_turn(tmp_path: Path) -> None:
    """As 0.61.0 writes the first prompt (SessionStart's context folded before the words,
    BeforeAgent's in a part of its own); a message of hooks' context alone (an AfterTool
    hook's) is no prompt of the person's."""
    path = _gemini_chat(tmp_path, [f"{FOLDED}\n\n{WORDS}", FOLDED], [FOLDED], ["and again"])
    parsed = load_plugins().sources()["gemini"].parse(path, Resume())
    assert _prompts(parsed) == [WORDS, "and again"]


@pytest.fixture
def prompt_hook(hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch):
    def run(ws: Path, prompt: str, tool: str) -> str:
        payload = {"session_id": "s1", "cwd": str(ws), "prompt": prompt}
        monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
        done = hippo("hook", "prompt", "--tool", tool, cwd=ws)
        assert done.code == 0 and done.err == ""
        return done.out

    return run


NOTES = {
    "Home.md": "# Home\n\nThe ledger team's notes: read [[Refunds]] first.\n",
    "Refunds.md": "# Refunds\n\nRefunds go through the nightly queue.\n",
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("tool", ["gemini", "codex"])
def test_the_prompt_hook_takes_the_persons_words_as_the_task(
    prompt_hook, make_workspace: WorkspaceMaker, shape: str, tool: str
) -> None:
    ws = make_workspace("", NOTES)
    out = prompt_hook(ws, SHAPES[shape], tool)
    [record] = (ws / ".hippo" / "sessions").glob("*.json")
    assert json.loads(record.read_text())["task"] == WORDS
    # Ranked on the words: the entry note is no relevant note of the block around them.
    relevant = (
        json.loads(out)["hookSpecificOutput"]["additionalContext"] if tool == "gemini" else out
    )
    assert "- Refunds:" in relevant and "- Home:" not in relevant
    assert not (Path(os.environ["HIPPO_HOME"]) / "hooks.log").exists()
