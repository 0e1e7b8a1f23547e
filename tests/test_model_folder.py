"""hippo's model folders are never a workspace: a session whose ``cwd`` is one (``claude
-p`` as the dream's model, its sub-agents) gets no record from the hooks or from ingest, is
no evidence for verify and counts for no trigger, whatever notes it read. Only hippo's own
folders: one in a temporary folder, named as the backend names them, holding its owner file
while it exists; a project that merely has the words in its path stays a project. The
files a turn touched are shown in prompts relative to the workspace."""

from __future__ import annotations

import io
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hippo_core.files.model_folder import OWNER, PREFIX, in_model_folder, model_folder_of
from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner
from tests.dream_scene import Scene


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary folder, as ``TMPDIR`` names it."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile reads TMPDIR again
    return folder


def owned(folder: Path) -> Path:
    folder.mkdir()
    (folder / OWNER).write_text("4242\n")
    return folder


def test_hippos_own_folders_and_nothing_else(temp: Path, tmp_path: Path) -> None:
    gone = temp / "hippo-model-abcd1234"
    assert model_folder_of(str(gone / "sub" / "dir")) == str(gone)  # gone: its name says
    live = owned(temp / "hippo-model-q_9x0z7w")
    assert model_folder_of(str(live)) == str(live)
    with tempfile.TemporaryDirectory(prefix=PREFIX) as made:  # as the backend makes one
        Path(made, OWNER).write_text("1\n")
        assert in_model_folder(made)
    assert in_model_folder(made)  # and once it is gone
    (temp / "hippo-model-zzzz9999").mkdir()  # someone's folder of that name, no owner file
    not_ours = [
        str(temp / "hippo-model-zzzz9999" / "src"),
        str(tmp_path / "src" / "my-hippo-model-tests"),  # a project's name, by chance
        str(temp / "my-hippo-model-tests"),
        str(temp / "hippo-model-tests"),  # not the backend's shape of name
        str(temp / "hippo-model-ABCD1234"),
        str(temp / "deeper" / "hippo-model-abcd1234"),  # not in the temporary folder itself
        "hippo-model-abcd1234",
        None,
        42,
        "",
    ]
    assert [path for path in not_ours if in_model_folder(path)] == []


def _session(scene: Scene, cwd: Path, prompt: str) -> str:
    """A Claude Code session in ``cwd``, two hours ago, that read the Testing note."""
    start = datetime.now(UTC) - timedelta(hours=2)
    made = ClaudeSession(scene.claude_home, str(cwd), start=start)
    made.prompt(prompt)
    made.tool("Read", "# Testing", file_path=str(scene.note))
    made.answer("The Testing note says to run `make test`; I ran `uv run pytest -q` instead.")
    made.write()
    return made.session


def test_a_model_runs_session_is_no_session_of_the_workspace_nor_evidence(
    scene: Scene, temp: Path, tmp_path: Path
) -> None:
    folder = temp / "hippo-model-abcd1234"  # gone, as after the model call
    by_hippo = _session(scene, folder, "Check the Testing note against the turns below.")
    project = tmp_path / "src" / "my-hippo-model-tests"
    project.mkdir(parents=True)
    by_person = _session(scene, project, "How do we run the Testing suite?")
    owner_less = temp / "hippo-model-zzzz9999"
    owner_less.mkdir()
    by_someone = _session(scene, owner_less, "Does the Testing suite need Postgres?")

    assert scene.hippo("ingest", cwd=scene.root).code == 0
    records = {p.stem for p in (scene.root / ".hippo" / "sessions").glob("*.json")}
    assert by_hippo not in records
    assert {by_person, by_someone} <= records

    run = scene.dream("--dry-run", "--show-prompts")
    assert run.code == 0, run.err
    assert f"Session {by_person}, turn 0" in run.out
    assert by_hippo not in run.out
    # The note as the workspace names it, not /tmp/.../notes/Testing.md.
    assert "files: read notes/Testing.md\n" in run.out
    assert str(scene.note) not in run.out


def test_files_outside_the_workspace_are_shown_from_the_home_folder(
    scene: Scene, tmp_path: Path
) -> None:
    from hippo_core.dream.turns import shown

    home = Path.home()
    assert shown(str(scene.root / "notes" / "Testing.md"), scene.root) == "notes/Testing.md"
    assert shown(str(home / "src" / "other" / "a.py"), scene.root) == "~/src/other/a.py"
    assert shown("/etc/hosts", scene.root) == "/etc/hosts"
    assert shown("notes/Testing.md", scene.root) == "notes/Testing.md"
    assert shown(str(scene.root) + "-other/x.md", None) == str(scene.root) + "-other/x.md"


def test_the_hooks_do_nothing_for_a_model_run_whatever_project_it_names(
    hippo: HippoRunner, scene: Scene, temp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dream started from an agent's hook carries ``CLAUDE_PROJECT_DIR``; the model it runs
    (``claude -p`` with the user's hooks) starts in its model folder."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(scene.root))
    folder = owned(temp / "hippo-model-k3k3k3k3")
    for event, extra in (
        ("session-start", {}),
        ("prompt", {"prompt": "check"}),
        ("session-end", {}),
    ):
        payload = {"session_id": "model-run", "cwd": str(folder), **extra}
        monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
        run = hippo("hook", event, cwd=folder)
        assert (run.code, run.out, run.err) == (0, "", "")
    assert not (scene.root / ".hippo" / "sessions" / "model-run.json").exists()

    elsewhere = temp / "not-a-model-folder"  # the project variable still works elsewhere
    elsewhere.mkdir()
    payload = {"session_id": "person", "cwd": str(elsewhere)}
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    assert "<hippo-context>" in hippo("hook", "session-start", cwd=elsewhere).out


def test_a_record_left_from_before_is_no_session_and_counts_for_no_trigger(
    scene: Scene, temp: Path
) -> None:
    from hippo_core.agents.sessions import session_records
    from hippo_core.builtins.triggers import ended_since_dream
    from hippo_core.workspace.folder import Workspace

    sessions = scene.root / ".hippo" / "sessions"
    sessions.mkdir(exist_ok=True)
    ended = "2026-11-30T05:00:00Z"
    for sid, cwd in (("model", str(temp / "hippo-model-abcd1234")), ("person", str(scene.root))):
        record = {"id": sid, "tool": "claude-code", "kind": "declared", "cwd": cwd}
        (sessions / f"{sid}.json").write_text(json.dumps({**record, "ended": ended}))
    workspace = Workspace.open(scene.root)
    assert [r["id"] for r in session_records(workspace)] == ["person"]
    assert sorted(r["id"] for r in session_records(workspace, model_runs=True)) == [
        "model",
        "person",
    ]
    assert ended_since_dream(workspace) == 1
