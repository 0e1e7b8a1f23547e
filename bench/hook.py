"""How long `hippo hook prompt` takes, end to end, on a workspace of 2,000 notes.

Each run is a new session's first prompt (the case that prints relevant notes and the
linter counts). Prints the median wall time and the ratio to a bare `python -c pass`
measured in the same run (target: at most 8x). Run: python bench/hook.py [--notes N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from context import compile_package, make_workspace


def timed(argv: list[str], cwd: Path, stdin: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        argv, cwd=cwd, input=stdin, text=True, stdout=subprocess.PIPE, env=env, check=True
    )
    elapsed = time.perf_counter() - start
    if stdin and not result.stdout.startswith("relevant:"):
        raise SystemExit(f"the hook printed no relevant notes: {result.stdout[:200]!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    hook = [sys.executable, "-m", "hippo_core", "hook", "prompt"]
    compile_package()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        make_workspace(root, args.notes)
        past = time.time() - 60
        for path in root.rglob("*.md"):
            os.utime(path, (past, past))
        env = {**os.environ, "HIPPO_HOME": str(Path(tmp) / "home"), "HIPPO_LOAD_PLUGINS": ""}

        def payload(n: int) -> str:
            prompt = "fix the flaky migration test"
            return json.dumps({"session_id": f"bench-{n}", "cwd": str(root), "prompt": prompt})

        timed(hook, root, payload(-1), env)  # the first run fills the caches, as any would
        bare = statistics.median(
            timed([sys.executable, "-c", "pass"], root, "", env) for _ in range(args.runs)
        )
        warm = statistics.median(timed(hook, root, payload(n), env) for n in range(args.runs))
    print(f"notes: {args.notes}")
    print(f"python -c pass:        {bare * 1000:7.1f} ms (median of {args.runs})")
    print(f"hippo hook prompt:     {warm * 1000:7.1f} ms (median of {args.runs}, first prompts)")
    print(f"ratio: {warm / bare:.1f}x the bare interpreter (target: at most 8x)")


if __name__ == "__main__":
    main()
