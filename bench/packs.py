"""How long the pack commands take on a workspace with many packs and a theme.

The workspace has hippo's core pack, a theme over it and N packs of three passes each (every
prompt includes a shared file); a local registry lists one more pack as a tar.gz archive.
Prints the median wall time of `hippo pack list`, of `hippo pack check` on one pack, and of
a `hippo pack add` + `hippo pack remove` cycle from the archive, each as a ratio to a bare
`python -c pass` measured in the same run.

Run: python bench/packs.py [--packs N] [--runs R]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASS = (
    'protocol = "HIPPO_V1"\nprompt = "prompts/{name}.md"\nreads = ["notes", "turns"]\n'
    'reviewer = "personas/reviewer.md"\nper_note = true\n'
)
PROMPT = '{{% include "prompts/shared.md" %}}\nCheck {name}.\n{{{{notes}}}}\n{{{{turns}}}}\n'


def manifest(name: str, version: str = "1.0.0", overlays: str = "") -> str:
    text = f'name = "{name}"\nversion = "{version}"\ndescription = "bench"\nprotocol = "HIPPO_V1"\n'
    return text + (f'overlays = "{overlays}"\n' if overlays else "")


def write_pack(folder: Path, name: str) -> None:
    files = {
        "pack.toml": manifest(name),
        "prompts/shared.md": "Reply with a JSON array of changes.\n" * 20,
        "personas/reviewer.md": "You are a careful reviewer.\n" * 20,
    }
    for number in range(3):
        pass_name = f"{name}-{number}"
        files[f"passes/{pass_name}.toml"] = PASS.format(name=pass_name)
        files[f"prompts/{pass_name}.md"] = PROMPT.format(name=pass_name)
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")


def make_workspace(root: Path, packs: int, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "hippo_core", "init"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    for number in range(packs):
        write_pack(root / ".hippo" / "packs" / f"bench-{number:03d}", f"bench-{number:03d}")
    theme = root / ".hippo" / "packs" / "strict"
    (theme / "personas").mkdir(parents=True)
    (theme / "pack.toml").write_text(manifest("strict", overlays="core"), encoding="utf-8")
    (theme / "personas" / "verify-reviewer.md").write_text("Be strict.\n", encoding="utf-8")
    registry = make_registry(root.parent / "registry")
    (root / ".hippo" / "settings.toml").write_text(
        f'themes = ["strict"]\nregistries = ["{registry}"]\n', encoding="utf-8"
    )


def make_registry(folder: Path) -> Path:
    source = folder / "src"
    write_pack(source, "extra")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(source.rglob("*")):
            tar.add(path, arcname=f"extra/{path.relative_to(source).as_posix()}", recursive=False)
    archive = folder / "extra-1.0.0.tar.gz"
    archive.write_bytes(buffer.getvalue())
    digest = hashlib.sha256(buffer.getvalue()).hexdigest()
    index = folder / "index.toml"
    index.write_text(
        'format = 1\n[[pack]]\nname = "extra"\nsummary = "bench"\nlicense = "MIT"\n'
        '[[pack.versions]]\nversion = "1.0.0"\nhippo = ""\n'
        'passes = ["extra-0", "extra-1", "extra-2"]\n'
        f'source = {{ archive = "extra-1.0.0.tar.gz", sha256 = "{digest}" }}\n',
        encoding="utf-8",
    )
    return index


def median(command: list[str], cwd: Path, env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packs", type=int, default=50)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "workspace"
        root.mkdir()
        env = {**os.environ, "HIPPO_HOME": str(base / "home"), "HIPPO_LOAD_PLUGINS": ""}
        make_workspace(root, args.packs, env)
        hippo = [sys.executable, "-m", "hippo_core"]
        bare = median([sys.executable, "-c", "pass"], root, env, args.runs)
        listing = median([*hippo, "pack", "list"], root, env, args.runs)
        check = median([*hippo, "pack", "check", ".hippo/packs/bench-000"], root, env, args.runs)
        cycle = []
        for _ in range(args.runs):
            started = time.perf_counter()
            for step in (["pack", "add", "extra"], ["pack", "remove", "extra"]):
                done = subprocess.run(
                    [*hippo, *step], cwd=root, env=env, capture_output=True, text=True
                )
                if done.returncode != 0:
                    raise SystemExit(f"hippo {' '.join(step)} failed: {done.stderr.strip()}")
            cycle.append(time.perf_counter() - started)
        shutil.rmtree(base / "home", ignore_errors=True)
    passes = args.packs * 3 + 2
    print(f"workspace: core, a theme over it, {args.packs} packs ({passes} passes)")
    print(f"python -c pass:         {bare * 1000:7.1f} ms (median of {args.runs})")
    print(f"hippo pack list:        {listing * 1000:7.1f} ms = {listing / bare:4.1f}x")
    print(f"hippo pack check:       {check * 1000:7.1f} ms = {check / bare:4.1f}x")
    add_remove = statistics.median(cycle)
    print(
        f"pack add + remove:      {add_remove * 1000:7.1f} ms = {add_remove / bare:4.1f}x"
        " (two commands, an archive from a local registry)"
    )
    print(f"pack list per pass:     {(listing - bare) / passes * 1000:7.2f} ms")


if __name__ == "__main__":
    main()
