"""How long `hippo context --task ...` takes on a workspace of 2,000 notes.

Prints the median wall time of the command and of a bare `python -c pass`, measured in the
same run, and their ratio (target: at most 8x). Run: python bench/context.py [--notes N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "deploy",
    "migration",
    "database",
    "refunds",
    "ledger",
    "cache",
    "queue",
    "worker",
    "retry",
    "timeout",
    "lock",
    "index",
    "schema",
    "token",
    "password",
    "rotate",
    "backup",
    "restore",
    "latency",
    "alert",
    "incident",
    "runbook",
    "policy",
    "decision",
    "release",
    "build",
    "test",
    "flaky",
    "pipeline",
    "config",
    "secret",
    "metrics",
    "tracing",
    "storage",
]


def make_workspace(root: Path, count: int, seed: int = 7) -> None:
    """A workspace of ``count`` notes in 40 folders, with frontmatter, headings and links."""
    rng = random.Random(seed)
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text('required_notes = ["Policies/Rules.md"]\n')
    notes = root / "notes"
    names = [f"Topic {i:04d} {rng.choice(WORDS)} {rng.choice(WORDS)}" for i in range(count)]
    (notes / "Policies").mkdir(parents=True)
    (notes / "Policies" / "Rules.md").write_text("# Rules\n\nBe careful.\n")
    (notes / "Home.md").write_text("# Home\n\nThe team's notes. Start at [[Rules]].\n\n## Index\n")
    for i, name in enumerate(names):
        folder = notes / f"area-{i % 40:02d}"
        folder.mkdir(exist_ok=True)
        links = " ".join(f"[[{rng.choice(names)}]]" for _ in range(3))
        body = "\n\n".join(
            f"## {rng.choice(WORDS).title()} {rng.choice(WORDS)}\n\n"
            + " ".join(rng.choice(WORDS) for _ in range(60))
            for _ in range(4)
        )
        (folder / f"{name}.md").write_text(
            "---\ntype: topic\nstatus: current\n"
            f"updated: 2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}\n"
            f'review_after: 2027-0{rng.randint(1, 9)}-01\nsources: ["src/{i}.py"]\n---\n'
            f"# {name}\n\nWhat we know about {name.lower()}.\n\n{body}\n\nSee {links}.\n"
        )


def compile_package() -> None:
    """Byte-compile hippo as an install does (PYTHONDONTWRITEBYTECODE may be set here)."""
    package = Path(__file__).resolve().parent.parent / "hippo_core"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


def median_seconds(argv: list[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    hippo = [
        sys.executable,
        "-m",
        "hippo_core",
        "context",
        "--task",
        "fix the flaky migration test",
    ]
    compile_package()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_workspace(root, args.notes)
        past = time.time() - 60  # older than the cache's racy window, as real notes are
        for path in root.rglob("*.md"):
            os.utime(path, (past, past))
        cold = median_seconds(hippo, root, 1)
        bare = median_seconds([sys.executable, "-c", "pass"], root, args.runs)
        warm = median_seconds(hippo, root, args.runs)
    print(f"notes: {args.notes}")
    print(f"python -c pass:          {bare * 1000:7.1f} ms (median of {args.runs})")
    print(f"hippo context (cold):    {cold * 1000:7.1f} ms (first run, no cache)")
    print(f"hippo context --task:    {warm * 1000:7.1f} ms (median of {args.runs})")
    print(f"ratio: {warm / bare:.1f}x the bare interpreter (target: at most 8x)")


if __name__ == "__main__":
    main()
