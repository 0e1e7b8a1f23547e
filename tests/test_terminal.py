"""Text hippo did not write reaches a terminal without its control sequences (finding T1):
a turn quoting coloured output, a fragment, a core, a proposal. What hippo keeps is left as
it was. Each command runs on a real pseudo-terminal (tests/pty_run.py); a teammate's name
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
HIPPO = str(Path(sys.executable).parent / "hippo")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain words, a tab\tand\nlines", "plain words, a tab\tand\nlines"),
        (f"escape test {PLANTED} termword", "escape test RED termword"),
        ("eve\x1b[41mBG\x1b[0m", "eveBG"),
        ("clip\x1b]52;c;ZXZpbA==\x1b\\board", "clipboard"),  # OSC 52 ended by ST
        ("bell\x07 back\x08space cr\rover", "bell\u2407 back\u2408space cr\u240dover"),
        ("windows\r\nline", "windows\nline"),
        ("lone\x1b", "lone\u241b"),
        ("unended \x1b]0;title, then text", "unended 0;title, then text"),
        ("c1 csi\x9b2J and \x85 next line", "c1 csi and \ufffd next line"),
        ("del\x7f", "del\u2421"),
        ("reset\x1bc and charset\x1b(B", "reset and charset"),
        ("déjà vu, 漢字, emoji 🦛", "déjà vu, 漢字, emoji 🦛"),
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
    assert "escape test RED0;TITLE-PWNED" not in screen
    assert "escape test RED [termword]" in screen
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
    assert "[topREDic]" in fragments and "a fragment RED kept" in fragments
    assert "A core RED title" in cores
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
    assert "reason: because RED" in shown
    assert path.stem in listed
