"""How long the pack commands take on a workspace with many packs and a theme.

The workspace has hippo's core pack, a theme over it and N packs of three passes each (every
prompt includes a shared file); a local registry lists one more pack as a tar.gz archive.
Times `hippo pack list`, `hippo pack check` on one pack, and `hippo pack add` and
`hippo pack remove` of the archive, one after the other in each run (and their sum), each
as a ratio to the floor measured in the same run; and what `pack list` costs per pass. No
target. The floor is an empty venv's `python -c pass` and hippo the `hippo` script of a venv
where this checkout is pip-installed (see bench/harness.py); each figure is CPU (user+sys)
and wall time, median and min-max.

Run: python bench/packs.py [--packs N] [--runs R]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import tarfile
import tempfile
from pathlib import Path

from harness import Sample, clean_env, floor, header, installed_hippo, measure, row, run

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


def make_workspace(hippo: Path, root: Path, packs: int, env: dict[str, str]) -> None:
    run([hippo, "init"], cwd=root, env=env)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packs", type=int, default=50)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    hippo = installed_hippo()
    with tempfile.TemporaryDirectory() as tmp:
        base_dir = Path(tmp)
        root = base_dir / "workspace"
        root.mkdir()
        env = clean_env(base_dir / "home")
        make_workspace(hippo, root, args.packs, env)
        base = measure([floor(base_dir), "-c", "pass"], args.runs, cwd=root, env=env)
        listing = measure([hippo, "pack", "list"], args.runs, cwd=root, env=env)
        check = measure(
            [hippo, "pack", "check", ".hippo/packs/bench-000"], args.runs, cwd=root, env=env
        )
        add, remove = Sample(), Sample()
        for _ in range(args.runs):
            for step, sample in (("add", add), ("remove", remove)):
                cpu, wall, rss, _out = run([hippo, "pack", step, "extra"], cwd=root, env=env)
                sample.cpu.append(cpu)
                sample.wall.append(wall)
                sample.rss.append(rss)
    passes = args.packs * 3 + 2
    print(f"workspace: core, a theme over it, {args.packs} packs ({passes} passes)")
    header(f"hippo pack ({hippo})", args.runs)
    row("python -c pass (empty venv: the floor)", base, base)
    row("hippo pack list", listing, base)
    row("hippo pack check", check, base)
    row("hippo pack add (an archive, local registry)", add, base)
    row("hippo pack remove", remove, base)
    row("pack add + remove", add.plus(remove), base)
    per_pass = (listing.wall_median - base.wall_median) / passes
    print(f"pack list per pass, over the floor: {per_pass * 1000:.2f} ms (wall)")


if __name__ == "__main__":
    main()
