"""How `hippo doctor` grows with the sessions' history: it should not.

Its relevance check (`hippo eval context` on the latest 300 sessions) read every session's
files and first prompt from the index, two queries each, before it kept the latest 300: in a
month of a team's sessions doctor went from 0.7 to 1.6-2.0 CPU seconds with nothing else
changing (issue 35, F3). It cuts to the latest 300 first now, so only reading the session
records (a small JSON file each, to know when each started) grows with the history.

For each count of sessions (default 300, 1,200 and 4,800; each a prompt that read one to
three of the notes, an hour apart, ingested before the runs), on a workspace of
`make_workspace` (200 notes, ``relevance = "history"``):

- the queries the relevance check asks of the transcript index, counted in this process
  with this checkout: the same at every count (target: the largest over the smallest 1x);
- `hippo doctor`, after one untimed run, against the floor, and each count's median over
  the smallest count's. No target: what still grows is the rankings the check measures
  (``relevance = "history"`` reads the past sessions' rows of each task's words, as the
  hook does) and the session records read, not the gathering. The floor is an empty venv's
  `python -c pass` and hippo the `hippo` script of a venv where this checkout is
  pip-installed (see bench/harness.py).

Run: python bench/doctor.py [--sessions N ...] [--notes N] [--runs R]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness import (
    ROOT,
    Case,
    Sample,
    clean_env,
    floor,
    header,
    installed_hippo,
    make_sessions,
    make_workspace,
    ratio_row,
    rounds,
    row,
    run,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[300, 1200, 4800])
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    hippo = installed_hippo()
    found: dict[int, Sample] = {}
    queries: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        python = floor(tmp_path)
        header(f"hippo doctor ({hippo}), {args.notes:,} notes, relevance = history", args.runs)
        for count in args.sessions:
            root = tmp_path / f"ws-{count}"
            env = clean_env(tmp_path / f"home-{count}")
            make_workspace(root, args.notes, relevance="history")
            make_sessions(hippo, root, env, count)
            queries[count] = asked(root, env)
            run([hippo, "doctor"], cwd=root, env=env)  # untimed: the caches, as any run
            cases = {
                "floor": Case([python, "-c", "pass"]),
                "doctor": Case([hippo, "doctor"], cwd=root, env=env),
            }
            samples = rounds(cases, args.runs)
            found[count] = samples["doctor"]
            row(
                f"python -c pass (the floor, {count:,} sessions)",
                samples["floor"],
                samples["floor"],
            )
            row(f"hippo doctor ({count:,} sessions)", samples["doctor"], samples["floor"])
    small = min(found)
    for count in sorted(found):
        if count != small:
            ratio_row(f"hippo doctor, {count:,} / {small:,} sessions", found[count], found[small])
    print()
    for count in sorted(queries):
        ratio = queries[count] / queries[small]
        target = "  <= 1x " + ("ok" if ratio <= 1 else "OVER") if count == max(queries) else ""
        print(
            f"relevance check, {count:,} sessions: {queries[count]:,} index queries "
            f"({ratio:.2f}x {small:,} sessions'){target}"
        )


def asked(root: Path, env: dict[str, str]) -> int:
    """The queries the relevance check asks of the transcript index, in this process."""
    import os
    import sys

    sys.path.insert(0, str(ROOT))
    from hippo_core.builtins import relevance_doctor
    from hippo_core.dream.turns import TurnIndex
    from hippo_core.workspace.folder import Workspace

    kept, rows = dict(os.environ), TurnIndex._rows
    count = 0

    def counted(self: TurnIndex, sql: str, params: dict[str, object]) -> list[object]:
        nonlocal count
        count += 1
        return rows(self, sql, params)

    os.environ.update(env)
    TurnIndex._rows = counted  # type: ignore[method-assign]
    try:
        relevance_doctor.hippo_doctor_checks(Workspace.open(root))
    finally:
        TurnIndex._rows = rows  # type: ignore[method-assign]
        os.environ.clear()
        os.environ.update(kept)
    return count


if __name__ == "__main__":
    main()
