"""The dream's own overhead, model time excluded: one chunk, 500 notes, 5,000 sessions.

Sets up a workspace of notes (each "Topic NNN <component>", with a claim to check and a
source file) and 5,000 Claude Code sessions of the last 24 hours run in it, a turn or two
each. Some of the sessions mention 50 of the notes, so those 50 get a verify call (and
Home.md, whose "Index" heading is a word the turns use); the other notes find no turn and
cost only their search. The model is the scripted program of
the tests, answering at once: ``[]`` for most notes, a ``replace`` for a few, which the
reviewer confirms (so validation, receipts, snapshots and note writes run).

`hippo ingest` runs first, timed on its own, so the dream's ingest has nothing to read.
Then one `hippo dream` in a child process; its report's ``- time:`` line splits the run
into phases. Prints the dream's wall time, the model time (a scripted call costs a Python
start, which is the model's time, not hippo's), the overhead (wall - model), each phase's
share of it, and the overhead per note against the floor measured in the same run. The
floor is an empty venv's `python -c pass` and hippo the `hippo` script of a venv where this
checkout is pip-installed (see bench/harness.py); the notes, sessions and scripted model
are made in this process with the tests' helpers. No target.

Run: python bench/dream.py [--notes 500] [--sessions 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness import Sample, clean_env, floor, header, installed_hippo, measure, row, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.claude_factory import ClaudeSession
from tests.models import scripted_model

#: First lines of the core pack's verify prompt and of its reviewer's persona: the
#: scripted model tells the two calls apart by them.
PROPOSER = "# Task: check one note against transcript turns"
VERIFY_REVIEWER = "You are the reviewer for hippo's verify pass"
CONFIRM = json.dumps({"verdict": "confirm", "notes": "The turn shows the new port."})

COMPONENTS = [
    "billing ledger",
    "refund queue",
    "auth gateway",
    "search indexer",
    "report builder",
    "email sender",
    "image resizer",
    "price cache",
    "audit log",
    "job scheduler",
]
# Filler for notes and for the sessions that mention no note. "topic" is not in it, so
# only the turns written to mention a note find one.
FILLER = (
    "the deploy migration database cache worker retry timeout lock index schema token "
    "rotate backup restore latency alert incident runbook release build flaky pipeline "
    "config secret metrics tracing storage we moved rows into batches after the outage "
    "and kept the old path behind a flag until the next release"
)
WORDS = FILLER.split()
PHASES = ("search", "rendering", "validation", "writing", "model")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def note_title(i: int) -> str:
    return f"Topic {i:03d} {COMPONENTS[i % len(COMPONENTS)]}"


def note_path(i: int) -> str:
    return f"area-{i % 20:02d}/{note_title(i)}.md"


def source(i: int) -> str:
    return f"src/{COMPONENTS[i % len(COMPONENTS)].split()[0]}/topic_{i:03d}.py"


def claim(i: int, port: int) -> str:
    return f"The Topic {i:03d} service listens on port {port}."


def make_notes(notes_dir: Path, count: int, rng: random.Random) -> None:
    """``count`` notes of about 1.5 KB, dated in the past as real notes are."""
    past = time.time() - 60
    for i in range(count):
        title = note_title(i)
        path = notes_dir / note_path(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        paragraphs = "\n\n".join(_text(rng, 50) for _ in range(3))
        path.write_text(
            f'---\ntype: topic\nstatus: current\nsources: ["{source(i)}"]\n---\n'
            f"# {title}\n\nWhat we know about the {title.lower()}.\n\n"
            f"## How Topic {i:03d} works\n\n{claim(i, 8000 + i)}\n\n{paragraphs}\n\n"
            f"## Known issues of Topic {i:03d}\n\n{_text(rng, 60)}\n",
            encoding="utf-8",
        )
        os.utime(path, (past, past))


def make_sessions(
    claude: Path, cwd: str, count: int, mentioned: list[int], rng: random.Random
) -> dict[int, str]:
    """``count`` sessions started in the last 23 hours; the first ``3 * len(mentioned)``
    mention a note of ``mentioned`` by its title and read its source. Returns, for each
    mentioned note, a session whose turn 0 says the note's port changed."""
    now = datetime.now(UTC)
    evidence: dict[int, str] = {}
    for n in range(count):
        start = now - timedelta(hours=23) + timedelta(seconds=rng.uniform(0, 22 * 3600))
        session = ClaudeSession(claude, cwd, session=f"bench-{n:05d}", start=start)
        if n < 3 * len(mentioned):
            i = mentioned[n % len(mentioned)]
            session.prompt(f"Which port does the {note_title(i)} use since the move?")
            session.tool("Read", result=f"PORT = {9000 + i}", file_path=f"{cwd}/{source(i)}")
            session.answer(
                f"I read the config: the {note_title(i)} now listens on port {9000 + i}, "
                "not the old one."
            )
            evidence.setdefault(i, session.session)
        else:
            session.prompt(_text(rng, 20))
            if rng.random() < 0.3:
                module = f"{cwd}/src/misc/module_{rng.randint(1, 200)}.py"
                session.tool("Read", result=_text(rng, 40), file_path=module)
            session.answer(_text(rng, 40))
        if rng.random() < 0.5:
            session.prompt(_text(rng, 15)).answer(_text(rng, 30))
        session.write()
    return evidence


def rules(evidence: dict[int, str], proposing: list[int]) -> list[dict]:
    """The scripted model: the reviewer confirms; a replace for each note of
    ``proposing``; ``[]`` for every other note."""
    found = [{"when": [VERIFY_REVIEWER], "reply": CONFIRM}]
    for i in proposing:
        proposal = {
            "note": note_path(i),
            "kind": "replace",
            "old": claim(i, 8000 + i),
            "new": claim(i, 9000 + i),
            "reason": "The session read the config and saw the new port.",
            "evidence": [{"session": evidence[i], "ordinal": 0}],
        }
        when = [PROPOSER, f"### Note `{note_path(i)}`"]
        found.append({"when": when, "reply": json.dumps([proposal])})
    found.append({"when": [PROPOSER], "reply": "[]"})
    return found


def hippo(command: Path, args: list[str], cwd: Path, env: dict[str, str]) -> tuple[Sample, str]:
    """The times and stdout of one run of an installed hippo command in a child process."""
    cpu, wall, rss, out = run([command, *args], cwd=cwd, env=env)
    return Sample([cpu], [wall], [rss]), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--mentioned", type=int, default=50, help="notes the turns mention")
    parser.add_argument("--proposals", type=int, default=5, help="of those, notes changed")
    args = parser.parse_args()
    command = installed_hippo()
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        root, claude, home = tmp_path / "ws", tmp_path / "claude", tmp_path / "home"
        for folder in (root, claude, home):
            folder.mkdir()
        env = clean_env(home, CLAUDE_CONFIG_DIR=str(claude))
        hippo(command, ["init"], root, env)
        make_notes(root / "notes", args.notes, rng)
        mentioned = rng.sample(range(args.notes), args.mentioned)
        proposing = mentioned[: args.proposals]
        evidence = make_sessions(claude, str(root), args.sessions, mentioned, rng)
        argv, _script = scripted_model(tmp_path, rules(evidence, proposing))
        settings = root / ".hippo" / "settings.toml"
        settings.write_text(
            f"model_command = {json.dumps(argv)}\n" + settings.read_text(encoding="utf-8"),
            encoding="utf-8",
        )

        ingest_run, ingest_out = hippo(command, ["ingest"], root, env)
        base = measure([floor(tmp_path), "-c", "pass"], 5, cwd=tmp_path, env=env)
        dream_run, out = hippo(command, ["dream"], root, env)
        report = (root / out.split("report ", 1)[1].strip()).read_text(encoding="utf-8")
        changed = sum(
            claim(i, 9000 + i) in (root / "notes" / note_path(i)).read_text(encoding="utf-8")
            for i in proposing
        )

    match = re.search(r"^- time: (.*)$", report, re.MULTILINE)
    if not match or not report.startswith("status: ok"):
        raise SystemExit(f"the dream did not report its times:\n{report[:2000]}")
    if not changed:
        raise SystemExit("no proposed change was applied: validation and writing did not run")
    seconds = {name: float(value) for name, value in re.findall(r"(\w+) ([\d.]+) s", match[1])}
    calls = re.search(r"^- chunk .*: done, .*?(\d+) model calls?$", report, re.MULTILINE)
    ingest = re.search(r"^- ingest: .*\(([\d.]+) s\)", report, re.MULTILINE)
    reviews = len(re.findall(r"^- `[^`]+` \w+ by model", report, re.MULTILINE))
    unsent = len(re.findall(r"over the input budget .*; not sent$", report, re.MULTILINE))
    model, wall = seconds["model"], dream_run.wall[0]
    overhead = wall - model
    rest = overhead - sum(seconds[phase] for phase in PHASES if phase != "model")
    per_note = overhead / args.notes

    header(f"hippo dream ({command})", 5)
    row("python -c pass (empty venv: the floor)", base, base)
    row("hippo ingest, beforehand, 1 run", ingest_run, base)
    row("hippo dream, 1 run (cpu: with the model's)", dream_run, base)
    print(
        f"notes: {args.notes} and Home.md; sessions: {args.sessions}; "
        f"notes the turns mention: {args.mentioned}"
    )
    print(f"hippo ingest, beforehand:  {ingest_run.wall[0]:7.2f} s  ({ingest_out.strip()})")
    print(
        f"model calls:               {calls[1] if calls else '?':>7}  proposer, {reviews} "
        f"reviewer ({changed} of {len(proposing)} proposed changes applied)"
    )
    # A prompt the fitting leaves a few bytes over the budget is not sent: shown, since it
    # makes fewer proposer calls than notes the turns mention.
    print(f"prompts over the budget:   {unsent:7d}  (not sent)")
    print(f"hippo dream, wall:         {wall:7.2f} s")
    print(f"  model (scripted program):{model:7.2f} s  (a Python start and more per call)")
    print(f"  overhead (wall - model): {overhead:7.2f} s")
    for phase in PHASES[:-1]:
        print(f"    {phase + ':':<22}{seconds[phase]:7.2f} s  {seconds[phase] / overhead:6.1%}")
    print(
        f"    {'unaccounted:':<22}{rest:7.2f} s  {rest / overhead:6.1%}  (start-up, ingest "
        f"{ingest[1] if ingest else '?'} s, session records, the report)"
    )
    # The baseline: the floor, a bare interpreter start. Per note, the dream's overhead is
    # what grows with a workspace, and an interpreter start is the least a model call costs
    # (the cheapest model is a local program), so the ratio says whether hippo's own work
    # per note is small next to even the fastest model.
    bare = base.wall_median
    print(f"python -c pass (the floor):{bare * 1000:7.1f} ms (wall, median of 5)")
    print(f"overhead per note:         {per_note * 1000:7.1f} ms")
    print(f"ratio: {per_note / bare:.2f}x the floor per note")


if __name__ == "__main__":
    main()
