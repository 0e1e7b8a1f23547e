"""docs/architecture.md's table of what hippo_core is made of is what tools/kernel_size.py
prints for the code as it is."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from kernel_size import PACKAGE, sizes, table  # noqa: E402


def test_the_architecture_shows_the_kernels_size_as_it_is():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert table() in page, "docs/architecture.md's kernel table is stale: run tools/kernel_size.py"


def test_every_line_of_hippo_core_is_counted_once():
    counted = sum(sizes().values())
    assert counted == sum(len(p.read_text("utf-8").splitlines()) for p in PACKAGE.rglob("*.py"))
    assert min(sizes().values()) > 0
