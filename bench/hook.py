"""How long the agent's hooks take, `hippo hook prompt` and `hippo hook session-start`.

For each count of notes (default: 2,000 and 20,000), on a workspace of `make_workspace`,
after one untimed call that fills the caches as any earlier call would:

- `hippo hook prompt`, a later prompt of a session (its first prompt ran: prints nothing):
  target at most 2x the floor;
- `hippo hook prompt`, a session's first prompt (a new session each run; prints the block
  of relevant notes): at most 4x, and at most 1.5x from 2,000 notes to the largest count;
- `hippo hook session-start`, a new session each run (source "startup"): at most 4x;
- `hippo hook session-end`, a session ending each run (it tells the plugins, so the
  activity triggers can count it): no target, shown for what it costs;

and, given more than one count, each case's median at the largest count over its median at
2,000 notes (the first prompt and session-start: at most 1.5x). The floor is an empty
venv's `python -c pass` and hippo the `hippo` script of a venv where this checkout is
pip-installed (see bench/harness.py); each figure is CPU (user+sys) and wall time, median
and min-max.

With ``--sleep`` the workspace has the sleep pack added and an open loop waiting (a draft to
review), so session-start also reads and prints the pack's part of the block.

With ``--relevance bm25`` the workspace ranks relevant notes by BM25, with ``--relevance
history`` by BM25 and the notes past sessions opened (the same targets). The index holds
``--sessions`` sessions of the workspace (default 5,000), each a prompt that read one to
three notes, ingested before the runs. With ``--watch``, `hippo notes watch` runs in the
workspace, so the hooks ask it instead of scanning the notes.

Run: python bench/hook.py [--notes N ...] [--runs R] [--sleep] [--sessions N]
     [--relevance headings|bm25|history] [--watch]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from harness import (
    Case,
    Sample,
    clean_env,
    floor,
    header,
    installed_hippo,
    make_sessions,
    make_workspace,
    prints_nothing,
    prints_something,
    ratio_row,
    rounds,
    row,
    run,
    starts_with,
    watching,
)

PROMPT = "fix the flaky migration test"
#: Case: (row name, target over the floor, target of the largest count over 2,000 notes).
CASES = {
    "later": ("hook prompt, later prompt", 2.0, None),
    "first": ("hook prompt, first prompt", 4.0, 1.5),
    "start": ("hook session-start", 4.0, 1.5),
    "end": ("hook session-end", None, None),
}


def payload(root: Path, session: str, **fields: str) -> str:
    return json.dumps({"session_id": session, "cwd": str(root), **fields})


#: How the first prompt's block starts: hippo's marker, then the relevant notes.
RELEVANT = "<hippo-context>\nrelevant:"


def cases(
    hippo: Path, python: Path, root: Path, env: dict[str, str], runs: int
) -> dict[str, Sample]:
    """The floor and the three cases, round after round."""
    prompt, start = [hippo, "hook", "prompt"], [hippo, "hook", "session-start"]
    later = payload(root, "bench-later", prompt=PROMPT)
    # The warm-up: the first prompt of the session whose later prompts are timed.
    if not run(prompt, cwd=root, env=env, stdin=later)[3].startswith(RELEVANT):
        raise SystemExit(f"the first prompt printed no relevant notes{logged(env)}")
    found = rounds(
        {
            "floor": Case([python, "-c", "pass"], cwd=root, env=env),
            "later": Case(prompt, cwd=root, env=env, stdin=later, check=prints_nothing),
            "first": Case(
                prompt,
                cwd=root,
                env=env,
                stdin=lambda n: payload(root, f"bench-first-{n}", prompt=PROMPT),
                check=starts_with(RELEVANT),
            ),
            "start": Case(
                start,
                cwd=root,
                env=env,
                stdin=lambda n: payload(root, f"bench-start-{n}", source="startup"),
                check=prints_something,
            ),
            "end": Case(
                [hippo, "hook", "session-end"],
                cwd=root,
                env=env,
                stdin=lambda n: payload(root, f"bench-start-{n}", reason="other"),
                check=prints_nothing,
            ),
        },
        runs,
    )
    if logged(env):
        raise SystemExit(f"a hook logged a problem{logged(env)}")
    return found


def with_open_loop(hippo: Path, root: Path, env: dict[str, str]) -> None:
    """The sleep pack added, and a draft waiting for review (an intent at session start)."""
    run([hippo, "pack", "add", "sleep"], cwd=root, env=env)
    for text in ("Deploys run from main", "deploy from main", "main is where deploys run"):
        run([hippo, "remember", text, "--topic", "deploy"], cwd=root, env=env)
    run([hippo, "brief", "--summary", "deploys"], cwd=root, env=env)
    run([hippo, "nudge"], cwd=root, env=env)
    if "open loops:" not in run([hippo, "context"], cwd=root, env=env)[3]:
        raise SystemExit("the sleep pack's open loop is not in the context block")


def logged(env: dict[str, str]) -> str:
    """What the hooks logged: a hook exits 0 whatever went wrong."""
    log = Path(env["HIPPO_HOME"]) / "hooks.log"
    return f"; {log}:\n{log.read_text()[-2000:]}" if log.exists() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--relevance",
        choices=["headings", "bm25", "history"],
        default="headings",
        help="the setting",
    )
    parser.add_argument("--sessions", type=int, default=5000, help="sessions in the index")
    parser.add_argument("--sleep", action="store_true", help="add the sleep pack, a loop open")
    parser.add_argument("--watch", action="store_true", help="with hippo notes watch running")
    args = parser.parse_args()
    hippo = installed_hippo()
    found: dict[int, dict[str, Sample]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        python = floor(tmp_path)
        header(
            f"hippo hook ({hippo}), relevance = {args.relevance}, {args.sessions:,} sessions "
            f"indexed, {'a' if args.watch else 'no'} watcher; each count's cases and floor "
            "run in rounds",
            args.runs,
        )
        for count in args.notes:
            root = tmp_path / f"ws-{count}"
            env = clean_env(tmp_path / f"home-{count}")  # an index of its sessions alone
            make_workspace(root, count, relevance=args.relevance)
            make_sessions(hippo, root, env, args.sessions)
            if args.sleep:
                with_open_loop(hippo, root, env)
            with watching(hippo, root, env, args.watch):
                found[count] = cases(hippo, python, root, env, args.runs)
            base = found[count]["floor"]
            row(f"python -c pass (the floor, with {count:,} notes)", base, base)
            for key, (name, target, _) in CASES.items():
                row(f"{name} ({count:,} notes)", found[count][key], base, target)
    if len(found) > 1:
        small = 2000 if 2000 in found else min(found)
        large = max(found)
        for key, (name, _, target) in CASES.items():
            label = f"{name}, {large:,} / {small:,} notes"
            target = target if small == 2000 else None  # the target is over 2,000 notes
            ratio_row(label, found[large][key], found[small][key], target)


if __name__ == "__main__":
    main()
