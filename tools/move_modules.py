"""Move kernel modules into a room (a sub-package of hippo_core) and rewrite every reference.

    python tools/move_modules.py ROOM "the room's docstring" OLD[=NEW] ...

``OLD`` is a module at hippo_core's root (``atomic``), ``NEW`` its name inside the room
(``atomic`` when left out). The room is made if it does not exist; a module named like the
room moves first (``settings`` into ``settings/``). Each file is moved with ``git mv``, so its
history follows it. Then every file git tracks is rewritten: dotted names
(``hippo_core.atomic``, in imports, strings and prose), paths (``hippo_core/atomic.py``) and
``from hippo_core import atomic, Workspace`` lines, split by where each name now lives. Last,
ruff sorts the imports and formats the Python files it changed. What the script cannot know
(a table naming ``atomic.py`` alone, the module list of docs/architecture.md) is left to the
person moving, who runs the suite after each room.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "hippo_core"
#: The files whose text is rewritten (any other is data: fixtures, archives, templates).
TEXT = {".py", ".md", ".toml", ".sh", ".txt", ".cfg", ".in", ".yml", ".yaml", ".json", ""}


def git(*args: str) -> str:
    """Run git in the checkout; its output."""
    done = subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True)
    return done.stdout


def move(room: str, docstring: str, moves: dict[str, str]) -> dict[str, str]:
    """``git mv`` each module into the room; old dotted name -> new dotted name."""
    folder = KERNEL / room
    if room in moves and (KERNEL / f"{room}.py").exists():
        # A module named like its room moves aside first, or the folder could not be made.
        git("mv", f"hippo_core/{room}.py", f"hippo_core/_{room}_moving.py")
    folder.mkdir(exist_ok=True)
    init = folder / "__init__.py"
    if not init.exists():
        init.write_text(f'"""{docstring}"""\n', encoding="utf-8")
        git("add", str(init.relative_to(ROOT)))
    renamed = {}
    for old, new in moves.items():
        source = f"_{old}_moving" if old == room else old
        target = folder / f"{new}.py"
        if target.exists():
            sys.exit(f"move_modules: {target.relative_to(ROOT)} exists already; pick another name")
        git("mv", f"hippo_core/{source}.py", str(target.relative_to(ROOT)))
        renamed[f"hippo_core.{old}"] = f"hippo_core.{room}.{new}"
    return renamed


def rewrite_from_imports(text: str, renamed: dict[str, str]) -> str:
    """``from hippo_core import a, B`` (on one line or in brackets): each moved module from
    its room."""
    moved = {old.rpartition(".")[2]: new for old, new in renamed.items()}

    def split(match: re.Match[str]) -> str:
        listed = match.group(2) or match.group(3)
        indent, names = match.group(1), [n.strip() for n in listed.split(",") if n.strip()]
        if not any(name.split(" as ")[0] in moved for name in names):
            return match.group(0)
        kept = [name for name in names if name.split(" as ")[0] not in moved]
        by_room: dict[str, list[str]] = {}
        for name in names:
            base = name.split(" as ")[0]
            if base in moved:
                package, _, module = moved[base].rpartition(".")
                # A module renamed keeps its old name in the importing code, which still runs.
                alias = f"{module} as {name.rpartition(' as ')[2]}"
                by_room.setdefault(package, []).append(module if base == module else alias)
        lines = [
            f"{indent}from {package} import {', '.join(mods)}" for package, mods in by_room.items()
        ]
        if kept:
            lines.insert(0, f"{indent}from hippo_core import {', '.join(kept)}")
        return "\n".join(lines)

    one_line, in_brackets = r"([\w ,]+)$", r"\(([\w ,\s]+)\)"
    pattern = rf"^([ \t]*)from hippo_core import (?:{one_line}|{in_brackets})"
    return re.sub(pattern, split, text, flags=re.M)


def rewrite(text: str, renamed: dict[str, str]) -> str:
    """Every reference to a moved module in one file's text, rewritten."""
    # One pass for every name, before the ``from`` lines are split: a room named like the
    # module it takes (``hippo_core.plugins.manager``) must not have its new names rewritten again.
    dotted = "|".join(re.escape(old) for old in sorted(renamed, key=len, reverse=True))
    text = re.sub(rf"(?<![\w.])({dotted})(?!\w)", lambda m: renamed[m.group(1)], text)
    paths = {
        old.replace(".", "/") + ".py": new.replace(".", "/") + ".py" for old, new in renamed.items()
    }
    either = "|".join(re.escape(old) for old in sorted(paths, key=len, reverse=True))
    text = re.sub(rf"(?<![\w/])({either})(?!\w)", lambda m: paths[m.group(1)], text)
    return rewrite_from_imports(text, renamed)


def main(argv: list[str]) -> None:
    if len(argv) < 3:
        sys.exit(__doc__.strip().splitlines()[0] if __doc__ else "usage")
    room, docstring, specs = argv[0], argv[1], argv[2:]
    moves = {spec.partition("=")[0]: spec.partition("=")[2] or spec for spec in specs}
    missing = [old for old in moves if not (KERNEL / f"{old}.py").exists()]
    if missing:
        sys.exit(f"move_modules: no module hippo_core/{missing[0]}.py at the kernel's root")
    renamed = move(room, docstring, moves)
    changed = []
    for name in git("ls-files").splitlines():
        path = ROOT / name
        if path.suffix not in TEXT or not path.is_file() or "scaffold" in path.parts:
            continue
        before = path.read_text(encoding="utf-8")
        after = rewrite(before, renamed)
        if after != before:
            path.write_text(after, encoding="utf-8")
            changed.append(name)
    python = [name for name in changed if name.endswith(".py")]
    ruff = [str(ROOT / ".venv" / "bin" / "ruff")]
    if python:
        subprocess.run([*ruff, "check", "--fix", "--select", "I", "-q", *python], cwd=ROOT)
        subprocess.run([*ruff, "format", "-q", *python], cwd=ROOT)
    for old, new in renamed.items():
        print(f"{old} -> {new}")
    print(f"{len(changed)} files rewritten; long lines to wrap by hand follow")
    subprocess.run([*ruff, "check", "--select", "E501", "-q", *python], cwd=ROOT)


if __name__ == "__main__":
    main(sys.argv[1:])
