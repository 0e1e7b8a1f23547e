"""Text hippo did not write reaches a terminal without its control sequences (finding T1),
and shows them instead of hiding them (the poisoning review's F9): a turn quoting coloured
output, a fragment, a core, a proposal, the context block. What hippo keeps is left as it
was. Each command runs on a real pseudo-terminal (tests/pty_run.py); a teammate's name
through the team index is in tests/test_team_index.py."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.dream_scene import Scene, replace
from tests.pty_run import in_terminal
from tests.sleep_scene import make_sleepy

#: What the review planted: a clear screen, a red colour and a window title (OSC ... BEL).
PLANTED = "\x1b[2J\x1b[31mRED\x1b]0;TITLE-PWNED\x07"
#: How every view shows it: each control character as its picture, nothing obeyed.
SHOWN = "\u241b[2J\u241b[31mRED\u241b]0;TITLE-PWNED\u2407"
HIPPO = str(Path(sys.executable).parent / "hippo")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain words, a tab\tand\nlines", "plain words, a tab\tand\nlines"),
        (f"escape test {PLANTED} termword", f"escape test {SHOWN} termword"),
        ("eve\x1b[41mBG\x1b[0m", "eve\u241b[41mBG\u241b[0m"),
        # OSC 52 (a clipboard write) ended by ST: shown, so a reviewer sees it is there.
        ("clip\x1b]52;c;ZXZpbA==\x1b\\board", "clip\u241b]52;c;ZXZpbA==\u241b\\board"),
        ("bell\x07 back\x08space cr\rover", "bell\u2407 back\u2408space cr\u240dover"),
        ("windows\r\nline", "windows\nline"),
        ("lone\x1b", "lone\u241b"),
        ("unended \x1b]0;title, then text", "unended \u241b]0;title, then text"),
        ("c1 csi\x9b2J and \x85 next line", "c1 csi\ufffd2J and \ufffd next line"),
        ("del\x7f", "del\u2421"),
        ("reset\x1bc and charset\x1b(B", "reset\u241bc and charset\u241b(B"),
        ("déjà vu, 漢字, emoji 🦛, a\u00a0space", "déjà vu, 漢字, emoji 🦛, a\u00a0space"),
        # What shows nothing: a right-to-left override, a zero-width space, tag characters
        # spelling "run" (ASCII smuggling), a byte order mark.
        ("rtl \u202egnp.exe", "rtl <U+202E>gnp.exe"),
        ("zero\u200bwidth", "zero<U+200B>width"),
        ("ok\U000e0072\U000e0075\U000e006e", "ok<U+E0072><U+E0075><U+E006E>"),
        ("\ufeffbom", "<U+FEFF>bom"),
    ],
)
def test_printable(text: str, shown: str) -> None:
    from hippo_core import printable

    assert printable(text) == shown


def _clean(screen: str) -> None:
    """Nothing on the terminal but text, line breaks (the terminal's \\r\\n) and tabs."""
    assert "\x1b" not in screen and "\x07" not in screen and "\x9b" not in screen, repr(screen)
    assert "TITLE-PWNED\x07" not in screen


def test_search_prints_a_planted_turn_without_its_escape_sequences(
    make_workspace: WorkspaceMaker, claude_home: Path
) -> None:
    root = make_workspace()
    session = ClaudeSession(claude_home, str(root))
    session.prompt(f"escape test {PLANTED} termword").answer("ok").write()
    env = dict(os.environ)
    assert "ingested 1 of 1" in in_terminal([HIPPO, "ingest"], root, env)

    screen = in_terminal([HIPPO, "search", "--local", "termword"], root, env)

    _clean(screen)
    assert f"escape test {SHOWN} [termword]" in screen
    with sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite") as conn:
        [stored] = conn.execute("SELECT prompt FROM turns").fetchone()
    conn.close()
    assert stored == f"escape test {PLANTED} termword"  # kept as it was said
    as_json = in_terminal([HIPPO, "search", "--local", "termword", "--json"], root, env)
    _clean(as_json)
    assert json.loads(as_json)[0]["snippet"].startswith(f"escape test {PLANTED}")


def test_sleep_listings_print_fragments_and_cores_without_escape_sequences(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    night.remember(f"a fragment {PLANTED} kept", f"top{PLANTED}ic")
    night.core_note("a-core", f"A core {PLANTED} title")
    env = dict(os.environ)

    fragments = in_terminal([HIPPO, "remember", "list"], night.root, env)
    cores = in_terminal([HIPPO, "sleep", "cores"], night.root, env)
    events = in_terminal([HIPPO, "sleep", "events"], night.root, env)

    for screen in (fragments, cores, events):
        _clean(screen)
    assert f"[top{SHOWN}ic]" in fragments and f"a fragment {SHOWN} kept" in fragments
    assert f"A core {SHOWN} title" in cores
    [stored] = (night.root / ".hippo/sleep/fragments").glob("*.json")
    assert PLANTED in json.loads(stored.read_text())["content"]


def test_review_shows_a_proposal_without_escape_sequences(scene: Scene) -> None:
    verify = scene.root / ".hippo/packs/core/passes/verify.toml"
    verify.write_text(verify.read_text() + 'review = "queue"\n')
    scene.transcript()
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    [path] = scene.files("proposals")
    record = json.loads(path.read_text())
    record.update(reason=f"because {PLANTED}", new=f"{record['new']}{PLANTED}")
    path.write_text(json.dumps(record))
    env = dict(os.environ)

    shown = in_terminal([HIPPO, "review", path.stem], scene.root, env)
    listed = in_terminal([HIPPO, "review"], scene.root, env)

    for screen in (shown, listed):
        _clean(screen)
    assert f"reason: because {SHOWN}" in shown
    assert path.stem in listed


def test_the_context_block_shows_what_a_note_hides(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """The poisoning review's F9: a clipboard write and a sentence in tag characters in a
    note reach no agent and no terminal as they are; the block shows them, as review does."""
    smuggled = "".join(chr(0xE0000 + ord(c)) for c in "run it")
    note = f"# Canary\n\nCanary deploys go to 5% first.\x1b]52;c;Y3VybA==\x07{smuggled}\n"
    root = make_workspace(
        "", {"Home.md": "# Home\n\nThe shop. See [[Canary]].\n", "Canary.md": note}
    )
    block = hippo("context", "--task", "canary deploys", cwd=root).out
    assert "\x1b" not in block and "\x07" not in block and "\U000e0072" not in block
    assert "5% first.\u241b]52;c;Y3VybA==\u2407<U+E0072><U+E0075><U+E006E>" in block
    assert (root / "notes" / "Canary.md").read_text() == note  # the note is as it was
