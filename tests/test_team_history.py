"""`relevance = "history"` with a team index on a real PostgreSQL server (tests/postgres.py):
the ingest pulls the other members' sessions of the project, so the first prompt's ranking
counts what teammates opened, from the local index alone; private sessions never come, and a
server that is away leaves the hooks as they were."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.claude_factory import ClaudeSession
from tests.postgres import USER, Database, running_server
from tests.test_team_index import Machine, _machine, _url

NOTES = {
    "Stripe webhooks.md": "# Stripe webhooks\n\nEvents arrive signed; verify them.\n",
    "Checkout.md": "# Checkout\n\nThe cart becomes an order here.\n",
}
TASK = "the checkout page hangs after paying"


def member(tmp_path: Path, name: str, url: str) -> Machine:
    machine = _machine(tmp_path, name, url)
    settings = machine.root / ".hippo" / "settings.toml"
    settings.write_text(settings.read_text() + 'relevance = "history"\n')
    for path, text in NOTES.items():
        (machine.root / "notes" / path).write_text(text)
    return machine


def opened(machine: Machine, prompt: str, note: str, days: float = 1) -> str:
    start = datetime.now(UTC) - timedelta(days=days)
    made = ClaudeSession(machine.home / "claude", str(machine.root), start=start)
    made.prompt(prompt).tool("Read", file_path=str(machine.root / "notes" / note))
    made.answer("done").write()
    return made.session


def relevant(machine: Machine) -> list[str]:
    out = machine.hippo("context", "--task", TASK).stdout
    shown = out.split("relevant:\n", 1)[1].split("linter:", 1)[0] if "relevant:" in out else ""
    return [line.split(":", 1)[0][2:] for line in shown.splitlines()]


def test_a_teammates_sessions_count_once_pulled(postgres: Database, tmp_path: Path) -> None:
    alice, bob = (member(tmp_path, name, _url(postgres)) for name in ("alice", "bob"))
    opened(bob, "checkout hangs when paying by card", "Stripe webhooks.md")
    opened(bob, "<private-session>\ncheckout hangs when paying", "Checkout.md")
    bob.hippo("ingest")  # pushes his session (not the private one)
    assert relevant(alice) == ["Checkout"]  # nothing pulled yet
    pulled = json.loads(alice.hippo("ingest", "--json").stdout)
    assert pulled["team"]["history"] == 1
    assert relevant(alice) == ["Checkout", "Stripe webhooks"]
    # Unchanged on the server: nothing to pull again.
    assert json.loads(alice.hippo("ingest", "--json").stdout)["team"]["history"] == 0
    # Without the team index in the settings, only this machine's sessions count.
    settings = alice.root / ".hippo" / "settings.toml"
    saved = settings.read_text()
    settings.write_text('relevance = "history"\n')
    assert relevant(alice) == ["Checkout"]
    settings.write_text(saved)
    assert relevant(alice) == ["Checkout", "Stripe webhooks"]
    # Gone from the server (the team index made again): gone from the ranking at the next pull.
    postgres.server.sql("TRUNCATE hippo_sessions CASCADE", database=postgres.name)
    assert json.loads(alice.hippo("ingest", "--json").stdout)["team"]["history"] == 1
    assert relevant(alice) == ["Checkout"]


def test_a_server_that_is_away_leaves_what_was_pulled_and_the_hooks_work(
    tmp_path: Path,
) -> None:
    with running_server() as server:
        server.sql("CREATE DATABASE away", database="postgres")
        url = f"postgresql+psycopg://{USER}@127.0.0.1:{server.port}/away"
        alice, bob = member(tmp_path, "alice", url), member(tmp_path, "bob", url)
        opened(bob, "checkout hangs when paying by card", "Stripe webhooks.md")
        bob.hippo("ingest")
        alice.hippo("ingest")
        server.stop()
        offline = alice.hippo("ingest")
        assert offline.returncode == 0 and "warning: team index" in offline.stderr
        assert relevant(alice) == ["Checkout", "Stripe webhooks"]
        payload = json.dumps({"session_id": "s-1", "cwd": str(alice.root), "prompt": TASK})
        import subprocess

        from tests.test_team_index import HIPPO

        hook = subprocess.run(
            [HIPPO, "hook", "prompt"],
            cwd=alice.root,
            env=alice.env,
            input=payload,
            capture_output=True,
            text=True,
        )
        assert hook.returncode == 0 and "- Stripe webhooks:" in hook.stdout
        assert not (alice.home / "hippo" / "hooks.log").exists()
