"""How fast `hippo ingest` reads Claude Code transcripts, and how much memory it takes.

Generates corpora of Claude Code 2.1-shaped JSONL (prompts, one record per assistant
content block, tool results with large outputs, hook attachments, request blobs) in 25
projects, and measures, each in the same run:

- a full ingest of the large corpus (`--mb`, default 200) over the standard library's
  `json` parsing every line of it (run by the floor's interpreter): target at most 3x;
- in a hippo workspace (`.hippo/settings.toml`, `notes/Home.md`) where the sessions of one
  of the projects ran, so that the ingest keeps their derived session records up to date:
  `hippo ingest` with nothing new since the last one: at most 3x the floor; and after one
  turn is appended to one of that project's files before each run: at most 4x;
- the peak memory (max RSS) of a full ingest of the small (`--small-mb`, default 20) and
  the large corpus (streamed: it should not grow with the corpus).

The floor is an empty venv's `python -c pass` and hippo the `hippo` script of a venv where
this checkout is pip-installed (see bench/harness.py); each figure is CPU (user+sys) and
wall time, median and min-max. `make_corpus` is used by bench/search.py too.

Run: python bench/ingest.py [--mb 200] [--small-mb 20] [--runs R] [--full-runs R]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

from harness import (
    Case,
    clean_env,
    floor,
    header,
    installed_hippo,
    measure,
    ratio_row,
    rounds,
    row,
    say,
)

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
#: Every line of the corpus through the standard library's json, in the floor's interpreter.
JSON_BASELINE = """
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.jsonl")):
    with path.open("rb") as handle:
        for line in handle:
            json.loads(line)
"""


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


def folder_name(cwd: str) -> str:
    """The folder of a project's sessions below ``projects/``, as Claude Code names it."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def make_corpus(
    root: Path, megabytes: int, seed: int = 11, workspace: Path | None = None
) -> list[Path]:
    """Session files of about 200 KB each until the corpus holds ``megabytes`` MB, of 25
    projects; with ``workspace``, the sessions of the first project ran in that folder."""
    rng = random.Random(seed)
    target, written, files = megabytes * 1024 * 1024, 0, []
    while written < target:
        n = len(files)
        cwd = f"/home/dev/project-{n % 25}"
        if workspace is not None and n % 25 == 0:
            cwd = str(workspace)
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        folder = root / "projects" / folder_name(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{session}.jsonl"
        data = "".join(line + "\n" for line in _session_lines(rng, cwd, session, 4))
        path.write_text(data)
        written += len(data)
        files.append(path)
    return files


def append_turn(path: Path, cwd: str, rng: random.Random) -> None:
    """One more turn at the end of a session file, as an agent writes it."""
    lines = _session_lines(rng, cwd, path.stem, 1)
    with path.open("a") as handle:
        handle.write("".join(line + "\n" for line in lines))


def make_hippo_workspace(root: Path) -> None:
    """The least hippo takes for a workspace: its settings and a Home note."""
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text("# bench/ingest.py\n")
    (root / "notes").mkdir()
    (root / "notes" / "Home.md").write_text("# Home\n\nThe bench's workspace.\n")


def ingested(out: str) -> str | None:
    return None if re.match(r"ingested \d+ of \d+", out) else "printed no ingest summary"


def new_turns(count: int) -> Callable[[str], str | None]:
    def check(out: str) -> str | None:
        found = re.search(r"(\d+) new turns?\b", out)
        return None if found and int(found[1]) == count else f"did not ingest {count} new turns"

    return check


def wrote_records(out: str) -> str | None:
    found = re.search(r"(\d+) session records? written", out)
    return None if found and int(found[1]) else "wrote no session record for the workspace"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--small-mb", type=int, default=20)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--full-runs", type=int, default=3, help="rounds of the json baseline and a full ingest"
    )
    args = parser.parse_args()
    hippo = installed_hippo()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        small, large, workspace = tmp_path / "small", tmp_path / "large", tmp_path / "ws"
        make_hippo_workspace(workspace)
        say(f"writing a {args.small_mb} MB and a {args.mb} MB corpus")
        make_corpus(small, args.small_mb)
        files = make_corpus(large, args.mb, workspace=workspace)
        size = sum(path.stat().st_size for path in files)
        python = floor(tmp_path)
        env = clean_env(tmp_path / "home", CLAUDE_CONFIG_DIR=str(large))
        base = measure([python, "-c", "pass"], args.runs, cwd=tmp_path, env=env)
        print(f"corpus: {len(files)} files, {size / 1e6:.0f} MB")
        header(f"hippo ingest ({hippo})", args.runs)
        row("python -c pass (empty venv: the floor)", base, base)
        whole = rounds(
            {
                "json": Case([python, "-c", JSON_BASELINE, large], cwd=tmp_path, env=env),
                "full": Case([hippo, "ingest", "--full"], cwd=tmp_path, env=env, check=ingested),
            },
            args.full_runs,
        )
        baseline, full = whole["json"], whole["full"]
        row(f"json.loads of every line ({args.full_runs} runs)", baseline, base)
        row(f"hippo ingest --full ({args.full_runs} runs)", full, base)
        ratio_row("  ingest --full / json.loads", full, baseline, 3.0)
        small_env = clean_env(tmp_path / "home-small", CLAUDE_CONFIG_DIR=str(small))
        small_full = measure([hippo, "ingest", "--full"], 1, cwd=tmp_path, env=small_env)

        # The workspace's first ingest writes its session records; then the timed ones, in
        # rounds with the floor: nothing new, then a turn appended (before, untimed).
        command = [hippo, "ingest"]
        measure(command, 1, cwd=workspace, env=env, check=wrote_records)
        mine = [path for path in files if path.parent.name == folder_name(str(workspace))]
        target, rng = mine[len(mine) // 2], random.Random(3)
        found = rounds(
            {
                "floor": Case([python, "-c", "pass"], cwd=workspace, env=env),
                "idle": Case(command, cwd=workspace, env=env, check=new_turns(0)),
                "one turn": Case(
                    command,
                    cwd=workspace,
                    env=env,
                    before=lambda: append_turn(target, str(workspace), rng),
                    check=new_turns(1),
                ),
            },
            args.runs,
        )
        base = found["floor"]
        row("python -c pass (the floor, in rounds with:)", base, base)
        row("hippo ingest in a workspace, nothing new", found["idle"], base, 3.0)
        row("hippo ingest in a workspace, one turn more", found["one turn"], base, 4.0)
    print(f"peak RSS, full ingest of {args.small_mb} MB: {small_full.rss[0] / 1024:7.1f} MiB")
    print(f"peak RSS, full ingest of {args.mb} MB: {full.rss[0] / 1024:7.1f} MiB")


if __name__ == "__main__":
    main()
