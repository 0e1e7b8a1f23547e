"""How fast `hippo ingest` reads Claude Code transcripts, and how much memory it takes.

Generates corpora of Claude Code 2.1-shaped JSONL (prompts, one record per assistant
content block, tool results with large outputs, hook attachments, request blobs) and prints,
each measured in the same run:

- full ingest of the large corpus / the stdlib `json` module parsing the same lines
  (target: at most 3x);
- incremental ingest after one turn is appended to one file / `python -c pass`
  (target: at most 5x);
- peak memory (max RSS) of a full ingest of the small and the large corpus (streamed: it
  should not grow with the corpus).

Run: python bench/ingest.py [--mb 200] [--small-mb 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from context import compile_package

WORDS = [
    "the",
    "refund",
    "queue",
    "pauses",
    "on",
    "sunday",
    "so",
    "retries",
    "pile",
    "up",
    "and",
    "the",
    "ledger",
    "lags",
    "behind",
    "we",
    "moved",
    "prices",
    "to",
    "cents",
    "and",
    "the",
    "migration",
    "rewrote",
    "every",
    "invoice",
    "row",
    "in",
    "place",
    "tests",
    "for",
    "the",
    "date",
    "parser",
    "were",
    "flaky",
    "because",
    "of",
    "the",
    "local",
    "timezone",
]


def _compact(data: object) -> str:
    """JSON as Claude Code writes it: no spaces after separators."""
    return json.dumps(data, separators=(",", ":"))


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _session_lines(rng: random.Random, cwd: str, session: str, turns: int) -> list[str]:
    lines: list[str] = []
    parent = None
    clock = [0]

    def record(kind: str, message: dict, **extra: object) -> None:
        nonlocal parent
        clock[0] += 1
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        minutes, seconds = divmod(clock[0], 60)
        data = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "2.1.332",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uid,
            "timestamp": f"2026-11-{1 + minutes // 1440 % 28:02d}T{minutes // 60 % 24:02d}:"
            f"{minutes % 60:02d}:{seconds:02d}.000Z",
            **extra,
        }
        parent = uid
        lines.append(_compact(data))

    for _ in range(turns):
        record("user", {"role": "user", "content": _text(rng, 30)})
        lines.append(
            _compact(
                {
                    "type": "attachment",
                    "uuid": str(uuid.uuid4()),
                    "parentUuid": parent,
                    "attachment": {
                        "type": "hook_success",
                        "hookEvent": "UserPromptSubmit",
                        "stdout": _text(rng, 20),
                        "content": _text(rng, 20),
                    },
                }
            )
        )
        lines.append(_compact({"type": "api-request-blob", "blob": _text(rng, 4000)}))
        msg = f"msg_{rng.getrandbits(64):x}"
        record(
            "assistant",
            {
                "id": msg,
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [
                    {"type": "thinking", "thinking": _text(rng, 120), "signature": "x" * 200}
                ],
            },
        )
        for _step in range(3):
            call = f"toolu_{rng.getrandbits(64):x}"
            path = f"{cwd}/src/module_{rng.randint(1, 50)}.py"
            record(
                "assistant",
                {
                    "id": msg,
                    "role": "assistant",
                    "model": "claude-opus-5-5",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": call,
                            "name": "Read",
                            "input": {"file_path": path},
                        }
                    ],
                },
            )
            output = _text(rng, 900)
            record(
                "user",
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call, "content": output}],
                },
                toolUseResult={"type": "text", "file": {"filePath": path, "content": output}},
            )
        record(
            "assistant",
            {
                "id": msg,
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [{"type": "text", "text": _text(rng, 80)}],
            },
        )
    return lines


def make_corpus(root: Path, megabytes: int, seed: int = 11) -> list[Path]:
    """Session files of about 200 KB each until the corpus holds ``megabytes`` MB."""
    rng = random.Random(seed)
    target, written, files = megabytes * 1024 * 1024, 0, []
    while written < target:
        n = len(files)
        cwd = f"/home/dev/project-{n % 25}"
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        folder = root / "projects" / cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{session}.jsonl"
        data = "".join(line + "\n" for line in _session_lines(rng, cwd, session, 4))
        path.write_text(data)
        written += len(data)
        files.append(path)
    return files


def json_baseline(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        with path.open("rb") as handle:
            for line in handle:
                json.loads(line)
    return time.perf_counter() - start


def run_ingest(corpus: Path, home: Path, *extra: str) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one `hippo ingest` in a child process."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": str(corpus),
        "HIPPO_HOME": str(home),
        "HOME": str(home),
        "HIPPO_LOAD_PLUGINS": "",
    }
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "hippo_core", "ingest", *extra],
        env=env,
        stdout=subprocess.DEVNULL,
        cwd=home,
    )
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"hippo ingest failed with status {status}")
    return elapsed, usage.ru_maxrss


def median(
    argv: list[str], runs: int, env: dict[str, str] | None = None, before: object = None
) -> float:
    times = []
    for _ in range(runs):
        if callable(before):
            before()
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--small-mb", type=int, default=20)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    compile_package()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        small, large = tmp_path / "small", tmp_path / "large"
        make_corpus(small, args.small_mb)
        large_files = make_corpus(large, args.mb)
        size = sum(p.stat().st_size for p in large_files)
        baseline = json_baseline(large_files)
        full, large_rss = run_ingest(large, tmp_path / "home-large", "--full")
        _, small_rss = run_ingest(small, tmp_path / "home-small", "--full")

        target = large_files[len(large_files) // 2]
        rng = random.Random(3)
        session = target.stem

        def append_turn() -> None:
            lines = _session_lines(rng, "/home/dev/project-x", session, 1)
            with target.open("a") as handle:
                handle.write("".join(line + "\n" for line in lines))

        env = {
            **os.environ,
            "CLAUDE_CONFIG_DIR": str(large),
            "HIPPO_HOME": str(tmp_path / "home-large"),
            "HOME": str(tmp_path / "home-large"),
            "HIPPO_LOAD_PLUGINS": "",
        }
        bare = median([sys.executable, "-c", "pass"], args.runs)
        incremental = median(
            [sys.executable, "-m", "hippo_core", "ingest"], args.runs, env, before=append_turn
        )
    print(f"corpus: {len(large_files)} files, {size / 1e6:.0f} MB")
    print(f"json.loads of every line: {baseline:7.2f} s")
    print(f"hippo ingest --full:      {full:7.2f} s  ratio {full / baseline:.2f}x (target <= 3x)")
    print(f"python -c pass:           {bare * 1000:7.1f} ms (median of {args.runs})")
    print(
        f"incremental, one turn:    {incremental * 1000:7.1f} ms  "
        f"ratio {incremental / bare:.1f}x (target <= 5x)"
    )
    print(f"peak RSS, {args.small_mb} MB corpus:   {small_rss / 1024:7.1f} MiB")
    print(f"peak RSS, {args.mb} MB corpus:  {large_rss / 1024:7.1f} MiB")


if __name__ == "__main__":
    main()
