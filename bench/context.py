"""How long `hippo context --task ...` takes, the agent's hot path, by count of notes.

For each count of notes (default: 2,000 and 20,000), on a workspace of `make_workspace`,
run in the workspace: `hippo context --task "fix the flaky migration test"` once on a cold
cache (no target), then its warm median: target at most 4x the floor at 2,000 notes; and the
20,000-note median over the 2,000-note median: at most 1.5x. The floor is an empty venv's
`python -c pass` and hippo the `hippo` script of a venv where this checkout is
pip-installed (see bench/harness.py); each figure is CPU (user+sys) and wall time, median
and min-max.

Run: python bench/context.py [--notes N ...] [--runs R]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness import (
    Case,
    Sample,
    clean_env,
    floor,
    header,
    installed_hippo,
    make_workspace,
    measure,
    prints_something,
    ratio_row,
    rounds,
    row,
)

__all__ = ["make_workspace"]  # other benches import it from here too
TASK = "fix the flaky migration test"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    hippo = installed_hippo()
    command = [hippo, "context", "--task", TASK]
    warm: dict[int, Sample] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        env = clean_env(tmp_path / "home")
        python = floor(tmp_path)
        header(f"hippo context ({hippo}), each count's case and floor run in rounds", args.runs)
        for count in args.notes:
            root = tmp_path / f"ws-{count}"
            make_workspace(root, count)
            cold = measure(command, 1, cwd=root, env=env, check=prints_something)
            found = rounds(
                {
                    "floor": Case([python, "-c", "pass"], cwd=root, env=env),
                    "warm": Case(command, cwd=root, env=env, check=prints_something),
                },
                args.runs,
            )
            base, warm[count] = found["floor"], found["warm"]
            row(f"python -c pass (the floor, with {count:,} notes)", base, base)
            row(f"context --task, cold, 1 run ({count:,} notes)", cold, base)
            target = 4.0 if count == 2000 else None
            row(f"context --task ({count:,} notes)", warm[count], base, target)
    if len(warm) > 1:
        small, large = (2000 if 2000 in warm else min(warm)), max(warm)
        target = 1.5 if small == 2000 else None  # the target is over 2,000 notes
        ratio_row(f"context --task, {large:,} / {small:,} notes", warm[large], warm[small], target)


if __name__ == "__main__":
    main()
