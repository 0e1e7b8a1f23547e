"""The agent's hot path stays light: `hippo context` imports no heavy library, and none
of dreaming (its types alone cost a few milliseconds)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import WorkspaceMaker

PROBE = """
import sys
from hippo_core.cli import main
sys.argv = ["hippo", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
watched = ("sqlalchemy", "jinja2", "rich", "pydantic", "hippo_core.dream.model")
heavy = sorted(m for m in watched if m in sys.modules)
sys.stderr.write("heavy:" + ",".join(heavy) + "\\n")
"""


def heavy_modules(root: Path, *args: str, stdin: str = "", expect: str = "# Home") -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        input=stdin,
    )
    line = next(x for x in result.stderr.splitlines() if x.startswith("heavy:"))
    assert result.stdout.startswith(expect), result.stderr
    return [m for m in line.removeprefix("heavy:").split(",") if m]


def test_context_imports_no_heavy_library(make_workspace: WorkspaceMaker):
    root = make_workspace("budget_bytes = 20000\n")
    first = heavy_modules(root, "context", "--task", "home page")
    assert "sqlalchemy" not in first and "jinja2" not in first and "rich" not in first
    assert "hippo_core.dream.model" not in first
    # Once the settings were validated, not even pydantic is needed.
    assert heavy_modules(root, "context", "--task", "home page") == []


def test_hooks_import_neither_sqlalchemy_nor_pydantic(make_workspace: WorkspaceMaker):
    root = make_workspace("budget_bytes = 20000\n")
    heavy_modules(root, "context")  # validates the settings once, as any earlier command
    start = json.dumps({"session_id": "s1", "cwd": str(root), "source": "startup"})
    prompt = json.dumps({"session_id": "s1", "cwd": str(root), "prompt": "the home page"})
    assert heavy_modules(root, "hook", "session-start", stdin=start) == []
    assert heavy_modules(root, "hook", "prompt", stdin=prompt, expect="relevant:") == []
