"""Which ``[sleep] review`` default serves a team: what lands, what waits and what is lost
over a few weeks of nights, under ``"model"`` and under ``"person"``.

Each day an agent's session (Claude Code, by the variables its shell sets) keeps fragments
from its shell, writes the evening's brief and nudges; the draft is reviewed the way each
setting lets it be:

- ``model``: the main model, woken in a session of its own (as the ripple's ``claude -p``
  is), approves every operation it may; a verbatim and a core from one fragment wait for a
  person, who reviews every ``--person-every`` days at a terminal (this script types the
  code back on a pseudo-terminal, as docs/security.md says a program can).
- ``person``: only the person approves, on the same days.

Printed per setting: fragments remembered, in a core, aged out, still waiting; cores
landed; the mean days from a fragment to its core; the nights a sleep could not run because
a chain waited. ``python bench/review_default.py [--days 21] [--person-every 7]
[--verbatim-every 3]`` (0: no verbatim). Only the
standard library and this checkout's ``hippo`` (``python -m hippo_core``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import as_a_person

DAY = 86_400
START = 1_800_000_000  # a fixed clock (HIPPO_NOW): 2027-01-15, the same figures every run
#: One day's fragments: a topic with three of them, a one-off, and every few days a verbatim.
TOPICS = ("deploy", "billing", "on-call", "search", "ci", "docs", "auth")


def env(root: Path, now: float, **extra: str) -> dict[str, str]:
    base = {k: os.environ[k] for k in ("PATH", "LANG", "TMPDIR") if k in os.environ}
    home = str(root.parent / "home")
    return {
        **base,
        "HOME": home,
        "HIPPO_HOME": f"{home}/hippo",
        "HIPPO_LOAD_PLUGINS": "sleep",
        "HIPPO_NOW": str(now),
        **extra,
    }


def hippo(root: Path, now: float, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hippo_core", *args],
        cwd=root,
        env=env(root, now, **extra),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def as_person(root: Path, now: float, *args: str) -> str:
    """``hippo ARGS`` on a pseudo-terminal, the code typed back."""
    argv = [sys.executable, "-m", "hippo_core", *args]
    return as_a_person(argv, root, env(root, now))[1]


def night(
    root: Path, setting: str, days: int, person_every: int, verbatim_every: int
) -> dict[str, float]:
    hippo(root, START, "init")
    hippo(root, START, "pack", "add", "sleep")
    with (root / ".hippo" / "settings.toml").open("a") as handle:
        handle.write(f'\n[sleep]\nreview = "{setting}"\n')
    blocked = 0
    for day in range(days):
        now = START + day * DAY
        agent = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": f"day-{day}"}
        topic, other = TOPICS[day % len(TOPICS)], TOPICS[(day + 3) % len(TOPICS)]
        for n, text in enumerate(
            (
                f"{topic} runs from main after CI passes",
                f"we run {topic} from main now, never from branches",
                f"{topic} only when CI is green on main",
            )
        ):
            hippo(root, now + n, "remember", text, "--topic", topic, **agent)
        hippo(
            root,
            now + 5,
            "remember",
            f"{other} had a one-off hiccup on day {day}",
            "--topic",
            other,
            **agent,
        )
        if verbatim_every and day % verbatim_every == 0:
            hippo(root, now + 6, "remember", f"Say 'day {day}' exactly so", "--verbatim", **agent)
        hippo(
            root, now + 3600, "brief", "--summary", f"{topic} mattered", "--promote", topic, **agent
        )
        ticked = json.loads(hippo(root, now + 3700, "nudge", "--json", **agent).stdout or "{}")
        check = ticked.get("check") or {}
        if check.get("chain") and not check.get("slept"):
            blocked += 1
        drafts = sorted((root / ".hippo/sleep/drafts").glob("*.json"))
        pending = [json.loads(p.read_text()) for p in drafts]
        pending = [d for d in pending if d.get("status") == "pending"]
        if setting == "model":
            ripple = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": f"ripple-{day}"}
            for draft in pending:
                for op in draft["operations"]:
                    if op.get("status") == "pending":
                        hippo(
                            root,
                            now + 7200,
                            "review",
                            draft["id"],
                            "--approve",
                            str(op["index"]),
                            **ripple,
                        )
        if (day + 1) % person_every == 0:
            for draft in pending:
                ops = [
                    a
                    for op in draft["operations"]
                    if op.get("status") == "pending"
                    for a in ("--approve", str(op["index"]))
                ]
                if ops:
                    as_person(root, now + 9000, "review", draft["id"], *ops)
        hippo(root, now + 10_000, "sleep", "tick")
    audit = json.loads(hippo(root, START + days * DAY, "sleep", "audit", "--json").stdout)
    counts = audit["fragments"]["counts"]
    cores = list((root / "notes" / "cores").glob("*.md"))
    return {
        "remembered": sum(counts.values()),
        "in a core": counts.get("in a core", 0),
        "aged out": counts.get("aged out", 0),
        "waiting": counts.get("pending", 0),
        "cores": len(cores),
        "nights blocked": blocked,
        **_days_to_land(root),
    }


def _days_to_land(root: Path) -> dict[str, float]:
    """The mean days from a fragment's remembering to its landing in a core."""
    fates = root / ".hippo/sleep/fates.jsonl"
    born, landed = {}, []
    for line in fates.read_text().splitlines():
        fate = json.loads(line)
        if fate["fate"] == "remembered":
            born[fate["id"]] = fate["at"]
        elif fate["fate"] == "in a core" and fate["id"] in born:
            landed.append((fate["at"] - born[fate["id"]]) / DAY)
    return {"mean days to a core": sum(landed) / len(landed) if landed else float("nan")}


def main() -> int:
    given = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    given.add_argument("--days", type=int, default=21)
    given.add_argument("--person-every", type=int, default=7)
    given.add_argument("--verbatim-every", type=int, default=3, help="0: no verbatim")
    args = given.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for setting in ("model", "person"):
            root = Path(tmp) / setting / "ws"
            root.mkdir(parents=True)
            rows[setting] = night(root, setting, args.days, args.person_every, args.verbatim_every)
    verbatims = f"a verbatim every {args.verbatim_every}" if args.verbatim_every else "no verbatim"
    print(f"{args.days} nights, a person reviewing every {args.person_every} days, {verbatims}")
    print(f"{'':22}" + "".join(f"{s:>10}" for s in rows))
    for key in rows["model"]:
        print(f"{key:22}" + "".join(f"{rows[s][key]:>10.1f}" for s in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
