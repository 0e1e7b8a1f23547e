"""The team index on a real PostgreSQL server (tests/postgres.py): two members, each with a
machine of their own (a ``HIPPO_HOME``, a Claude Code home, a clone of the workspace), run
the real ``hippo`` program; what their ingests push, what ``hippo search`` finds, and what
never leaves a machine."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.claude_factory import ClaudeSession
from tests.postgres import PASSWORD, USER, Database, running_server

HIPPO = str(Path(sys.executable).parent / "hippo")


@dataclass
class Machine:
    """One member's machine: its homes, its clone of the workspace, how it runs hippo."""

    name: str
    home: Path
    root: Path
    env: dict[str, str]

    def hippo(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [HIPPO, *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=False
        )
        if check:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def session(
        self, prompt: str, answer: str, session: str | None = None, hours_ago: float = 1
    ) -> str:
        start = datetime.now(UTC) - timedelta(hours=hours_ago)
        made = ClaudeSession(self.home / "claude", str(self.root), session=session, start=start)
        made.prompt(prompt)
        made.answer(answer)
        made.write()
        return made.session


def _machine(tmp_path: Path, name: str, url: str) -> Machine:
    """``name``'s machine. With a URL that names no user, ``name`` connects as a login role
    of their own (made here, as a team's administrator makes one), as hippo's row-level
    security wants; with one that names a user, as that user."""
    from urllib.parse import urlsplit

    home = tmp_path / name
    (home / "claude").mkdir(parents=True)
    root = home / "shop"
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text(f'index_url = "{url}"\n')
    (root / "notes").mkdir()
    (root / "notes" / "Home.md").write_text("# Home\n\nThe shop.\n")
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "HIPPO_HOME": str(home / "hippo"),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "HIPPO_LOAD_PLUGINS": "sleep",
        "PGPASSWORD": PASSWORD,
        "LANG": "C.UTF-8",
    }
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        member_role(parts.hostname or "", parts.port or 0, parts.path.lstrip("/"), name)
        env.update(PGUSER=name, PGPASSWORD=f"pw-{name}")
    return Machine(name, home, root, env)


def member_role(host: str, port: int, database: str, name: str) -> None:
    """A login role ``name`` (password ``pw-<name>``), no superuser, that may make tables in
    ``database``: what a team's administrator makes for each member."""
    import psycopg

    with psycopg.connect(
        host=host, port=port, user=USER, password=PASSWORD, dbname=database, autocommit=True
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'pw-{name}'")
        conn.execute(f"GRANT CREATE ON SCHEMA public TO {name}")


def _url(db: Database) -> str:
    """The settings' URL, as a team commits it: no user (each member's role comes from
    PGUSER, or the login name) and no password (PGPASSWORD, or ~/.pgpass)."""
    return f"postgresql+psycopg://127.0.0.1:{db.server.port}/{db.name}"


def test_two_members_push_and_search_each_others_turns(postgres: Database, tmp_path: Path) -> None:
    alice, bob = (_machine(tmp_path, name, _url(postgres)) for name in ("alice", "bob"))
    alice.session("why do refunds stall on weekends?", "The refunds queue pauses on Saturdays.")
    bob.session("fix the flaky checkout test", "The checkout test waited on the refunds queue.")
    pushed = alice.hippo("ingest")
    assert "team index postgresql+psycopg://127.0.0.1" in pushed.stdout
    assert "pushed 1 session (1 turn)" in pushed.stdout
    assert PASSWORD not in pushed.stdout + pushed.stderr
    bob.hippo("ingest")
    assert bob.hippo("ingest").stdout.count("pushed") == 0  # nothing new: nothing sent

    found = alice.hippo("search", "refunds queue").stdout
    assert "  alice\n" in found and "  bob\n" in found  # whose turn, each
    assert "[refunds] [queue]" in found
    only_bob = json.loads(alice.hippo("search", "refunds", "--who", "bob", "--json").stdout)
    assert [hit["who"] for hit in only_bob] == ["bob"]
    # The team's snippet comes from one text, as the local one does: the prompt's words are
    # not run into the answer's (newcomer defect 33).
    team_hit = alice.hippo("search", "weekends").stdout.splitlines()[1]
    local_hit = alice.hippo("search", "weekends", "--local").stdout.splitlines()[1]
    assert local_hit == "    why do refunds stall on [weekends]?"
    assert "[weekends]" in team_hit and "pauses" not in team_hit and "The" not in team_hit
    local = alice.hippo("search", "checkout", "--local", check=False)
    assert local.returncode == 1  # bob's turn is not on alice's machine
    assert postgres.sql("SELECT count(*) FROM hippo_turns") == "2\n"
    assert postgres.sql("SELECT DISTINCT project FROM hippo_turns") == "shop\n"


def test_private_text_never_leaves_the_machine(postgres: Database, tmp_path: Path) -> None:
    alice = _machine(tmp_path, "alice", _url(postgres))
    alice.session(
        "deploy with the key <private>hunter2-launch-code</private> please",
        "Deployed; the key was AKIAIOSFODNN7EXAMPLE.",
    )
    alice.session("<private-session>\nmy salary review", "Noted.")
    kept = alice.session("the invoices job", "The invoices job runs at 02:00.")
    alice.hippo("ingest")
    stored = postgres.sql("SELECT prompt || ' ' || answer FROM hippo_turns ORDER BY id")
    assert "hunter2" not in stored and "AKIA" not in stored and "salary" not in stored
    assert "[redacted:aws-access-key]" in stored
    assert "invoices job" in stored
    assert postgres.sql("SELECT count(*) FROM hippo_sessions") == "2\n"
    # A session made private after it was pushed is taken off the server by the next push.
    path = next((alice.home / "claude" / "projects").rglob(f"{kept}.jsonl"))
    later = ClaudeSession(alice.home / "claude", str(alice.root), session=kept)
    later.prompt("<private-session>\nforget this one")
    with path.open("a") as handle:
        handle.write("".join(line + "\n" for line in later.lines))
    assert "1 made private removed" in alice.hippo("ingest").stdout
    assert "invoices" not in postgres.sql("SELECT prompt || answer FROM hippo_turns")


def test_nothing_doubled_by_retries_rebuilds_or_two_ingests_at_once(
    postgres: Database, tmp_path: Path
) -> None:
    alice = _machine(tmp_path, "alice", _url(postgres))
    for number in range(30):
        alice.session(f"task {number} about caching", f"Answer {number} about caching.")
    runs = [
        subprocess.Popen(
            [HIPPO, "ingest"], cwd=alice.root, env=alice.env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    for run in runs:
        run.communicate(timeout=120)
        assert run.returncode == 0
    assert postgres.sql("SELECT count(*) FROM hippo_turns") == "30\n"
    alice.hippo("ingest", "--full")  # the local index rebuilt: everything pushed again
    assert postgres.sql("SELECT count(*) FROM hippo_turns") == "30\n"
    assert postgres.sql("SELECT count(*) FROM hippo_sessions") == "30\n"


def test_the_same_session_id_on_two_machines_is_two_sessions(
    postgres: Database, tmp_path: Path
) -> None:
    alice, bob = (_machine(tmp_path, name, _url(postgres)) for name in ("alice", "bob"))
    same = "11111111-2222-4333-8444-555555555555"
    alice.session("alpha question", "alpha answer", session=same)
    bob.session("beta question", "beta answer", session=same, hours_ago=-6)  # a clock ahead
    alice.hippo("ingest")
    bob.hippo("ingest")
    assert postgres.sql("SELECT count(DISTINCT machine), count(*) FROM hippo_sessions") == "2|2\n"
    assert "alpha" in alice.hippo("search", "alpha").stdout
    assert "beta" in alice.hippo("search", "beta").stdout


def test_a_server_that_is_away_leaves_the_local_index_working_and_catches_up(
    tmp_path: Path,
) -> None:
    with running_server() as server:
        server.sql("CREATE DATABASE away", database="postgres")
        url = f"postgresql+psycopg://{USER}@127.0.0.1:{server.port}/away"
        alice = _machine(tmp_path, "alice", url)
        alice.session("first question about tokens", "Tokens rotate monthly.")
        alice.hippo("ingest")
        server.stop()
        alice.session("second question about tokens", "Tokens live in the vault.")
        offline = alice.hippo("ingest")
        assert offline.stdout.startswith("ingested ")
        [warning] = [line for line in offline.stderr.splitlines() if "team index" in line]
        assert warning.startswith("warning: team index postgresql+psycopg://hippo@127.0.0.1")
        assert warning.endswith("the local index has everything; the next ingest catches up")
        searched = alice.hippo("search", "vault")
        assert "searching this machine's index instead" in searched.stderr
        assert "vault" in searched.stdout
        server.start()
        assert "pushed 1 session (1 turn)" in alice.hippo("ingest").stdout
        assert server.sql("SELECT count(*) FROM hippo_turns", database="away") == "2\n"


def test_bad_urls_passwords_and_schemas_are_one_line(postgres: Database, tmp_path: Path) -> None:
    alice = _machine(tmp_path, "alice", _url(postgres))
    alice.session("a question", "an answer")
    wrong = dict(alice.env, PGPASSWORD="not-it")
    done = subprocess.run(
        [HIPPO, "ingest"], cwd=alice.root, env=wrong, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "password authentication failed" in done.stderr
    assert "check the user and the password (in ~/.pgpass or PGPASSWORD)" in done.stderr
    assert "Traceback" not in done.stderr
    (alice.root / ".hippo" / "settings.toml").write_text('index_url = "mysql://x@y/z"\n')
    bad = alice.hippo("ingest", check=False)
    assert "index_url" in bad.stderr and "postgresql+psycopg://" in bad.stderr
    assert "Traceback" not in bad.stderr
    (alice.root / ".hippo" / "settings.toml").write_text(f'index_url = "{_url(postgres)}"\n')
    with_password = dict(alice.env, HIPPO_INDEX_URL=postgres.url(), PGPASSWORD="")
    done = subprocess.run(
        [HIPPO, "ingest"], cwd=alice.root, env=with_password, capture_output=True, text=True
    )
    assert "team index postgresql+psycopg://hippo:***@127.0.0.1" in done.stdout
    assert PASSWORD not in done.stdout + done.stderr
    postgres.sql("UPDATE hippo_meta SET value = '99' WHERE key = 'schema_version'")
    alice.session("another question", "another answer")
    newer = alice.hippo("ingest")
    assert "has schema 99; this hippo writes schema 2: a newer hippo made it" in newer.stderr
    env = dict(alice.env, HIPPO_INDEX_URL="http://example.org")
    done = subprocess.run(
        [HIPPO, "search", "question"],
        cwd=alice.root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and done.stderr.startswith("error: HIPPO_INDEX_URL=")


def test_the_dream_pushes_and_says_so(postgres: Database, tmp_path: Path) -> None:
    alice = _machine(tmp_path, "alice", _url(postgres))
    settings = alice.root / ".hippo" / "settings.toml"
    settings.write_text(settings.read_text() + 'model_command = ["true"]\n')
    alice.session("a dream question", "a dream answer")
    alice.hippo("dream", "--dry-run")  # a dry run sends nothing anywhere
    assert postgres.sql("SELECT to_regclass('hippo_turns') IS NULL") == "t\n"
    alice.hippo("dream")
    [report] = [
        p
        for p in (alice.root / ".hippo" / "reports").glob("*-dream.md")
        if "dry run" not in p.read_text()
    ]
    # The settings' index, the only one this machine has (its env has no HIPPO_INDEX_URL).
    assert f"team index {_url(postgres)}: pushed 1 session (1 turn)\n" in report.read_text()
    assert postgres.sql("SELECT member FROM hippo_turns") == "alice\n"


def test_a_dream_verifies_notes_against_every_members_sessions(
    postgres: Database, tmp_path: Path
) -> None:
    """Bob's session, pushed from his machine, is the evidence of a change Alice's dream
    makes: her prompt shows whose turn it is, and the proposal, the receipt and the report
    name him."""
    from tests.dream_scene import CONFIRM, PROPOSER, TESTING, VERIFY_REVIEWER, replace
    from tests.models import calls, scripted_model

    alice, bob = (_machine(tmp_path, name, _url(postgres)) for name in ("alice", "bob"))
    for machine in (alice, bob):
        (machine.root / "notes" / "Testing.md").write_text(TESTING)
    session = bob.session(
        "How do we run the Testing suite now that the Makefile is gone?",
        "The Makefile was removed. I ran `uv run pytest -q` from the repository root "
        "and all 214 tests passed.",
    )
    assert "pushed 1 session" in bob.hippo("ingest").stdout
    proposal = replace(evidence=[{"session": session, "ordinal": 0}])
    argv, script = scripted_model(
        tmp_path,
        [
            {"when": [PROPOSER], "reply": json.dumps([proposal])},
            {"when": [VERIFY_REVIEWER], "reply": CONFIRM},
        ],
    )
    alice.hippo("init")  # the core pack's passes
    settings = alice.root / ".hippo" / "settings.toml"
    settings.write_text(settings.read_text() + f"model_command = {json.dumps(argv)}\n")
    alice.hippo("dream")
    [report] = (alice.root / ".hippo" / "reports").glob("*-dream.md")
    assert "`uv run pytest -q`" in (alice.root / "notes" / "Testing.md").read_text(), (
        report.read_text()
    )
    [sent] = [c for c in calls(script) if PROPOSER in json.dumps(c)]
    assert f"### Session {session}, turn 0 (started " in json.dumps(sent)
    prompt = sent["prompt"]
    assert ', by "bob", a teammate;' in prompt and '- by: "bob" (a teammate)' in prompt
    [receipt] = (alice.root / ".hippo" / "receipts").glob("*.json")
    assert json.loads(receipt.read_text())["evidence"] == [
        {"session": session, "ordinal": 0, "who": "bob"}
    ]
    assert f"(evidence: {session} turn 0 by bob, a teammate)" in report.read_text()
    assert "sessions: every member's of 'shop', from postgresql+psycopg://" in report.read_text()


def test_hippo_eval_measures_the_team_index(postgres: Database, tmp_path: Path) -> None:
    """Bob's session read the note in his clone; Alice's ``hippo eval`` counts it."""
    alice, bob = (_machine(tmp_path, name, _url(postgres)) for name in ("alice", "bob"))
    for machine in (alice, bob):
        (machine.root / "notes" / "Deploy.md").write_text("# Deploy\n\nRun make deploy.\n")
    made = ClaudeSession(bob.home / "claude", str(bob.root), start=datetime.now(UTC))
    made.prompt("how do we deploy the shop?")
    made.tool("Read", "Run make deploy.", file_path=str(bob.root / "notes" / "Deploy.md"))
    made.answer("We deploy with make deploy.")
    made.write()
    bob.hippo("ingest")
    alice.hippo("ingest")  # her own index: no session read Deploy.md here
    verify = json.loads(alice.hippo("eval", "verify", "--json").stdout)
    assert verify["sessions"] == 1 and verify["truth"] == 1 and verify["recall"] == 1.0
    context = json.loads(alice.hippo("eval", "context", "--json").stdout)
    assert context["tasks"] == 1


def test_other_projects_stay_local_unless_the_setting_says_otherwise(
    postgres: Database, tmp_path: Path
) -> None:
    alice = _machine(tmp_path, "alice", _url(postgres))
    elsewhere = alice.home / "side-project"
    elsewhere.mkdir()
    made = ClaudeSession(alice.home / "claude", str(elsewhere), start=datetime.now(UTC))
    made.prompt("the side project's parser")
    made.answer("The parser is recursive descent.")
    made.write()
    alice.session("the shop's parser", "The shop has no parser.")
    alice.hippo("ingest")
    assert "side project" not in postgres.sql("SELECT prompt FROM hippo_turns")
    settings = alice.root / ".hippo" / "settings.toml"
    settings.write_text(settings.read_text() + 'index_share = "machine"\n')
    alice.hippo("ingest")
    assert postgres.sql("SELECT project, count(*) FROM hippo_turns GROUP BY 1 ORDER BY 1") == (
        "|1\nshop|1\n"
    )
    assert "side project" not in alice.hippo("search", "parser").stdout  # the shop's only
    assert "side project's [parser]" in alice.hippo("search", "parser", "--all-projects").stdout
    bare = subprocess.run(
        [HIPPO, "search", "parser", "--all-projects"],
        cwd=elsewhere,
        env=alice.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bare.returncode == 2 and "--all-projects needs a team index" in bare.stderr


def test_machine_sharing_never_sends_a_private_session_of_another_project(
    postgres: Database, tmp_path: Path
) -> None:
    alice = _machine(tmp_path, "alice", _url(postgres))
    settings = alice.root / ".hippo" / "settings.toml"
    settings.write_text(settings.read_text() + 'index_share = "machine"\n')
    elsewhere = alice.home / "side-project"
    elsewhere.mkdir()
    start = datetime.now(UTC) - timedelta(hours=1)
    secret = ClaudeSession(alice.home / "claude", str(elsewhere), start=start)
    secret.prompt("<private-session>\nthe side project's salary sheet")
    secret.answer("The salary sheet is payroll-2026.ods.")
    secret.write()
    shared = ClaudeSession(alice.home / "claude", str(elsewhere), start=start)
    shared.prompt("the side project's parser")
    shared.answer("The parser is recursive descent.")
    shared.write()

    assert "pushed 1 session (1 turn)" in alice.hippo("ingest").stdout
    assert postgres.sql("SELECT project, prompt, answer FROM hippo_turns") == (
        "|the side project's parser|The parser is recursive descent.\n"
    )
    # The server does not even hear of the private session: no row, so not its folder.
    sessions = postgres.sql("SELECT id, cwd FROM hippo_sessions")
    assert sessions == f"{shared.session}|{elsewhere}\n"

    # Made private after it was pushed, the other project's session is taken off the server,
    # and the next push does not send it back.
    later = ClaudeSession(alice.home / "claude", str(elsewhere), session=shared.session)
    later.prompt("<private-session>\nforget this one")
    with shared.path.open("a") as handle:
        handle.write("".join(line + "\n" for line in later.lines))
    assert "pushed 0 sessions (0 turns), 1 made private removed" in alice.hippo("ingest").stdout
    alice.hippo("ingest", "--full")
    assert postgres.sql("SELECT count(*) FROM hippo_sessions") == "0\n"
    assert postgres.sql("SELECT count(*) FROM hippo_turns") == "0\n"


def test_a_server_that_dies_mid_push_keeps_none_of_it_and_the_next_ingest_sends_it(
    tmp_path: Path,
) -> None:
    import time

    with running_server() as server:
        server.sql("CREATE DATABASE dies", database="postgres")
        url = f"postgresql+psycopg://{USER}@127.0.0.1:{server.port}/dies"
        alice = _machine(tmp_path, "alice", url)
        for number in range(1500):
            alice.session(f"question {number} about queues", f"answer {number} about queues")
        ingest = subprocess.Popen(
            [HIPPO, "ingest"],
            cwd=alice.root,
            env=alice.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # The tables are made in a transaction of their own, just before the push's.
        for _ in range(3000):
            if (
                server.sql("SELECT to_regclass('hippo_turns') IS NOT NULL", database="dies")
                == "t\n"
            ):
                break
            time.sleep(0.01)
        server.stop()  # fast shutdown: open transactions are rolled back
        out, err = ingest.communicate(timeout=120)
        assert ingest.returncode == 0 and out.startswith("ingested "), err
        server.start()
        left = int(server.sql("SELECT count(*) FROM hippo_turns", database="dies"))
        if "warning: team index" in err:
            assert left == 0  # the push was one transaction: nothing of it stayed
        alice.hippo("ingest")
        counts = server.sql(
            "SELECT count(*), count(DISTINCT (session, ordinal)) FROM hippo_turns", database="dies"
        )
        assert counts == "1500|1500\n"


def test_doctor_says_what_the_team_index_holds(postgres: Database, tmp_path: Path) -> None:
    alice, bob = (_machine(tmp_path, name, _url(postgres)) for name in ("alice", "bob"))
    alice.session("one", "answer one")
    bob.session("two", "answer two")
    alice.hippo("ingest")
    bob.hippo("ingest")
    said = alice.hippo("doctor", check=False).stdout
    assert "info: team index: postgresql+psycopg://127.0.0.1:" in said
    assert ": 2 sessions of 'shop' from 2 members, 1 pushed from this machine" in said
    away = dict(alice.env, HIPPO_INDEX_URL=f"postgresql+psycopg://{USER}@127.0.0.1:1/none")
    done = subprocess.run(
        [HIPPO, "doctor"], cwd=alice.root, env=away, capture_output=True, text=True, check=False
    )
    assert "warning: team index: postgresql+psycopg://hippo@127.0.0.1:1/none: " in done.stdout


def test_the_relevance_check_reads_only_the_latest_team_sessions(
    postgres: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35, F3: `hippo doctor`'s relevance check read every team session's row, files
    and first prompt before it kept the latest; it asks the server for the latest alone."""
    from hippo_core import Workspace
    from hippo_core.dream.measure import measure_context
    from hippo_core.dream.team_turns import TeamTurnIndex

    alice, bob = (_machine(tmp_path, name, _url(postgres)) for name in ("alice", "bob"))
    for machine in (alice, bob):
        (machine.root / "notes" / "Deploy.md").write_text("# Deploy\n\nRun make deploy.\n")
    made = []
    for day in range(12):
        start = datetime.now(UTC) - timedelta(days=12 - day)
        session = ClaudeSession(bob.home / "claude", str(bob.root), start=start)
        session.prompt(f"how do we deploy the shop, day {day}?")
        session.tool("Read", file_path=str(bob.root / "notes" / "Deploy.md"))
        session.answer("We deploy with make deploy.").write()
        made.append(session.session)
    bob.hippo("ingest")
    alice.hippo("ingest")
    for name, value in alice.env.items():
        monkeypatch.setenv(name, value)
    asked: list[str] = []
    files, records = TeamTurnIndex.session_files, TeamTurnIndex.records

    def session_files(self: TeamTurnIndex, session: str) -> list[tuple[str, str]]:
        asked.append(session)
        return files(self, session)

    def counted(self: TeamTurnIndex, latest: int | None = None) -> list[dict[str, object]]:
        found = records(self, latest)
        asked.append(f"{len(found)} records")
        return found

    monkeypatch.setattr(TeamTurnIndex, "session_files", session_files)
    monkeypatch.setattr(TeamTurnIndex, "records", counted)
    found = measure_context(Workspace.open(alice.root), baseline=False, latest=5)
    assert asked == ["5 records", *made[-5:]]
    assert found["tasks"] == 5


def test_a_long_session_is_pushed_in_pieces(postgres: Database, tmp_path: Path) -> None:
    """More turns than one statement takes: 5,000 of 14 values each is over PostgreSQL's
    65,535 parameters; each turn touched a file."""
    alice = _machine(tmp_path, "alice", _url(postgres))
    made = ClaudeSession(alice.home / "claude", str(alice.root), start=datetime.now(UTC))
    for number in range(5000):
        made.prompt(f"step {number}")
        made.tool("Read", "ok", file_path=str(alice.root / "notes" / "Home.md"))
        made.answer(f"done {number}")
    made.write()
    assert "pushed 1 session (5000 turns)" in alice.hippo("ingest").stdout
    assert postgres.sql("SELECT count(*), count(DISTINCT ordinal) FROM hippo_turns") == (
        "5000|5000\n"
    )
    assert postgres.sql("SELECT count(*), min(path) FROM hippo_touched") == "5000|notes/Home.md\n"


def test_a_declared_handoff_reaches_the_team_redacted(postgres: Database, tmp_path: Path) -> None:
    """``hippo session end --handoff`` writes the session's record, not the index: the next
    push still sends it, redacted."""
    bob = _machine(tmp_path, "bob", _url(postgres))
    session = bob.session("move the refunds job", "Moved it to the nightly queue.")
    bob.hippo("ingest")
    bob.hippo(
        "session",
        "end",
        "--id",
        session,
        "--handoff",
        "Refunds now run nightly; the key AKIAIOSFODNN7EXAMPLE moved to the vault.",
    )
    assert "pushed 0 sessions (0 turns), 1 handoff" in bob.hippo("ingest").stdout
    assert postgres.sql("SELECT handoff FROM hippo_sessions") == (
        "Refunds now run nightly; the key [redacted:aws-access-key] moved to the vault.\n"
    )
    assert "pushed" not in bob.hippo("ingest").stdout  # sent once


def test_a_teammate_s_name_and_turns_reach_the_terminal_without_escape_sequences(
    postgres: Database, tmp_path: Path
) -> None:
    """Finding T1: a prompt with escape sequences, pushed by one member, printed raw by
    another's `hippo search` on a terminal (click strips CSI only off one). The member's
    name is the server's (its login role), so it cannot carry one (issue 37)."""
    from tests.pty_run import in_terminal

    alice, eve = (_machine(tmp_path, name, _url(postgres)) for name in ("alice", "eve"))
    eve.session("escape test \x1b[2J\x1b[31mRED\x1b]0;TITLE-PWNED\x07 termword", "ok")
    eve.hippo("ingest")

    screen = in_terminal([HIPPO, "search", "termword"], alice.root, alice.env)

    assert "\x1b" not in screen and "\x07" not in screen, repr(screen)
    assert "  eve\r\n" in screen
    assert "escape test \u241b[2J\u241b[31mRED\u241b]0;TITLE-PWNED\u2407 [termword]" in screen
    stored = postgres.sql("SELECT prompt FROM hippo_turns")
    assert stored.startswith("escape test \x1b[2J")  # kept as it was sent


def test_the_machine_id_and_the_push_watermarks_are_owner_only(
    postgres: Database, tmp_path: Path
) -> None:
    """Finding P1: machine.json and team/*.json were 0644 under umask 022."""
    alice = _machine(tmp_path, "alice", _url(postgres))
    alice.session("why do refunds stall on weekends?", "The refunds queue pauses on Saturdays.")
    done = subprocess.run(
        [HIPPO, "ingest"],
        cwd=alice.root,
        env=alice.env,
        capture_output=True,
        text=True,
        umask=0o022,
        check=False,
    )
    assert "pushed 1 session" in done.stdout, done.stderr
    home = alice.home / "hippo"
    [watermark] = (home / "team").glob("*.json")
    for path, mode in ((home, 0o700), (home / "team", 0o700), (home / "machine.json", 0o600)):
        assert path.stat().st_mode & 0o777 == mode, path
    assert watermark.stat().st_mode & 0o777 == 0o600
