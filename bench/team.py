"""What the team index on PostgreSQL costs: ingest with a push beside ingest alone, the
ingest after one new turn, and `hippo search` at a million turns.

A real PostgreSQL server is started for the run (tests/postgres.py: Debian's binaries, a
cluster in a temporary folder, run by an unprivileged user), so run this from the dev venv
of the checkout: `.venv/bin/python bench/team.py`. hippo is the `hippo` script of a venv
where this checkout is pip-installed with its `postgres` extra (bench/harness.py).

1. **Ingest throughput.** A corpus of generated Claude Code sessions (`--mb`, default 40),
   every one in the workspace, ingested from scratch by `hippo ingest` alone (the SQLite
   path) and by `hippo ingest` with the workspace's `index_url` set (the same, then the
   push of every session and turn): each `--ingests` times, from an empty `HIPPO_HOME` and
   an empty database, and the ratio of the two.
2. **After one turn.** With both indexes built, one turn appended to a session before
   each run, untimed: `hippo ingest` with and without the team index, round after round
   with the floor (`python -c pass` of an empty venv).
3. **Search at a million turns.** The server's table filled to `--turns` (default
   1,000,000) with generated turns of the workspace's project, then `hippo search WORD`
   (the team's turns, `ts_rank` over a GIN index) beside the same search of the local
   index (`--local`, the corpus of step 1), each round with the floor.

No targets are set for these; the figures go into the closing note of the issue.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import uuid
from pathlib import Path

from harness import (
    ROOT,
    Case,
    clean_env,
    floor,
    header,
    installed_hippo,
    measure,
    prints_something,
    ratio_row,
    rounds,
    row,
    say,
)
from ingest import WORDS, _session_lines, append_turn, folder_name, ingested, make_hippo_workspace

sys.path.insert(0, str(ROOT))
from tests.postgres import PASSWORD, USER, running_server


def workspace_corpus(root: Path, workspace: Path, megabytes: int, seed: int = 5) -> list[Path]:
    """Session files of four turns each, all run in ``workspace``, until ``megabytes``."""
    rng = random.Random(seed)
    target, written, files = megabytes * 1024 * 1024, 0, []
    folder = root / "projects" / folder_name(str(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    while written < target:
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        path = folder / f"{session}.jsonl"
        data = "".join(line + "\n" for line in _session_lines(rng, str(workspace), session, 4))
        path.write_text(data)
        written += len(data)
        files.append(path)
    return files


def fill(server: object, database: str, turns: int) -> None:
    """``turns`` generated turns of the project ``shop``, in sessions of 20, made on the
    server itself (a generated vocabulary, so the words are spread as in real turns)."""
    words = ",".join(f"'{word}'" for word in WORDS)
    sessions = max(1, turns // 20)
    server.sql(  # type: ignore[attr-defined]
        "INSERT INTO hippo_sessions (machine, member, project, id, tool, native_id, started) "
        f"SELECT 'bench', 'member-' || (g % 7), 'shop', 'bench-' || g, 'claude-code', "
        f"'bench-' || g, '2026-11-01T00:00:00' FROM generate_series(1, {sessions}) g",
        database=database,
    )
    text = (
        f"(SELECT string_agg((ARRAY[{words}])[1 + floor(random() * {len(WORDS)})::int], ' ') "
        "FROM generate_series(1, 30 + (g % 2)))"
    )
    server.sql(  # type: ignore[attr-defined]
        "INSERT INTO hippo_turns (machine, member, project, session, ordinal, tool, key, "
        "prompt, answer, tools, started) "
        f"SELECT 'bench', 'member-' || ((g / 20) % 7), 'shop', 'bench-' || (1 + (g / 20)), "
        f"g % 20, 'claude-code', 'bench-key-' || g, {text}, {text}, '[]', "
        f"'2026-11-01T00:00:00' FROM generate_series(0, {turns - 1}) g",
        database=database,
    )
    server.sql("ANALYZE", database=database)  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=40)
    parser.add_argument("--ingests", type=int, default=3)
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--word", default="refund")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    hippo = installed_hippo(("postgres",))
    with tempfile.TemporaryDirectory() as tmp, running_server() as server:
        tmp_path = Path(tmp)
        python = floor(tmp_path)
        workspace = tmp_path / "shop"
        make_hippo_workspace(workspace)
        say(f"writing a {args.mb} MB corpus of the workspace's sessions")
        files = workspace_corpus(tmp_path / "corpus", workspace, args.mb)
        base = {"CLAUDE_CONFIG_DIR": str(tmp_path / "corpus"), "PGPASSWORD": PASSWORD}

        def url(database: str) -> str:
            return f"postgresql+psycopg://{USER}@127.0.0.1:{server.port}/{database}"

        alone, pushed = None, None
        for number in range(args.ingests):
            say(f"ingest {number + 1} of {args.ingests}: alone, then with the push")
            env = clean_env(tmp_path / f"alone-{number}", **base)
            one = measure([hippo, "ingest"], 1, cwd=workspace, env=env, check=ingested)
            alone = one if alone is None else alone.plus(one)
            database = f"ingest{number}"
            server.sql(f"CREATE DATABASE {database}", database="postgres")
            env = clean_env(tmp_path / f"team-{number}", HIPPO_INDEX_URL=url(database), **base)
            one = measure([hippo, "ingest"], 1, cwd=workspace, env=env, check=_pushed)
            pushed = one if pushed is None else pushed.plus(one)
        assert alone is not None and pushed is not None
        turns = server.sql("SELECT count(*) FROM hippo_turns", database="ingest0").strip()

        # After one turn: the homes of the last round are built; each run appends a turn.
        local_env = clean_env(tmp_path / f"alone-{args.ingests - 1}", **base)
        team_env = clean_env(
            tmp_path / f"team-{args.ingests - 1}",
            HIPPO_INDEX_URL=url(f"ingest{args.ingests - 1}"),
            **base,
        )
        rng = random.Random(3)
        target = files[0]
        later = rounds(
            {
                "floor": Case([python, "-c", "pass"], cwd=workspace, env=local_env),
                "alone": Case(
                    [hippo, "ingest"],
                    cwd=workspace,
                    env=local_env,
                    before=lambda: append_turn(target, str(workspace), rng),
                    check=ingested,
                ),
                "team": Case(
                    [hippo, "ingest"],
                    cwd=workspace,
                    env=team_env,
                    before=lambda: append_turn(target, str(workspace), rng),
                    check=_pushed,
                ),
            },
            args.runs,
        )

        say(f"filling a database to {args.turns:,} turns")
        server.sql("CREATE DATABASE million", database="postgres")
        search_env = clean_env(tmp_path / "search", HIPPO_INDEX_URL=url("million"), **base)
        measure([hippo, "ingest"], 1, cwd=workspace, env=search_env, check=_pushed)  # schema
        server.sql("TRUNCATE hippo_sessions CASCADE", database="million")
        fill(server, "million", args.turns)
        searched = rounds(
            {
                "floor": Case([python, "-c", "pass"], cwd=workspace, env=search_env),
                "team": Case(
                    [hippo, "search", args.word, "--limit", "20"],
                    cwd=workspace,
                    env=search_env,
                    check=prints_something,
                ),
                "local": Case(
                    [hippo, "search", args.word, "--local", "--limit", "20"],
                    cwd=workspace,
                    env=search_env,
                    check=prints_something,
                ),
            },
            args.runs,
        )
    header(f"the team index ({hippo}); a {args.mb} MB corpus, {turns} turns", args.runs)
    print(f"ingest from scratch, {args.ingests} runs each:")
    row("hippo ingest (SQLite alone)", alone, alone)
    row("hippo ingest with the push to PostgreSQL", pushed, alone)
    print("after one new turn:")
    floor_sample = later["floor"]
    row("python -c pass (the floor)", floor_sample, floor_sample)
    row("hippo ingest, one turn (SQLite alone)", later["alone"], floor_sample)
    row("hippo ingest, one turn, with the push", later["team"], floor_sample)
    ratio_row("with the push / alone", later["team"], later["alone"])
    print(f"search for {args.word!r}:")
    floor_sample = searched["floor"]
    row("python -c pass (the floor)", floor_sample, floor_sample)
    row(f"hippo search, team index of {args.turns:,} turns", searched["team"], floor_sample)
    row(f"hippo search --local ({turns} turns)", searched["local"], floor_sample)


def _pushed(out: str) -> str | None:
    problem = ingested(out)
    if problem:
        return problem
    return None if "team index" in out or "0 new turns" in out else "pushed nothing"


if __name__ == "__main__":
    main()
