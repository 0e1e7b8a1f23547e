"""How long `hippo context --task ...` takes, the agent's hot path, by count of notes.

For each count of notes (default: 2,000 and 20,000), on a workspace of `make_workspace`,
run in the workspace: `hippo context --task "fix the flaky migration test"` once on a cold
cache (no target), then its warm median: target at most 4x the floor at 2,000 notes; and the
20,000-note median over the 2,000-note median: at most 1.5x. The floor is an empty venv's
`python -c pass` and hippo the `hippo` script of a venv where this checkout is
pip-installed (see bench/harness.py); each figure is CPU (user+sys) and wall time, median
and min-max.

With ``--relevance bm25`` the workspace ranks relevant notes by BM25, with ``--relevance
history`` by BM25 and the notes past sessions opened (the same targets); given several,
they run in the same rounds, each on a workspace of its own, and each one's ratio to the
first is printed (``--relevance bm25 history``: history at most 1.25x bm25). Each
workspace's sessions, ``--sessions`` of them (default 5,000: a prompt that read one to three
notes), are ingested before the runs. With ``--watch``, `hippo notes watch` runs in each
workspace, so `hippo context` asks it instead of scanning the notes.

Run: python bench/context.py [--notes N ...] [--runs R] [--sessions N]
     [--relevance headings|bm25|history ...] [--watch]
"""

from __future__ import annotations

import argparse
import contextlib
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
    measure,
    prints_something,
    ratio_row,
    rounds,
    row,
    watching,
)

__all__ = ["make_workspace"]  # other benches import it from here too
TASK = "fix the flaky migration test"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--relevance",
        choices=["headings", "bm25", "history"],
        nargs="+",
        default=["headings"],
        help="the setting; given several, they run in the same rounds",
    )
    parser.add_argument("--sessions", type=int, default=5000, help="sessions in each index")
    parser.add_argument("--watch", action="store_true", help="with hippo notes watch running")
    args = parser.parse_args()
    args.relevance = list(dict.fromkeys(args.relevance))
    hippo = installed_hippo()
    command = [hippo, "context", "--task", TASK]
    warm: dict[tuple[str, int], Sample] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        env = clean_env(tmp_path / "home")
        python = floor(tmp_path)
        header(
            f"hippo context ({hippo}), {args.sessions:,} sessions indexed, "
            f"{'a' if args.watch else 'no'} watcher; each count's cases and floor run in rounds",
            args.runs,
        )
        for count in args.notes:
            cases = {"floor": Case([python, "-c", "pass"], cwd=tmp_path, env=env)}
            cold, watchers = {}, contextlib.ExitStack()
            for relevance in args.relevance:
                root = tmp_path / f"ws-{count}-{relevance}"
                # Each workspace its own home, so each index holds its own sessions only.
                own = clean_env(tmp_path / f"home-{count}-{relevance}")
                make_workspace(root, count, relevance=relevance)
                make_sessions(hippo, root, own, args.sessions)
                cold[relevance] = measure(command, 1, cwd=root, env=own, check=prints_something)
                cases[relevance] = Case(command, cwd=root, env=own, check=prints_something)
                watchers.enter_context(watching(hippo, root, own, args.watch))
            with watchers:
                found = rounds(cases, args.runs)
            base = found["floor"]
            row(f"python -c pass (the floor, with {count:,} notes)", base, base)
            for relevance in args.relevance:
                name = f"context --task, {relevance}"
                row(f"{name}, cold, 1 run ({count:,} notes)", cold[relevance], base)
                warm[relevance, count] = found[relevance]
                target = 4.0 if count == 2000 else None
                row(f"{name} ({count:,} notes)", found[relevance], base, target)
            first = args.relevance[0]
            for relevance in args.relevance[1:]:
                target = 1.25 if (relevance, first) == ("history", "bm25") else None
                name = f"{relevance} / {first} ({count:,} notes)"
                ratio_row(name, found[relevance], found[first], target)
    counts = sorted({count for _, count in warm})
    if len(counts) > 1:
        small, large = (2000 if 2000 in counts else counts[0]), counts[-1]
        target = 1.5 if small == 2000 else None  # the target is over 2,000 notes
        for relevance in args.relevance:
            ratio_row(
                f"context --task, {relevance}, {large:,} / {small:,} notes",
                warm[relevance, large],
                warm[relevance, small],
                target,
            )


if __name__ == "__main__":
    main()
