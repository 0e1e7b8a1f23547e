"""The month's world (bench/month.py): the notes of `relay`, a small notification service,
as the month starts, and the sessions its three engineers work, day by day.

Three facts change mid-month, on fixed days: the API's port (8080 to 8443, day 9), the
email vendor (Mailgun to Postmark, day 16) and local Redis's port (6379 to 6380, day 22).
The sessions after a change speak of the new value, so a nightly verify can correct the
notes that still say the old one. Everything is drawn from the random generator given.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

MEMBERS = ("alice", "bob", "carol")
#: (old, new, the day from which the sessions say the new one)
CHANGES = (("8080", "8443", 9), ("Mailgun", "Postmark", 16), ("6379", "6380", 22))


def _note(kind: str, title: str, body: str, sources: str = "") -> str:
    head = f"---\ntype: {kind}\nstatus: current\nupdated: 2026-12-01\n"
    if sources:
        head += f"sources: [{sources}]\n"
    return f"{head}---\n# {title}\n\n{body.strip()}\n"


NOTES = {
    "Home.md": _note(
        "topic",
        "relay",
        """
relay sends our transactional email and SMS: an API that takes `POST /v1/messages`, an
outbox in Postgres, and a worker that hands messages to the vendors.

- [[Architecture]], [[Runbooks/Deploy]], [[Testing]], [[Queue]], [[Onboarding]]
- Vendors: [[Vendors/Email]] and [[Vendors/SMS]]
""",
    ),
    "Architecture.md": _note(
        "topic",
        "Architecture",
        """
relay has three parts: the API, the outbox in Postgres, and the worker.

## The API

The API listens on port 8080 inside the pod; the ingress terminates TLS in front of it.

## The worker

The worker reads the outbox through Redis streams (see [[Queue]]) and calls the vendor of
each message. Local Redis runs on port 6379 in docker compose.
""",
        '"relay/config.py", "deploy/values.yaml"',
    ),
    "Runbooks/Deploy.md": _note(
        "runbook",
        "Deploy",
        """
Deploys run from `main` after CI passes: `make deploy ENV=staging`, a smoke test, then
`make deploy ENV=prod`.

## Health check inside the pod

`curl -fsS http://localhost:8080/health` from a debug container.
""",
    ),
    "Runbooks/Rollback.md": _note(
        "runbook",
        "Rollback",
        "`make rollback ENV=prod` rolls back to the previous Helm revision.",
    ),
    "Testing.md": _note(
        "topic",
        "Testing",
        """
Run `pytest -n 4`; the suite needs docker compose up (Postgres and Redis).

## Known flaky tests

- `tests/test_worker.py::test_retry_backoff` fails about one run in twenty under `-n 4`.
""",
        '"tests/"',
    ),
    "Vendors/Email.md": _note(
        "vendor",
        "Email vendor",
        """
Outbound email goes through Mailgun (EU region), from `relay/vendors/email.py`.

## Bounces

Hard bounces come back on `/v1/webhooks/email` and mark the address dead.
""",
    ),
    "Vendors/SMS.md": _note(
        "vendor", "SMS vendor", "SMS go through Twilio, from `relay/vendors/sms.py`."
    ),
    "Database.md": _note(
        "topic",
        "Database",
        "Postgres 15. Migrations are Alembic scripts in `migrations/`.",
        '"migrations/"',
    ),
    "Queue.md": _note(
        "topic",
        "Queue",
        """
The worker reads the `relay:outbox` Redis stream with a consumer group per worker pod.
Retries back off 5 s, 30 s, 5 min, then the message is parked in `relay:dead`.

Local Redis runs on port 6379 (`docker compose up redis`).
""",
        '"relay/worker.py"',
    ),
    "Onboarding.md": _note(
        "topic",
        "Onboarding",
        """
1. `docker compose up -d` starts Postgres and Redis.
2. `make dev` runs the API on port 8080.
""",
    ),
    "Conventions.md": _note(
        "policy",
        "Conventions",
        "Every change goes through a pull request with one review; a new endpoint gets a "
        "line in [[API/Endpoints]].",
    ),
    "API/Endpoints.md": _note(
        "reference",
        "Endpoints",
        "- `POST /v1/messages`: queue a message.\n- `GET /health`: liveness.",
        '"relay/api.py"',
    ),
    "Monitoring.md": _note(
        "topic",
        "Monitoring",
        "The Grafana dashboard `relay / overview` shows queue depth and vendor errors.",
    ),
}

#: Tasks `hippo context --task` is asked in the evening.
TASKS = (
    "fix the flaky retry test",
    "why are bounces not marked dead",
    "deploy the hotfix to prod",
    "the dead-letter stream is growing",
    "set up relay on a new laptop",
)


@dataclass
class Turn:
    """One prompt of a session and what the agent did for it."""

    prompt: str
    answer: str
    reads: list[str] = field(default_factory=list)  # workspace-relative paths
    edits: list[tuple[str, str]] = field(default_factory=list)  # (note, line to append)
    writes: list[tuple[str, str]] = field(default_factory=list)  # (new note, text)
    bash: list[tuple[str, str]] = field(default_factory=list)  # (command, output)


@dataclass
class Plan:
    """One session: its turns, its handoff (with the notes for ``--note``) and the
    fragments alice remembers during it, (text, topic)."""

    turns: list[Turn]
    handoff: str | None = None
    handoff_notes: list[str] = field(default_factory=list)
    fragments: list[tuple[str, str]] = field(default_factory=list)


class Book:
    """Draws each member's sessions of a day."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.written = 0  # incident and decision notes written so far
        self.day, self.date = 1, ""

    def value(self, old: str) -> str:
        """``old`` as the day's sessions say it: the new value from its change's day on."""
        return next((new for was, new, day in CHANGES if was == old and self.day >= day), old)

    def plans(self, member: str, day: int, date: str, count: int) -> list[Plan]:
        self.day, self.date = day, date
        found = [p for p in [self.planted(member, day)] if p is not None]
        while len(found) < count:
            found.append(self.ordinary(member))
        self.rng.shuffle(found)
        return found

    def planted(self, member: str, day: int) -> Plan | None:
        """The sessions that change a fact, each ending with a handoff that says so."""
        if member == "bob" and day == 9:
            return Plan(
                [
                    Turn(
                        "Move the API from port 8080 to 8443 and update the deploy runbook.",
                        "Done. The API now listens on port 8443; the health check in "
                        "notes/Runbooks/Deploy.md now uses http://localhost:8443/health.",
                        reads=["notes/Runbooks/Deploy.md", "relay/config.py"],
                        edits=[("notes/Runbooks/Deploy.md", "Port 8443 since the TLS move.")],
                    )
                ],
                "The API now listens on port 8443 inside the pod. [[Runbooks/Deploy]] is "
                "updated; [[Architecture]] and [[Onboarding]] still say 8080.",
                ["notes/Runbooks/Deploy.md"],
            )
        if member == "carol" and day == 16:
            return Plan(
                [
                    Turn(
                        "Mailgun keeps throttling us. Switch outbound email to Postmark.",
                        "Switched. Outbound email goes through Postmark now: "
                        "relay/vendors/email.py uses the Postmark client.",
                        reads=["notes/Vendors/Email.md", "relay/vendors/email.py"],
                    )
                ],
                "We switched outbound email from Mailgun to Postmark. [[Vendors/Email]] "
                "should say so.",
                ["notes/Vendors/Email.md"],
            )
        if member == "alice" and day == 22:
            return Plan(
                [
                    Turn(
                        "Local Redis clashes with another project's on 6379. Move relay's "
                        "local Redis to port 6380.",
                        "Done: local Redis now runs on port 6380 in docker-compose.yml.",
                        reads=["notes/Queue.md", "docker-compose.yml"],
                    )
                ],
                "Local Redis moved to port 6380 (docker-compose.yml). [[Queue]] should say so.",
                ["notes/Queue.md"],
                [("Local Redis moved to port 6380", "redis")],
            )
        return None

    def ordinary(self, member: str) -> Plan:
        kind = self.rng.choices(
            ["feature", "bug", "deploy", "incident", "tests", "vendor", "decision", "docs"],
            weights=[18, 16, 10, 6, 12, 8, 4, 8],
        )[0]
        plan: Plan = getattr(self, "_" + kind)()
        if member != "alice":
            plan.fragments = []
        return plan

    def _handoff(self, plan: Plan, chance: float, text: str, note: str) -> Plan:
        if self.rng.random() < chance:
            plan.handoff, plan.handoff_notes = text, [f"notes/{note}.md"]
        return plan

    def _feature(self) -> Plan:
        note, path, fact = self.rng.choice(
            [
                ("API/Endpoints", "relay/api.py", "Rate limits are 50 requests a second per key."),
                ("API/Endpoints", "relay/api.py", "Messages take an optional priority field."),
                ("Vendors/SMS", "relay/vendors/sms.py", "SMS are sent in batches of up to 20."),
                ("Architecture", "relay/worker.py", "Each tenant has a daily send quota."),
                ("Vendors/Email", "relay/vendors/email.py", "Email bodies can name a template."),
            ]
        )
        turns = [
            Turn(
                f"add this: {fact}",
                f"I read notes/{note}.md and {path}. Added it: {fact}",
                reads=[f"notes/{note}.md", path],
            )
        ]
        if self.rng.random() < 0.4:
            turns.append(
                Turn(
                    "mention it where the team will find it",
                    f"Added a line to notes/{note}.md.",
                    edits=[(f"notes/{note}.md", f"- {fact}")],
                )
            )
        plan = Plan(turns, fragments=[(fact, note.split("/")[-1].lower())])
        return self._handoff(plan, 0.6, f"{fact} [[{note}]] should say so.", note)

    def _bug(self) -> Plan:
        port = self.value("8080")
        note, path, fix = self.rng.choice(
            [
                ("API/Endpoints", "relay/api.py", "a missing receipt is now status sent"),
                ("Queue", "relay/worker.py", "the worker parks unrenderable messages"),
                ("Vendors/Email", "relay/vendors/email.py", "bounce webhooks dedupe on event id"),
                ("Database", "migrations/", "indexes on delivery_log are made CONCURRENTLY"),
                ("Architecture", "relay/api.py", f"GET /health on port {port} checks Redis too"),
            ]
        )
        turn = Turn(
            f"{fix.split(' ')[0]} is broken: find out why and fix it",
            f"Found it in {path}. Fixed: {fix}. I checked notes/{note}.md first.",
            reads=[path, f"notes/{note}.md"],
            bash=[("pytest -n 4 -x", "212 passed in 41.2s")],
        )
        plan = Plan([turn], fragments=[(fix, note.split("/")[-1].lower())])
        return self._handoff(plan, 0.5, f"Fixed: {fix}. [[{note}]] should say so.", note)

    def _deploy(self) -> Plan:
        port = self.value("8080")
        turn = Turn(
            "deploy main to staging, then prod",
            "Deployed: `make deploy ENV=staging`, the smoke test passed, then prod. "
            f"Following notes/Runbooks/Deploy.md; the pod's health check is on port {port}.",
            reads=["notes/Runbooks/Deploy.md", "Makefile"],
            bash=[(f"curl -fsS http://localhost:{port}/health", "ok")],
        )
        plan = Plan([turn], fragments=[("deploys run from main after CI is green", "deploy")])
        return self._handoff(
            plan, 0.35, "Deployed today; [[Runbooks/Deploy]] worked as written.", "Runbooks/Deploy"
        )

    def _incident(self) -> Plan:
        self.written += 1
        what = self.rng.choice(["Dead-letter spike", "Vendor timeouts", "Stuck consumer group"])
        name = f"Incidents/{self.date} {what} {self.written}"
        text = _note(
            "incident",
            f"{what}, {self.date}",
            f"The dead-letter stream grew by {self.rng.randint(60, 400)} messages in ten "
            "minutes. See [[Queue]] and [[Monitoring]].",
        )
        turns = [
            Turn(
                "we got paged: the dead-letter stream is growing. investigate",
                "A stuck consumer group; XAUTOCLAIM drained it. I wrote an incident note.",
                reads=["notes/Monitoring.md", "notes/Queue.md"],
                writes=[(f"notes/{name}.md", text)],
                bash=[("redis-cli XAUTOCLAIM relay:outbox workers w1 60000 0", "OK")],
            )
        ]
        plan = Plan(
            turns,
            f"Incident written up in [[{name}]]; XAUTOCLAIM drains a stuck consumer group. "
            "[[Queue]] should mention it.",
            ["notes/Queue.md", f"notes/{name}.md"],
            [("XAUTOCLAIM drains a stuck consumer group", "oncall")],
        )
        return plan

    def _tests(self) -> Plan:
        redis = self.value("6379")
        turn = Turn(
            "run the full test suite and tell me what fails",
            "Everything passes (notes/Testing.md says how to run it).",
            reads=["notes/Testing.md"],
            bash=[("docker compose up -d", f"redis on port {redis}: started")],
        )
        plan = Plan(
            [turn], fragments=[(f"local Redis for the tests runs on port {redis}", "redis")]
        )
        return self._handoff(plan, 0.3, "The suite passed today on main. [[Testing]]", "Testing")

    def _vendor(self) -> Plan:
        vendor = self.value("Mailgun")
        turn = Turn(
            "check the email bounce rate with the vendor",
            f"Outbound email goes through {vendor}; bounces are 0.4% this week.",
            reads=["notes/Vendors/Email.md"],
        )
        plan = Plan([turn], fragments=[(f"outbound email goes through {vendor}", "email")])
        return self._handoff(
            plan, 0.3, "Bounce rates are fine; [[Vendors/Email]] is current.", "Vendors/Email"
        )

    def _decision(self) -> Plan:
        self.written += 1
        topic = self.rng.choice(["Keep the outbox under 30 days", "One worker pod per vendor"])
        name = f"Decisions/{self.date[:7]} {topic} {self.written}"
        text = _note(
            "decision",
            topic,
            f"We decided: {topic.lower()}. It keeps the worker simple. See [[Architecture]].",
        )
        turn = Turn(
            f"write up our decision: {topic.lower()}",
            f"Wrote notes/{name}.md with the reasons we discussed.",
            reads=["notes/Architecture.md"],
            writes=[(f"notes/{name}.md", text)],
        )
        return Plan(
            [turn],
            f"Recorded the decision in [[{name}]]. [[Architecture]] should link it.",
            ["notes/Architecture.md"],
        )

    def _docs(self) -> Plan:
        note, fact = self.rng.choice(
            [
                ("Monitoring", "The `relay / vendors` dashboard shows per-vendor latency."),
                ("Database", "`make db-shell ENV=staging` opens psql read-only."),
                ("Runbooks/Rollback", "`helm history relay` lists the revisions to go back to."),
                ("Queue", "`redis-cli XINFO GROUPS relay:outbox` shows each group's lag."),
            ]
        )
        turn = Turn(
            f"document this in our notes: {fact}",
            f"Added it to notes/{note}.md.",
            reads=[f"notes/{note}.md"],
            edits=[(f"notes/{note}.md", fact)],
        )
        return self._handoff(Plan([turn]), 0.4, f"{fact} Added to [[{note}]].", note)
