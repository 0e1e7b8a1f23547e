"""Scripted model programs for tests: a model that answers by rules, run as a real program.

``argv, script = scripted_model(tmp_path, [{"when": ["Reply"], "reply": "{}"}])`` writes the
script and returns the ``model_command`` that runs it; ``model_settings(argv)`` is the
settings text; ``calls(script)`` is what the model was sent. ``scripted.py`` describes the
rules.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SCRIPTED = Path(__file__).resolve().parent / "scripted.py"


def scripted_model(
    tmp_path: Path, rules: list[dict[str, Any]], system_file: bool = True
) -> tuple[list[str], Path]:
    """Write a script of ``rules`` below ``tmp_path``; return the argv for ``model_command``
    and the script's path.

    With ``system_file``, the argv passes ``--system-file {system_file}``, so the system
    prompt arrives in a file; without it, it arrives first on stdin.
    """
    folder = tmp_path / "models"
    folder.mkdir(exist_ok=True)
    number = 1
    while (folder / f"model{number}.json").exists():
        number += 1
    script = folder / f"model{number}.json"
    script.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    argv = [sys.executable, str(SCRIPTED), str(script)]
    if system_file:
        argv += ["--system-file", "{system_file}"]
    return argv, script


def model_settings(argv: list[str], *, timeout: float | None = None) -> str:
    """``.hippo/settings.toml`` lines that make ``argv`` the model (JSON strings are TOML)."""
    text = f"model_command = {json.dumps(argv)}\n"
    if timeout is not None:
        text += f"model_timeout_seconds = {float(timeout)!r}\n"
    return text


def calls(script: Path) -> list[dict[str, Any]]:
    """Every call the model behind ``script`` received, oldest first."""
    log = script.with_suffix(".calls.jsonl")
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
