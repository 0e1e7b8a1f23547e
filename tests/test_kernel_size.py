"""docs/architecture.md's table of what hippo_core is made of is what tools/kernel_size.py
prints for the code as it is, give or take what a few changes move: each figure within 3%,
each share within a point, so that the table tells the truth without every change having
to rewrite it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from kernel_size import PACKAGE, sizes, table  # noqa: E402

#: How far the page's figures may drift from the code's before the table must be made again.
DRIFT, SHARE_DRIFT = 0.03, 1


def rows(text: str) -> dict[str, tuple[int, int]]:
    """The table's rows in ``text``: each part's lines and share (in %)."""
    found = re.findall(r"^\| (.+?) \| ([\d,]+) \| (\d+)% \|$", text, re.MULTILINE)
    return {name: (int(count.replace(",", "")), int(share)) for name, count, share in found}


def test_the_architecture_shows_the_kernels_size_as_it_is():
    page = rows((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    now = rows(table())
    stale = "docs/architecture.md's kernel table is stale: run tools/kernel_size.py"
    assert set(now) <= set(page), stale
    for name, (count, share) in now.items():
        shown, shown_share = page[name]
        assert abs(shown - count) <= DRIFT * count, f"{stale} ({name}: {shown:,} vs {count:,})"
        assert abs(shown_share - share) <= SHARE_DRIFT, f"{stale} ({name}: {shown_share}%)"


def test_every_line_of_hippo_core_is_counted_once():
    counted = sum(sizes().values())
    assert counted == sum(len(p.read_text("utf-8").splitlines()) for p in PACKAGE.rglob("*.py"))
    assert min(sizes().values()) > 0
