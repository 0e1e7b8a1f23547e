"""Registers the first-party packs shipped inside the ``hippo_packs`` package: ``core``
(which ``hippo init`` installs), ``decisions``, and the theme ``core-strict``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hippo_core.plugins.manager import hookimpl


@hookimpl
def hippo_register_packs(register: Callable[[str, Path], None]) -> None:
    import hippo_packs

    root = Path(hippo_packs.__file__).resolve().parent
    register("core", root / "core")
    register("decisions", root / "decisions")
    register("core-strict", root / "core-strict")
