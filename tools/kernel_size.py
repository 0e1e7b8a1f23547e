"""Print what hippo_core is made of, in lines: the kernel proper, the built-in plugins and
the command line, as docs/architecture.md's table shows it.

Run it from the checkout: python tools/kernel_size.py
tests/test_kernel_size.py fails once the table in docs/architecture.md drifts from what
this prints by more than 3% in a figure or a point in a share.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "hippo_core"
#: The parts, by the folders of hippo_core that hold them; the kernel is everything else.
PARTS = {
    "built-in plugins (`builtins/`)": ("builtins",),
    "the command line (`cli/`)": ("cli",),
}
KERNEL = "the kernel proper (every other room)"


def lines(path: Path) -> int:
    """Lines of a Python file, blank ones and comments included (what `wc -l` counts)."""
    return len(path.read_text(encoding="utf-8").splitlines())


def sizes() -> dict[str, int]:
    """Lines of hippo_core's Python files, by part."""
    found = {KERNEL: 0, **dict.fromkeys(PARTS, 0)}
    for path in PACKAGE.rglob("*.py"):
        room = path.relative_to(PACKAGE).parts[0]
        part = next((name for name, rooms in PARTS.items() if room in rooms), KERNEL)
        found[part] += lines(path)
    return found


def table() -> str:
    """The markdown table of :func:`sizes`, rounded to hundreds, with the total."""
    found = sizes()
    total = sum(found.values())
    rows = ["| part | lines | share |", "|---|---:|---:|"]
    for name, count in found.items():
        rows.append(f"| {name} | {round(count, -2):,} | {count / total:.0%} |")
    rows.append(f"| all of `hippo_core` | {round(total, -2):,} | 100% |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table())
