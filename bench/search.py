"""How long `hippo search WORD` takes on the index of a generated Claude Code corpus.

Builds the index of the corpus of bench/ingest.py (`--mb`, default 200) once with
`hippo ingest` (untimed), then times `hippo search refund` (`--word`), a word of most
turns. No target: the ratio to the floor is reported (about 28x, since the search imports
SQLAlchemy). The floor is an empty venv's `python -c pass` and hippo the `hippo` script of a
venv where this checkout is pip-installed (see bench/harness.py); each figure is CPU
(user+sys) and wall time, median and min-max.

Run: python bench/search.py [--mb 200] [--word refund] [--runs R]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness import (
    Case,
    clean_env,
    floor,
    header,
    installed_hippo,
    measure,
    prints_something,
    rounds,
    row,
    say,
)
from ingest import make_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--word", default="refund")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    hippo = installed_hippo()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        say(f"writing a {args.mb} MB corpus and indexing it")
        files = make_corpus(tmp_path / "corpus", args.mb)
        env = clean_env(tmp_path / "home", CLAUDE_CONFIG_DIR=str(tmp_path / "corpus"))
        built = measure([hippo, "ingest"], 1, cwd=tmp_path, env=env, check=prints_something)
        timed = rounds(
            {
                "floor": Case([floor(tmp_path), "-c", "pass"], cwd=tmp_path, env=env),
                "search": Case(
                    [hippo, "search", args.word], cwd=tmp_path, env=env, check=prints_something
                ),
            },
            args.runs,
        )
        base, found = timed["floor"], timed["search"]
    print(f"index: {len(files)} files, {args.mb} MB, built in {built.wall[0]:.1f} s")
    header(f"hippo search ({hippo})", args.runs)
    row("python -c pass (empty venv: the floor)", base, base)
    row(f"hippo search {args.word}", found, base)


if __name__ == "__main__":
    main()
