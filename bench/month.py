"""A month of a three-person team on hippo, then a month away and two days back: what a
night of dreaming loses and what it costs (issue 35).

alice, bob and carol each have a home (``HIPPO_HOME``, ``CLAUDE_CONFIG_DIR``) and a clone of
one repository of notes, pushed and pulled through a local bare repository, and share a
PostgreSQL team index (tests/postgres.py starts a real server for the run; each member
connects as their own login role). Every hippo process runs at its simulated time through
``HIPPO_NOW`` alone. Day 1 is Monday 2027-01-04; each day:

- 08:40 and 12:55 alice's sleep ticks; each member works ``--sessions`` Claude Code
  sessions (bench/month_book.py draws them): the hooks run with Claude Code's payloads
  (``session-start``, ``prompt``, ``session-end``), the transcript is written as Claude Code
  writes it (tests/claude_factory.py), the agent's edits land on the notes, alice keeps
  fragments (``hippo remember``), and some sessions end with ``hippo session end
  --handoff``; each member ingests at 12:50;
- 18:00 each member runs ``hippo ingest``, ``hippo log`` and ``hippo doctor``, alice also
  ``hippo context --task``; then they commit, pull and push; 19:00 alice sleeps (the sleep
  pack in mechanical mode: ``brief``, ``nudge``, a review of every draft, ``sleep tick``;
  the evening before the month away she denies the draft and leaves its redraft waiting);
- every third evening carol works a session at 20:30 that reaches the server at her next
  noon ingest; bob dreams weekly at 22:05; alice dreams every night at 23:05. The model is
  bench/month_model.py, a scripted program that logs every call.

After ``--days`` days nobody runs anything for ``--away`` days; on the first day back the
missed dream runs once the first sessions have started (10:30), and the team works two days.

It prints a row per night and a summary, each figure with the command it comes from, and
exits 1 when an invariant of the issue fails: a confirmed change dropped, a session's
handoff that no dream read, a fragment aged out by the month away, a hippo command that
failed.

Run from the checkout's dev venv (it starts PostgreSQL with the tests' helper):
``.venv/bin/python bench/month.py [--days 30] [--away 30] [--sessions 5] [--seed N]
[--root DIR]``. hippo is the ``hippo`` script of a venv where this checkout is
pip-installed with its ``postgres`` extra (bench/harness.py), or ``--hippo PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness import ROOT, as_a_person, clean_env, floor, installed_hippo, say, spawn
from month_book import MEMBERS, NOTES, TASKS, Book, Plan

sys.path.insert(0, str(ROOT))
from tests.claude_factory import ClaudeSession
from tests.postgres import DATABASE, Postgres, running_server

HERE = Path(__file__).resolve().parent
START = datetime(2027, 1, 4, tzinfo=UTC)  # day 1, a Monday
BACK_DAYS = 2
#: Receipt states of a confirmed change that did not land (hippo_core/dream/apply.py).
UNLANDED = ("note changed", "carried", "not applied")
#: The summary's figures that must be 0, and what the last line calls them.
INVARIANTS = {
    "  ...of them dropped (never landed later)": "confirmed changes dropped",
    "  ...read by no dream": "handoffs no dream read",
    "fragments aged out by the month away": "fragments aged out by the month away",
    "hippo commands that failed": "hippo commands failed",
}


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Done:
    """A finished child: exit status, output, and its own CPU and wall seconds."""

    rc: int
    out: str
    err: str
    cpu: float
    wall: float


def call(argv: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> Done:
    """Run ``argv`` as bench/harness.py measures a child (:func:`harness.spawn`)."""
    ran = spawn(list(argv), cwd=cwd, env=env, stdin=stdin)
    return Done(ran.rc, ran.out, ran.err, ran.cpu, ran.wall)


def at_terminal(argv: list[str], env: dict[str, str], cwd: Path) -> Done:
    """Run ``argv`` as a person at her terminal (:func:`harness.as_a_person`): what only a
    person may approve (a core from one fragment) lands. What it printed, standard error
    included, is ``out``."""
    began = time.perf_counter()
    code, text, cpu = as_a_person(argv, cwd, env)
    return Done(code, text, "", cpu, time.perf_counter() - began)


@dataclass
class Session:
    """One session worked, as the bench knows it: what it touched and when it reached an
    index (its member's next ``hippo ingest``, or alice's dream for hers)."""

    member: str
    id: str
    handoff: str | None
    touched: set[str]
    arrived: datetime | None = None


@dataclass
class Night:
    """The figures of one day."""

    day: int
    sessions: int = 0
    touched: int = 0
    verify: int = 0
    notes: int = 0
    unlanded: int = 0
    first_prompt: list[float] = field(default_factory=list)
    blocks: int = 0
    warned: int = 0
    log_relevant: int = 0
    doctor: float = 0.0
    context: float = 0.0
    floor: float = 0.0


class Month:
    """The team, its machines and what the bench saw."""

    def __init__(self, args: argparse.Namespace, hippo: Path, python: Path, server: Postgres):
        self.args, self.hippo, self.python, self.server = args, str(hippo), str(python), server
        self.root: Path = args.root
        self.rng = random.Random(args.seed)
        self.book = Book(self.rng)
        self.sessions: list[Session] = []
        self.nights: list[Night] = []
        self.night = Night(0)
        self.problems: list[str] = []
        self.last_dream: datetime | None = None
        self.log = self.root / "model.jsonl"
        # As a team commits it: no user in the URL, each member connects as their own role.
        self.url = f"postgresql+psycopg://127.0.0.1:{server.port}/{DATABASE}"

    # -- machines ----------------------------------------------------------------------------

    def ws(self, m: str) -> Path:
        return self.root / m / "relay"

    def env(self, m: str, t: datetime) -> dict[str, str]:
        return clean_env(
            self.root / m / "home",
            HIPPO_NOW=stamp(t),
            CLAUDE_CONFIG_DIR=str(self.root / m / "claude"),
            PGUSER=m,
            PGPASSWORD=f"pw-{m}",
            MONTH_MEMBER=m,
            MONTH_MODEL_LOG=str(self.log),
            GIT_AUTHOR_DATE=stamp(t),
            GIT_COMMITTER_DATE=stamp(t),
        )

    def run(
        self,
        m: str,
        t: datetime,
        *argv: str,
        stdin: str | None = None,
        ok: tuple[int, ...] = (0,),
        terminal: bool = False,
    ) -> Done:
        """``hippo ARGV`` as ``m`` at ``t`` (``terminal``: at her terminal, :func:`at_terminal`);
        a traceback or an unexpected exit is a problem."""
        if terminal:
            done = at_terminal([self.hippo, *argv], self.env(m, t), self.ws(m))
        else:
            done = call([self.hippo, *argv], self.env(m, t), self.ws(m), stdin)
        if done.rc not in ok or "Traceback" in done.out + done.err:
            self.problems.append(
                f"day {self.night.day} {m} hippo {' '.join(argv)[:80]}: exit {done.rc}: "
                f"{(done.err or done.out).strip()[-300:]}"
            )
        return done

    def git(self, m: str, t: datetime, *argv: str) -> Done:
        return call(["git", *argv], self.env(m, t), self.ws(m))

    def sync(self, m: str, t: datetime) -> None:
        """Commit, pull (merge) and push; a conflict on a note keeps both sides, as a
        person in a hurry would (``git merge-file --union``)."""
        self.git(m, t, "add", "-A")
        self.git(m, t, "commit", "-qm", f"{m}, {stamp(t)}")
        if self.git(m, t, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main").rc:
            for name in self.git(m, t, "diff", "--name-only", "--diff-filter=U").out.split():
                sides = [self.root / f"side{n}" for n in (2, 1, 3)]
                for n, side in zip((2, 1, 3), sides, strict=True):
                    side.write_text(self.git(m, t, "show", f":{n}:{name}").out)
                call(
                    ["git", "merge-file", "--union", *map(str, sides)], os.environ.copy(), self.root
                )
                shutil.copyfile(sides[0], self.ws(m) / name)
            self.git(m, t, "add", "-A")
            self.git(m, t, "commit", "-qm", f"{m}: merge")
        pushed = self.git(m, t, "push", "-q", "origin", "main")
        if pushed.rc:
            self.problems.append(f"day {self.night.day} {m}: git push: {pushed.err.strip()}")

    def ingest(self, m: str, t: datetime) -> None:
        self.run(m, t, "ingest")
        self.arrive(m, t)

    def arrive(self, m: str, t: datetime) -> None:
        for session in self.sessions:
            if session.member == m and session.arrived is None:
                session.arrived = t

    # -- setting up --------------------------------------------------------------------------

    def setup(self) -> None:
        t = START - timedelta(hours=15)  # the evening before day 1
        origin = self.root / "origin.git"
        call(
            ["git", "init", "-q", "--bare", "-b", "main", str(origin)], os.environ.copy(), self.root
        )
        for m in MEMBERS:  # what a team's administrator makes: a login role each
            self.server.sql(f"CREATE ROLE {m} LOGIN PASSWORD 'pw-{m}'")
            self.server.sql(f"GRANT CREATE ON SCHEMA public TO {m}")
            home = self.root / m / "home"
            home.mkdir(parents=True)
            (home / ".gitconfig").write_text(f"[user]\n\tname = {m}\n\temail = {m}@relay.example\n")
        ws = self.ws("alice")
        for path, text in NOTES.items():
            (ws / "notes" / path).parent.mkdir(parents=True, exist_ok=True)
            (ws / "notes" / path).write_text(text)
        self.git("alice", t, "init", "-q", "-b", "main")
        self.git("alice", t, "remote", "add", "origin", str(origin))
        self.run("alice", t, "init")
        model = [sys.executable, str(HERE / "month_model.py"), "--system-file", "{system_file}"]
        self.run("alice", t, "config", "set", "index_url", self.url)
        self.run("alice", t, "config", "set", "model_command", json.dumps(model))
        self.run("alice", t, "pack", "add", "sleep")
        self.git("alice", t, "add", "-A")
        self.git("alice", t, "commit", "-qm", "relay's notes")
        self.git("alice", t, "push", "-q", "-u", "origin", "main")
        for m in MEMBERS[1:]:
            call(["git", "clone", "-q", str(origin), str(self.ws(m))], self.env(m, t), self.root)

    # -- a session ---------------------------------------------------------------------------

    def session(self, m: str, t: datetime, plan: Plan) -> None:
        ws = self.ws(m)
        made = ClaudeSession(self.root / m / "claude", str(ws), start=t)
        base = {"session_id": made.session, "transcript_path": str(made.path), "cwd": str(ws)}
        start = {**base, "hook_event_name": "SessionStart", "source": "startup"}
        started = self.run(m, t, "hook", "session-start", stdin=json.dumps(start))
        touched: set[str] = set()
        for number, turn in enumerate(plan.turns):
            t += timedelta(minutes=1 if number == 0 else self.rng.randint(3, 10))
            prompt = {
                **base,
                "hook_event_name": "UserPromptSubmit",
                "prompt_id": str(uuid.uuid4()),
                "permission_mode": "default",
                "prompt": turn.prompt,
            }
            block = self.run(m, t, "hook", "prompt", stdin=json.dumps(prompt))
            if number == 0:
                self.first_block(started, block)
            made.start = t - timedelta(seconds=made.clock)  # the turn's records at ``t``
            made.prompt(turn.prompt)
            for path in turn.reads:
                made.tool(
                    "Read",
                    (ws / path).read_text() if (ws / path).is_file() else "no file",
                    file_path=str(ws / path),
                )
            for path, text in turn.writes:
                (ws / path).parent.mkdir(parents=True, exist_ok=True)
                (ws / path).write_text(text)
                made.tool("Write", "File created", file_path=str(ws / path), content=text)
            for path, line in turn.edits:
                last = (ws / path).read_text().rstrip("\n").rsplit("\n", 1)[-1]
                with (ws / path).open("a") as handle:
                    handle.write(line + "\n")
                made.tool(
                    "Edit",
                    "The file has been updated.",
                    file_path=str(ws / path),
                    old_string=last,
                    new_string=f"{last}\n{line}",
                )
            for command, output in turn.bash:
                made.tool("Bash", output, command=command)
            made.answer(turn.answer).write()
            touched |= {p for p in turn.reads + [w for w, _ in turn.writes + turn.edits]}
            touched |= set(re.findall(r"notes/[\w/ .-]+?\.md", turn.answer))
        if m == "alice":
            for text, topic in plan.fragments:
                self.run(m, t, "remember", text, "--topic", topic)
        t += timedelta(minutes=2)
        if plan.handoff:
            notes = [n for n in plan.handoff_notes if (ws / n).is_file()]
            argv = ["session", "end", "--id", made.session, "--handoff", plan.handoff]
            self.run(m, t, *argv, *[a for n in notes for a in ("--note", n)])
            touched |= {f"notes/{link}.md" for link in re.findall(r"\[\[([^\]|#]+)", plan.handoff)}
        end = {**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
        self.run(m, t + timedelta(seconds=20), "hook", "session-end", stdin=json.dumps(end))
        notes = {p.removeprefix("notes/") for p in touched if p.startswith("notes/")}
        self.sessions.append(Session(m, made.session, plan.handoff, notes))

    def first_block(self, started: Done, prompted: Done) -> None:
        """A session's context block: the session-start hook's and the first prompt's."""
        self.night.blocks += 1
        self.night.first_prompt.append(prompted.cpu)
        if started.out.startswith("warning: last dreaming success"):
            self.night.warned += 1
        relevant = prompted.out.split("relevant notes", 1)[-1].split("\n\n", 1)[0]
        if "Session log" in relevant:
            self.night.log_relevant += 1

    # -- alice's sleep -----------------------------------------------------------------------

    def sleep(self, t: datetime, topics: set[str], leaving: bool = False) -> None:
        """Brief, nudge, then review every draft the ticks make, up to four rounds: an
        operation is denied when it reads as transient status, or one time in ten as too
        vague, unless its draft is the chain's last attempt; the others are approved. The
        evening before the month away (``leaving``) everything is denied once and the
        redraft is left waiting, so a chain is open while the team is away."""
        argv = ["brief", "--summary", "Today: " + (", ".join(sorted(topics)) or "nothing much")]
        self.run("alice", t, *argv, *[a for topic in sorted(topics) for a in ("--promote", topic)])
        self.run("alice", t, "nudge")
        for _ in range(1 if leaving else 4):
            t += timedelta(minutes=1)
            listed = self.run("alice", t, "review", "--json").out
            drafts = [x for x in json.loads(listed or "[]") if x.get("type") == "draft"]
            if not drafts:
                return
            for item in drafts:
                draft = json.loads(self.run("alice", t, "review", item["id"], "--json").out)
                decide, denied = [], set()
                for op in draft.get("operations", []):
                    if op.get("status") != "pending":
                        continue
                    transient = re.search(r"\btoday\b|worked as written", op.get("content", ""))
                    vague = leaving or self.rng.random() < 0.1
                    if op.get("target_op") in denied or (
                        (transient or vague) and not draft.get("terminal")
                    ):
                        denied.add(op["index"])
                        why = "transient status" if transient else "too vague: name the value"
                        decide += ["--deny", f"{op['index']}={why}"]
                    else:
                        decide += ["--approve", str(op["index"])]
                if decide:  # alice at her terminal: a core from one fragment is a person's
                    self.run("alice", t, "review", item["id"], *decide, terminal=True)
            self.run("alice", t + timedelta(seconds=30), "sleep", "tick")

    # -- dreams ------------------------------------------------------------------------------

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def dream(self, m: str, t: datetime) -> None:
        self.git(m, t, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
        before = len(self.calls())
        self.run(m, t, "dream", ok=(0, 1))
        made = self.calls()[before:]
        if m == "alice":
            self.arrive("alice", t)
            night = [
                s
                for s in self.sessions
                if s.arrived and (self.last_dream or START) < s.arrived <= t
            ]
            self.last_dream = t
            self.night.sessions += len(night)
            self.night.touched += len(set().union(*[s.touched for s in night]))
        # bob's weekly dream takes the turns alice has not dreamed yet: hers may find none
        self.night.verify += sum(1 for c in made if c["part"] == "verify")
        self.sync(m, t + timedelta(minutes=15))

    # -- a day -------------------------------------------------------------------------------

    def day(self, d: int, back: int = 0) -> None:
        """Day ``d``; ``back`` is 1 on the first day after the month away, 2 on the next."""
        self.night = Night(d)
        date = START + timedelta(days=d - 1)

        def at(hour: int, minute: int = 0) -> datetime:
            return date + timedelta(hours=hour, minutes=minute)

        for m in MEMBERS:
            self.git(m, at(8, 30), "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
        self.run("alice", at(8, 40), "sleep", "tick")
        plans = {
            m: self.book.plans(m, d, date.strftime("%Y-%m-%d"), self.args.sessions) for m in MEMBERS
        }
        topics = {topic for plan in plans["alice"] for _text, topic in plan.fragments}
        for slot in range(self.args.sessions):
            for k, m in enumerate(MEMBERS):
                self.session(m, at(9) + timedelta(minutes=95 * slot + 7 * k), plans[m][slot])
            if back == 1 and slot == 0:
                self.dream("alice", at(10, 30))  # the missed night's dream, once work began
            if slot == 1 or (slot == 0 and self.args.sessions == 1):
                for m in MEMBERS:
                    self.ingest(m, at(12, 50))
                self.run("alice", at(12, 55), "sleep", "tick")
        measured = d == 1 or back == BACK_DAYS
        for k, m in enumerate(MEMBERS):
            t = at(18, 5 * k)
            self.ingest(m, t)
            self.run(m, t + timedelta(minutes=1), "log")
            if m == "alice":
                self.evening(t + timedelta(minutes=2), rounds=3 if measured else 1)
            else:
                self.run(m, t + timedelta(minutes=2), "doctor", ok=(0, 1))
        for k, m in enumerate(MEMBERS):
            self.sync(m, at(18, 30 + k))
        self.sleep(at(19), topics, leaving=d == self.args.days)
        self.sync("alice", at(19, 30))
        if d % 3 == 0 and not back:
            # carol works late; her laptop's next ingest is tomorrow at noon
            self.session(
                "carol", at(20, 30), self.book.plans("carol", d, date.strftime("%Y-%m-%d"), 1)[0]
            )
        if d % 7 == 0 or back == 1:
            self.dream("bob", at(22, 5))
        self.dream("alice", at(23, 5))
        self.night.notes = sum(1 for _ in (self.ws("alice") / "notes").rglob("*.md"))
        self.night.unlanded = len(self.unlanded("alice"))
        self.nights.append(self.night)
        say(self.line(self.night))

    def evening(self, t: datetime, rounds: int) -> None:
        """alice's measured commands, each round beside the floor (an empty venv's
        ``python -c pass``); the medians are kept."""
        floors, contexts, doctors = [], [], []
        task = self.rng.choice(TASKS)
        for _ in range(rounds):
            floors.append(call([self.python, "-c", "pass"], self.env("alice", t), self.root).cpu)
            contexts.append(self.run("alice", t, "context", "--task", task).cpu)
            doctors.append(self.run("alice", t, "doctor", ok=(0, 1)).cpu)
        self.night.floor = statistics.median(floors)
        self.night.context = statistics.median(contexts)
        self.night.doctor = statistics.median(doctors)

    # -- what is found at the end -----------------------------------------------------------

    def receipts(self, m: str) -> list[dict[str, Any]]:
        found = []
        for path in sorted((self.ws(m) / ".hippo" / "receipts").glob("*.json")):
            record = json.loads(path.read_text())
            if record.get("type", "change") == "change" and record.get("verdict") == "confirm":
                proposal = self.ws(m) / ".hippo" / "proposals" / f"{record['id']}.json"
                if proposal.is_file():
                    record["new"] = json.loads(proposal.read_text()).get("new", "")
                found.append(record)
        return found

    def unlanded(self, m: str) -> list[dict[str, Any]]:
        return [r for r in self.receipts(m) if r.get("state") in UNLANDED]

    def verdicts(self) -> dict[str, Any]:
        """The figures of the summary, and the invariants' failures."""
        for m in MEMBERS:
            self.git(
                m, datetime.now(UTC), "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"
            )
        receipts = self.receipts("alice")
        landed = {(r["note"], r.get("new")) for r in receipts if r.get("state") == "applied"}
        carried = set()
        for m in ("alice", "bob"):
            state = self.ws(m) / ".hippo" / "dream-state.json"
            if state.is_file():
                carried |= {c["proposal"] for c in json.loads(state.read_text()).get("carried", [])}
        unlanded = [r for r in receipts if r.get("state") in UNLANDED]
        pending = [r for r in unlanded if r["id"] in carried]
        dropped = [
            r for r in unlanded if (r["note"], r.get("new")) not in landed and r not in pending
        ]
        texts = [p.read_text() for p in (self.ws("alice") / "notes").rglob("*.md")]
        missing = [r for r in dropped if not any(str(r.get("new", "")).strip() in x for x in texts)]
        shown = [c["prompt"] for c in self.calls() if c["part"] == "consolidate"]
        handoffs = [s for s in self.sessions if s.handoff]
        unread = [s for s in handoffs if not any(s.handoff in p for p in shown)]
        return {
            "unlanded": unlanded,
            "pending": pending,
            "dropped": dropped,
            "missing": missing,
            "handoffs": handoffs,
            "unread": unread,
            "aged": self.aged_out(),
        }

    def aged_out(self) -> list[str]:
        """Fragments remembered before the month away and aged out after it, before the
        first sleep back drafted (the sleep store's ``fates.jsonl``, as ``hippo sleep
        audit`` reads it)."""
        sleep = self.ws("alice") / ".hippo" / "sleep"
        away = (START + timedelta(days=self.args.days)).timestamp()
        lines = [json.loads(x) for x in (sleep / "fates.jsonl").read_text().splitlines()]
        remembered = {x["id"]: x["at"] for x in lines if x["fate"] == "remembered"}
        events = [json.loads(x) for x in (sleep / "events.jsonl").read_text().splitlines()]
        drafted = [
            datetime.fromisoformat(e["at"].replace("Z", "+00:00")).timestamp()
            for e in events
            if e.get("event") == "sleep_done" and e.get("outcome") == "drafted"
        ]
        first = min([at for at in drafted if at > away], default=float("inf"))
        return [
            x["id"]
            for x in lines
            if x["fate"] == "aged out"
            and away < x["at"] <= first
            and remembered.get(x["id"], away) < away
        ]

    # -- the table ---------------------------------------------------------------------------

    HEAD = (
        "day   sessions touched verify  ratio notes unlanded  blocks warned log-relevant  "
        "1st-prompt  context  doctor  floor"
    )

    def line(self, n: Night) -> str:
        ratio = f"{n.verify / n.touched:5.2f}" if n.touched else "    -"
        first = statistics.median(n.first_prompt) if n.first_prompt else 0.0
        return (
            f"{n.day:>3} {n.sessions:>10} {n.touched:>7} {n.verify:>6} {ratio:>6} {n.notes:>5} "
            f"{n.unlanded:>8} {n.blocks:>7} {n.warned:>6} {n.log_relevant:>12} {first:>11.3f} "
            f"{n.context:>8.3f} {n.doctor:>7.3f} {n.floor:>6.3f}"
        )


def summary(month: Month, found: dict[str, Any], seconds: float) -> list[str]:
    """The summary's lines, each figure with where it comes from; the last line names the
    invariants that failed, if any."""
    first, last = month.nights[0], month.nights[-1]
    ratios = [n.verify / n.touched for n in month.nights if n.touched]
    blocks = sum(n.blocks for n in month.nights)
    counts: list[tuple[str, object, str]] = [
        (
            "confirmed changes not applied at once",
            len(found["unlanded"]),
            f"receipts in state {', '.join(UNLANDED)} (.hippo/receipts/)",
        ),
        (
            "  ...of them dropped (never landed later)",
            len(found["dropped"]),
            "no applied receipt of the same note and new text, and not carried",
        ),
        (
            "  ...still carried to the next run",
            len(found["pending"]),
            "`carried` in alice's and bob's .hippo/dream-state.json",
        ),
        (
            "  ...facts of the dropped in no note",
            len(found["missing"]),
            "the proposal's new text in no note of alice's clone at the end",
        ),
        ("sessions with a handoff", len(found["handoffs"]), "hippo session end --handoff"),
        (
            "  ...read by no dream",
            len(found["unread"]),
            "the handoff's text in no consolidate prompt the model was given",
        ),
        (
            "fragments aged out by the month away",
            len(found["aged"]),
            "hippo sleep audit's fates.jsonl: remembered before, aged out back, before a draft",
        ),
        (
            "verify calls per touched note, max night",
            f"{max(ratios, default=0):.2f}",
            "verify calls of the night's dreams / notes the night's sessions touched",
        ),
        (
            "  day 1 / last day",
            f"{ratios[0] if ratios else 0:.2f}",
            f"{first.verify} calls for {first.touched} notes / {last.verify} for {last.touched}",
        ),
        (
            "first-prompt blocks naming the session log",
            sum(n.log_relevant for n in month.nights),
            f"of {blocks} (hippo hook prompt: among the relevant notes)",
        ),
        (
            "blocks opening with a dreaming warning",
            sum(n.warned for n in month.nights),
            f"of {blocks} (hippo hook session-start)",
        ),
        ("hippo commands that failed", len(month.problems), "an exit not expected, a traceback"),
    ]
    lines = [
        "",
        f"{len(month.sessions)} sessions on {len(month.nights)} days; {seconds / 60:.1f} min",
        f"{'figure':<44} {'found':>6}   from",
        *[f"{name:<44} {value!s:>6}   {source}" for name, value, source in counts],
        *[f"  {problem}" for problem in month.problems[:20]],
        "",
        f"{'CPU seconds (x the floor), alice':<44} {'day 1':>15} {'last day':>15}",
    ]
    for name, a, b in (
        ("hippo doctor", first.doctor, last.doctor),
        ("hippo hook prompt, first prompt (median)", *map(_median, (first, last))),
        ("hippo context --task", first.context, last.context),
        ("python -c pass, an empty venv (the floor)", first.floor, last.floor),
    ):
        day1, end = f"{a:.3f} ({a / first.floor:.0f}x)", f"{b:.3f} ({b / last.floor:.0f}x)"
        lines.append(f"{name:<44} {day1:>15} {end:>15}")
    failed = [
        f"{INVARIANTS[name]} ({value})"
        for name, value, _ in counts
        if INVARIANTS.get(name) and value
    ]
    lines.append(("FAILED: " + "; ".join(failed)) if failed else "every invariant held")
    return lines


def _median(night: Night) -> float:
    return statistics.median(night.first_prompt) if night.first_prompt else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30, help="days worked before the away")
    parser.add_argument("--away", type=int, default=30, help="days nobody runs anything")
    parser.add_argument("--sessions", type=int, default=5, help="sessions a member works a day")
    parser.add_argument("--seed", type=int, default=20270104)
    parser.add_argument("--root", type=Path, help="keep the run's folder here (made new)")
    parser.add_argument("--hippo", type=Path, help="this hippo script, not a fresh install")
    args = parser.parse_args()
    if args.days < 1 or args.away < 0 or args.sessions < 1:
        parser.error("--days and --sessions must be at least 1, --away at least 0")
    hippo = args.hippo.absolute() if args.hippo else installed_hippo(("postgres",))
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, running_server() as server:
        if args.root is None:
            args.root = Path(tmp) / "month"
        elif args.root.exists() and any(args.root.iterdir()):
            raise SystemExit(f"--root {args.root} is not empty: give a new folder")
        args.root = args.root.resolve()
        args.root.mkdir(parents=True, exist_ok=True)
        month = Month(args, hippo, floor(Path(tmp)), server)
        month.setup()
        say(Month.HEAD)
        for d in range(1, args.days + 1):
            month.day(d)
        for n in range(1, BACK_DAYS + 1):
            month.day(args.days + args.away + n, back=n)
        found = month.verdicts()
        lines = summary(month, found, time.perf_counter() - began)
    print(f"A month of a team on {hippo}: --days {args.days} --away {args.away}", end=" ")
    print(f"--sessions {args.sessions} --seed {args.seed}")
    print("per night (verify calls of every dream of the night; CPU seconds of alice's commands):")
    print(Month.HEAD)
    for night in month.nights:
        print(month.line(night))
    print("\n".join(lines))
    return 1 if lines[-1].startswith("FAILED") else 0


if __name__ == "__main__":
    sys.exit(main())
