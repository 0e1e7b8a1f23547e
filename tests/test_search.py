"""``hippo search`` over a real index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, WorkspaceMaker


@pytest.fixture
def indexed(hippo: HippoRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    first = ClaudeSession(home, "/p", session="s-refunds")
    first.prompt("why do refunds fail on weekends?").answer("The refund queue pauses on Sunday.")
    first.write()
    second = ClaudeSession(home, "/q", session="s-pricing")
    second.prompt("update pricing").answer("Prices are now in cents.").write()
    assert hippo("ingest", cwd=tmp_path).code == 0
    return tmp_path


def test_search_prints_matching_turns_with_snippets(hippo: HippoRunner, indexed: Path) -> None:
    run = hippo("search", "refund queue", cwd=indexed)
    assert run.code == 0
    lines = run.out.splitlines()
    assert lines[0].startswith("s-refunds #0  2026-11-30T04:")
    assert lines[0].endswith("claude-code")
    assert "[refund] [queue] pauses" in lines[1]


def test_search_json_and_filters(hippo: HippoRunner, indexed: Path) -> None:
    hits = json.loads(hippo("search", "cents OR refunds", "--json", cwd=indexed).out)
    assert hits == []  # every word must occur; OR is just a word
    hits = json.loads(hippo("search", "pric*", "--json", cwd=indexed).out)
    assert [h["session"] for h in hits] == ["s-pricing"]
    assert hippo("search", "pric*", "--session", "s-refunds", cwd=indexed).code == 1
    assert hippo("search", "pric*", "--tool", "codex", cwd=indexed).code == 1
    assert hippo("search", "pric*", "--since", "2026-11-29", cwd=indexed).code == 0
    assert hippo("search", "pric*", "--since", "2026-12-01", cwd=indexed).code == 1


def test_search_bad_input_is_one_line(hippo: HippoRunner, indexed: Path) -> None:
    for args in (("...",), ("x", "--since", "last tuesday")):
        run = hippo("search", *args, cwd=indexed)
        assert run.code == 2 and run.err.count("\n") == 1, run.err


def test_search_without_an_index_says_what_to_run(hippo: HippoRunner, tmp_path: Path) -> None:
    run = hippo("search", "x", cwd=tmp_path)
    assert run.code == 1 and "run `hippo ingest` first" in run.err


def test_team_flags_without_a_team_index_are_usage_errors(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    for flags, said in (
        (("--who", "bob"), "--who needs a team index: set index_url in .hippo/settings.toml"),
        (("--all-projects",), "--all-projects needs a team index"),
        (("--who", "bob", "--local"), "--who searches the team index, and --local this"),
    ):
        run = hippo("search", "refunds", *flags, cwd=ws)
        assert run.code == 2 and said in run.err, run.err


def test_an_agent_hippo_does_not_index_names_the_ones_it_does(
    hippo: HippoRunner, indexed: Path
) -> None:
    """``--tool claude`` said only "no turns match" (newcomer defect 11)."""
    run = hippo("search", "pric*", "--tool", "claude", cwd=indexed)
    assert (run.code, run.out) == (2, "")
    assert run.err == (
        "error: --tool 'claude' is no agent whose turns hippo indexes; the agents are: "
        "claude-code, codex, command-code, dsh, gemini, muse, opencode - did you mean "
        "'claude-code'?\n"
    )
    assert hippo("search", "pric*", "--tool", "claude-code", cwd=indexed).code == 0
