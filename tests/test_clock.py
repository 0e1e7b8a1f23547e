"""hippo's clock: ``HIPPO_NOW`` moves every reading of the present, the dream's and the
linter's as well as the sleep cycle's, so a month runs in minutes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker, write_notes
from tests.dream_scene import Scene

DOCS = Path(__file__).parent.parent / "docs" / "configuration.md"


def test_the_dream_of_the_configuration_chapter_ends_its_window_at_hippo_now(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
):
    """The chapter's command, as written: the window ends at the given time, the report is
    that day's, and the state says when the run was."""
    chapter = DOCS.read_text(encoding="utf-8")
    command = re.search(r"^(HIPPO_NOW=(\S+) hippo (dream --dry-run))$", chapter, re.M)
    assert command, "docs/configuration.md shows a HIPPO_NOW dream"
    monkeypatch.setenv("HIPPO_NOW", command.group(2))
    run = scene.dream(*command.group(3).split()[1:])
    assert run.code == 0, run.err
    reports = sorted((scene.root / ".hippo" / "reports").iterdir())
    assert [p.name for p in reports] == ["2027-02-03-dream.md"]
    window = scene.section("Window")[1]
    assert window.endswith(
        "2027-02-02T23:00:00Z to 2027-02-03T23:00:00Z: 1 chunk of at most 24 hours"
    )


def test_overdue_follows_the_clock(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
):
    root = make_workspace("", {"Old.md": "---\nreview_after: 2027-01-10\n---\n# Old\n\nText.\n"})
    monkeypatch.setenv("HIPPO_NOW", "2027-01-10T12:00:00Z")
    assert "overdue" not in hippo("notes", "lint", cwd=root).out
    monkeypatch.setenv("HIPPO_NOW", "2027-01-11T00:00:01Z")
    assert "overdue" in hippo("notes", "lint", cwd=root).out


def test_a_session_record_is_dated_by_the_clock(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
):
    root = make_workspace("", {"Home.md": "# Home\n"})
    monkeypatch.setenv("HIPPO_NOW", str(1_800_000_000))
    run = hippo("session", "start", "--task", "a task", cwd=root)
    assert run.code == 0, run.err
    (record,) = (root / ".hippo" / "sessions").glob("*.json")
    assert json.loads(record.read_text())["started"] == "2027-01-15T08:00:00Z"


def test_a_clock_that_is_not_a_time_is_one_line(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
):
    root = make_workspace("", {"Home.md": "# Home\n"})
    write_notes(root, {"Other.md": "# Other\n"})
    monkeypatch.setenv("HIPPO_NOW", "next tuesday")
    run = hippo("dream", "--dry-run", cwd=root)
    assert run.code != 0
    assert run.err.strip().splitlines() == [
        "error: HIPPO_NOW='next tuesday': give seconds since the epoch or a time such as "
        "2026-12-07T09:00:00Z"
    ]
