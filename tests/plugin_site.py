"""Third-party plugins for the tests: distributions installed in a folder of their own (a
site on ``PYTHONPATH``), and the real ``hippo`` run in a process that finds them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def make_distribution(
    site: Path, dist: str, module: str, source: str, version: str = "1.2.0"
) -> None:
    """``module`` (its ``source``) installed as the distribution ``dist``, whose entry point
    in the group ``hippo`` is the module."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[hippo]\n{module} = {module}\n")


def run_hippo(
    args: list[str], cwd: Path, site: Path, load: str | None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``hippo ARGS`` in ``cwd``, with ``HIPPO_LOAD_PLUGINS=load`` (unset for None)."""
    found = {k: v for k, v in os.environ.items() if k != "HIPPO_LOAD_PLUGINS"}
    found.update(env, PYTHONPATH=str(site))
    if load is not None:
        found["HIPPO_LOAD_PLUGINS"] = load
    return subprocess.run(
        [sys.executable, "-m", "hippo_core", *args],
        cwd=cwd,
        env=found,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
