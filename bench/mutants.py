"""How strong the tests are: mutmut's score for the modules whose tests guard a promise.

For each module, a copy of the checkout (the working tree, or ``--rev``'s tree) gets a
``[mutmut]`` section in ``setup.cfg`` that mutates that module only and runs only the test
files listed for it below, then ``mutmut run``. A row per module: the mutants, how many the
tests killed (a timeout counts as killed: the mutant made the code loop), how many survived,
how many no listed test reached, and the score, (killed + timeout) / mutants.

    .venv/bin/pip install mutmut
    .venv/bin/python bench/mutants.py                        # the six modules, this tree
    .venv/bin/python bench/mutants.py hippo_core/files/atomic.py   # one
    .venv/bin/python bench/mutants.py --rev main --survivors # main's tree, naming survivors
    .venv/bin/python bench/mutants.py hippo_core/dream/apply.py --every 3   # a third of them

``--every N`` runs a sample: in each function, the mutants mutmut numbers 1, 1 + N, 1 + 2N,
and so on, so every function is tried and the figures count only the mutants run.

mutmut links a test to a function by the calls it sees in the test process, so a test that
runs the code in a subprocess (``tests/test_file_modes.py``'s umask tests) kills nothing
here: the scores are a floor. It is too slow for ``.ci/run`` (about an hour and a half on
one core for the six), hence a bench script. ``mutmut`` itself is not a dependency of any
extra: install it into the venv you run this with.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Each module and the test files a developer changing it would run.
MODULES: dict[str, tuple[str, ...]] = {
    "hippo_core/context/budget.py": (
        "test_context",
        "test_hooks",
        "test_plugins",
        "test_hot_plugins",
        "test_doctor",
    ),
    "hippo_core/files/atomic.py": ("test_file_modes", "test_apply_paths", "test_revert"),
    "hippo_core/notes/links.py": (
        "test_notes",
        "test_notes_index",
        "test_context",
        "test_notes_edit",
    ),
    "hippo_core/transcripts/privacy.py": ("test_privacy", "test_sleep_redaction"),
    "hippo_core/dream/validators.py": (
        "test_dream_checks",
        "test_apply_paths",
        "test_dream",
        "test_create_kind",
        "test_revert",
    ),
    "hippo_core/dream/apply.py": (
        "test_apply_paths",
        "test_dream",
        "test_revert",
        "test_sleep_review",
        "test_create_kind",
        "test_dream_cycle",
        "test_triggers",
    ),
}

#: mutmut's exit codes, as its own ``stats.status_by_exit_code`` reads them.
#: Tests left out: they run ``python -m hippo_core`` in a subprocess, which can kill no
#: mutant (the subprocess imports the checkout, not the mutated copy) and, importing the
#: installed checkout beside the copy's tests, fails mutmut's clean run.
DESELECTED = (
    "tests/test_file_modes.py::test_what_hippo_keeps_of_turns_and_agents_is_owner_only_whatever_the_umask",
    "tests/test_file_modes.py::test_what_an_earlier_hippo_left_readable_is_tightened_at_the_next_write",
)

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 36: "timeout"}
STATUS.update({code: "timeout" for code in (-24, 24, 152, 255)})


def checkout(rev: str | None, into: Path) -> None:
    """The working tree's files (tracked and new, as git sees them) or ``rev``'s, in ``into``."""
    if rev:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", rev],
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
            tar.extractall(into, filter="data")
        return
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


def configure(tree: Path, module: str) -> None:
    """``setup.cfg``'s ``[mutmut]``: ``module`` mutated, its tests run in one process."""
    tests = "\n    ".join(f"tests/{name}.py" for name in MODULES[module])
    copied = "\n    ".join(
        sorted(p.name for p in tree.iterdir() if p.name not in {"hippo_core", "tests"})
    )
    (tree / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = hippo_core\n"
        f"only_mutate = {module}\n"
        # addopts has -n auto; mutmut forks its own workers.
        "pytest_add_cli_args =\n    -n\n    0\n    -p\n    no:cacheprovider\n"
        + "".join(f"    --deselect\n    {test}\n" for test in DESELECTED)
        + f"pytest_add_cli_args_test_selection =\n    {tests}\n"
        f"also_copy =\n    {copied}\n"
        "use_git_change_detection = false\n",
        encoding="utf-8",
    )


def sample(every: int) -> list[str]:
    """mutmut's names for every ``every``-th mutant of each function, from the first.

    mutmut numbers a function's mutants from 1 and takes shell patterns for names; the
    patterns go as far as the longest function could need (a mutant per character).
    """
    if every == 1:
        return []
    return [f"*__mutmut_{number}" for number in range(1, 4000, every)]


def tally(tree: Path, module: str) -> tuple[Counter[str], list[str]]:
    """The count of each status in the module's results, and the surviving mutants' names;
    mutants a sample left out are counted apart, as ``not run``."""
    meta = json.loads((tree / "mutants" / f"{module}.meta").read_text(encoding="utf-8"))
    counts: Counter[str] = Counter()
    survivors = []
    for name, code in sorted(meta["exit_code_by_key"].items()):
        status = STATUS.get(code, "suspicious") if code is not None else "not run"
        counts[status] += 1
        if status == "survived":
            survivors.append(name)
    return counts, survivors


def measure(
    module: str, rev: str | None, workers: int, keep: Path | None, every: int = 1
) -> dict[str, object]:
    """Run mutmut on one module in a fresh copy (on a sample when ``every`` > 1); its tally
    and how long it took."""
    base = Path(tempfile.mkdtemp(prefix="hippo-mutants-", dir=keep))
    tree = base / "tree"
    tree.mkdir()
    try:
        checkout(rev, tree)
        configure(tree, module)
        started = time.monotonic()
        log = base / "mutmut.log"
        with log.open("wb") as out:
            subprocess.run(
                [
                    *(sys.executable, "-m", "mutmut", "run"),
                    *("--max-children", str(workers)),
                    *sample(every),
                ],
                cwd=tree,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "CI": ""},
                check=False,
            )
        seconds = time.monotonic() - started
        try:
            counts, survivors = tally(tree, module)
            if counts["not run"] == sum(counts.values()):
                raise ValueError("nothing checked")
        except (OSError, ValueError, KeyError):
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise SystemExit(f"{module}: mutmut gave no results; its log ends:\n{tail}") from None
        return {"module": module, "counts": counts, "survivors": survivors, "seconds": seconds}
    finally:
        if keep is None:
            shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: all listed)")
    parser.add_argument("--rev", help="measure this git revision's tree, not the working tree")
    parser.add_argument("--workers", type=int, default=1, help="mutmut's --max-children")
    parser.add_argument("--survivors", action="store_true", help="name every surviving mutant")
    parser.add_argument("--keep", type=Path, help="keep each run's copy under this folder")
    parser.add_argument("--json", action="store_true", help="the rows as JSON lines")
    parser.add_argument(
        "--every",
        type=int,
        default=1,
        metavar="N",
        help="run every N-th mutant of each function only (a sample of a big module)",
    )
    args = parser.parse_args()
    if args.every < 1:
        parser.error(f"--every must be 1 or more, not {args.every}")
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"no test list for {', '.join(unknown)}; one of: {', '.join(MODULES)}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    print(
        f"{'module':36} {'mutants':>7} {'killed':>6} {'timeout':>7} {'survived':>8} "
        f"{'no tests':>8} {'score':>6} {'time':>6}",
        flush=True,
    )
    for module in args.modules or list(MODULES):
        row = measure(module, args.rev, args.workers, args.keep, args.every)
        counts: Counter[str] = row["counts"]  # type: ignore[assignment]
        total = sum(counts.values()) - counts["not run"]
        score = (counts["killed"] + counts["timeout"]) / total if total else 0.0
        if args.json:
            print(json.dumps({**row, "counts": dict(counts), "score": round(score, 4)}))
        else:
            print(
                f"{module:36} {total:7} {counts['killed']:6} {counts['timeout']:7} "
                f"{counts['survived']:8} {counts['no tests']:8} {score:6.0%} "
                f"{float(row['seconds']) / 60:5.1f}m",  # type: ignore[arg-type]
                flush=True,
            )
            others = {k: v for k, v in counts.items() if k not in STATUS.values()}
            if others:
                print(f"  also: {others}")
            if args.survivors:
                for name in row["survivors"]:  # type: ignore[attr-defined]
                    print(f"  survived: {name}")


if __name__ == "__main__":
    main()
