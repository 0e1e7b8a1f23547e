"""``hippo ingest`` over the real transcripts of every agent, from their default folders."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import HippoRunner

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
#: fixture folder -> where the agent keeps it below HOME
PLACES = {
    "claude-code": ".claude",
    "codex": ".codex",
    "command-code": ".commandcode",
    "dsh": ".dsh",
    "gemini": ".gemini",
    "opencode": ".local/share/opencode",
}
AGENT_VARIABLES = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "DSH_HOME",
    "XDG_DATA_HOME",
    "GEMINI_CLI_HOME",
)


@pytest.fixture
def agents_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for variable in AGENT_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    for fixture, place in PLACES.items():
        shutil.copytree(FIXTURES / fixture, isolated_home / place)
    return isolated_home


def rows(query: str) -> list[tuple]:
    with sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite") as conn:
        return conn.execute(query).fetchall()


def test_every_agent_is_read_from_its_default_folder(
    hippo: HippoRunner, agents_home: Path, tmp_path: Path
) -> None:
    run = hippo("ingest", "--json", cwd=tmp_path)

    assert run.code == 0, run.err
    summary = json.loads(run.out)
    assert summary["problems"] == [] and summary["corrupt"] == 0
    per_tool = dict(rows("SELECT tool, count(*) FROM turns GROUP BY tool"))
    assert set(per_tool) == set(PLACES)
    tools_prompts = rows("SELECT DISTINCT tool FROM turns WHERE prompt LIKE '%HIPPO-TOOLS%'")
    assert {t for (t,) in tools_prompts} == set(PLACES)
    edited = {p for (p,) in rows("SELECT path FROM touched WHERE kind = 'e'")}
    assert {"/home/dev/proj-claude/notes.txt", "/home/dev/proj-codex/notes.txt"} <= edited

    again = hippo("ingest", cwd=tmp_path)
    assert again.out.startswith(f"ingested 0 of {summary['files']} transcript files, 0 new turns")


def test_search_finds_turns_of_every_agent(
    hippo: HippoRunner, agents_home: Path, tmp_path: Path
) -> None:
    hippo("ingest", cwd=tmp_path)
    hits = json.loads(hippo("search", "HIPPO TOOLS", "--limit", "50", "--json", cwd=tmp_path).out)
    assert {hit["tool"] for hit in hits} == set(PLACES)
    codex = json.loads(hippo("search", "notes", "--tool", "codex", "--json", cwd=tmp_path).out)
    assert codex and all(hit["session"].startswith("codex-") for hit in codex)


def test_a_full_rebuild_yields_the_same_turns(
    hippo: HippoRunner, agents_home: Path, tmp_path: Path
) -> None:
    query = (
        "SELECT session, ordinal, key, prompt, answer, tools FROM turns ORDER BY session, ordinal"
    )
    hippo("ingest", cwd=tmp_path)
    before = rows(query)
    (Path(os.environ["HIPPO_HOME"]) / "index.sqlite").unlink()
    assert hippo("ingest", "--full", cwd=tmp_path).code == 0
    assert rows(query) == before
