"""Shared fixtures: an isolated home for every test, workspaces on disk, and the CLI."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings as hypothesis_settings

if TYPE_CHECKING:
    from tests.dream_scene import Scene

from hippo_core.cli import main
from hippo_core.plugins.manager import reset_plugins
from tests.models.anthropic_server import anthropic  # noqa: F401  (a fixture: Claude's API)
from tests.models.chat_server import chat  # noqa: F401  (a fixture: a scripted chat server)
from tests.models.gemini_server import gemini_api  # noqa: F401  (a fixture: Gemini's API)
from tests.models.responses_server import responses_api  # noqa: F401  (a fixture: OpenAI Responses)
from tests.postgres import postgres, postgres_server  # noqa: F401  (fixtures: a real server)
from tests.small_model import small_model  # noqa: F401  (a fixture: SmolLM2 on llama-cpp)

# Property tests draw the same examples on every CI run (a seed from each test's name), so a
# bug they can find fails every run instead of one run in some; a run elsewhere draws anew,
# and hypothesis prints the failing example's blob to pin it with @reproduce_failure.
hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test touches a real user directory or picks up installed plugins by accident."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HIPPO_HOME", str(home / "hippo"))
    # hippo's own sleep pack is a plugin from an entry point; other installed ones stay out.
    monkeypatch.setenv("HIPPO_LOAD_PLUGINS", "sleep")
    reset_plugins()
    yield home
    reset_plugins()


@dataclass
class Run:
    code: int
    out: str
    err: str


HippoRunner = Callable[..., Run]


@pytest.fixture
def hippo(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> HippoRunner:
    """Run the ``hippo`` console script in this process: ``hippo("context", cwd=ws)``."""

    def run(*args: str, cwd: Path) -> Run:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(sys, "argv", ["hippo", *args])
        capsys.readouterr()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def write_notes(root: Path, notes: dict[str, str | bytes], notes_dir: str = "notes") -> None:
    """Write notes (text or raw bytes) below ``root/notes_dir``, dated in the past."""
    past = time.time() - 60
    for rel, content in notes.items():
        path = root / notes_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
        os.utime(path, (past, past))


WorkspaceMaker = Callable[..., Path]


@pytest.fixture
def make_workspace(tmp_path: Path) -> WorkspaceMaker:
    """A workspace with settings text and notes: ``make_workspace(settings, notes)``."""
    counter = iter(range(1000))

    def make(settings: str = "", notes: dict[str, str | bytes] | None = None) -> Path:
        root = tmp_path / f"ws{next(counter)}"
        (root / ".hippo").mkdir(parents=True)
        (root / ".hippo" / "settings.toml").write_text(settings, encoding="utf-8")
        default = {"Home.md": "---\ntype: topic\n---\n# Home\n\nWelcome.\n"}
        write_notes(root, default if notes is None else notes)
        return root

    return make


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Claude Code home (``CLAUDE_CONFIG_DIR``) for transcripts a test writes."""
    home = tmp_path / "claude"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return home


@pytest.fixture
def scene(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path, claude_home: Path
) -> Scene:
    """A workspace ready to dream (``tests/dream_scene.py``)."""
    from tests.dream_scene import make_scene

    return make_scene(make_workspace(), hippo, tmp_path, claude_home)
