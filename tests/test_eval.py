"""``hippo eval pack``: a pack's cases run through the real dream, a scripted model,
recorded and replayed."""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hippo_core import hookimpl
from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, Run, WorkspaceMaker, write_notes
from tests.dream_scene import CONFIRM, PROPOSER, REJECT, TESTING, VERIFY_REVIEWER
from tests.models import calls, model_settings, scripted_model
from tests.test_packs import registered

CORE = Path(__file__).resolve().parent.parent / "hippo_packs" / "core"
START = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
RIGHT_SESSION = "5f0c2a8e-1d3b-4c6a-9e7f-0a1b2c3d4e5f"
WRONG_SESSION = "7a9b8c6d-2e4f-4a1b-8c3d-5e6f7a8b9c0d"
DEPLOY = """\
---
type: policy
status: current
---
# Deploy

Deploy with `make deploy` from the main branch.

Releases go out on Tuesdays after the standup. The on-call engineer watches the dashboards
for an hour afterwards and rolls back with `make rollback` when error rates rise.
"""
MAKE_TEST = "Run the tests with `make test` from the repository root."
MAKE_DEPLOY = "Deploy with `make deploy` from the main branch."
NO_MODEL = [sys.executable, "-c", "import sys; sys.exit(1)"]


def change(session: str, note: str, old: str, new: str) -> dict:
    return {
        "note": note,
        "kind": "replace",
        "old": old,
        "new": new,
        "reason": "The transcript shows it.",
        "evidence": [{"session": session, "ordinal": 0}],
    }


RIGHT = change(
    RIGHT_SESSION,
    "Testing.md",
    MAKE_TEST,
    "Run the tests with `uv run pytest -q` from the repository root.",
)
WRONG = change(
    WRONG_SESSION,
    "Deploy.md",
    MAKE_DEPLOY,
    "Deploy with `kubectl apply -k staging` from the main branch.",
)


def add_case(
    pack: Path,
    name: str,
    case_toml: str,
    notes: dict[str, str | bytes],
    session: str,
    prompt: str,
    answer: str,
    read: str = "",
) -> Path:
    """``eval/<name>/`` with its notes and one Claude Code session run in the workspace."""
    folder = pack / "eval" / name
    folder.mkdir(parents=True)
    (folder / "case.toml").write_text(case_toml, encoding="utf-8")
    write_notes(folder, notes)
    transcript = ClaudeSession(
        folder / "transcripts" / "claude-code", "{{workspace}}", session=session, start=START
    )
    transcript.prompt(prompt)
    if read:
        transcript.tool("Read", "ok", file_path=read)
    transcript.answer(answer).write()
    return folder


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    """The core pack with two cases: one the scripted model gets right, one it gets wrong."""
    root = tmp_path / "src" / "core"
    shutil.copytree(CORE, root)
    add_case(
        root,
        "right",
        'description = "verify corrects the test command"\npasses = ["verify"]\n'
        '[[expect]]\nnote = "Testing.md"\nkind = "replace"\ncontains = ["uv run pytest"]\n',
        {"Testing.md": TESTING},
        RIGHT_SESSION,
        "How do we run the Testing suite now that the Makefile is gone?",
        "The Makefile was removed. I ran `uv run pytest -q` from the repository root "
        "and all 214 tests passed.",
        read="{{workspace}}/pyproject.toml",
    )
    add_case(
        root,
        "wrong",
        'description = "verify corrects the deploy command"\n'
        '[[expect]]\nnote = "Deploy.md"\nkind = "replace"\n'
        'contains = ["./scripts/deploy.sh --prod"]\n',
        {"Deploy.md": DEPLOY},
        WRONG_SESSION,
        "How do we Deploy now that the Makefile is gone?",
        "I ran `./scripts/deploy.sh --prod` from the main branch and the Deploy finished; "
        "staging still uses `kubectl apply -k staging`.",
    )
    return root


@pytest.fixture
def here(make_workspace: WorkspaceMaker, tmp_path: Path) -> Path:
    """The current workspace, whose model settings the cases use; its model is scripted."""
    return make_workspace(model_settings(scripted(tmp_path, CONFIRM)[0]))


def scripted(tmp_path: Path, verdict: str) -> tuple[list[str], Path]:
    return scripted_model(
        tmp_path,
        [
            {"when": [PROPOSER, MAKE_TEST], "reply": json.dumps([RIGHT])},
            {"when": [PROPOSER, MAKE_DEPLOY], "reply": json.dumps([WRONG])},
            {"when": [VERIFY_REVIEWER], "reply": verdict},
        ],
    )


def use_model(here: Path, argv: list[str]) -> None:
    (here / ".hippo" / "settings.toml").write_text(model_settings(argv), encoding="utf-8")


def run_json(hippo: HippoRunner, here: Path, *args: str) -> tuple[Run, dict]:
    run = hippo("eval", "pack", *args, "--json", cwd=here)
    return run, json.loads(run.out) if run.out.strip() else {}


def test_a_right_and_a_wrong_change_give_precision_recall_and_agreement(
    hippo: HippoRunner, here: Path, pack: Path
):
    run = hippo("eval", "pack", str(pack), cwd=here)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0] == "right: ok: 1 of 1 proposals valid, 1 applied, 1 of 1 expected; 2 calls"
    assert lines[1] == "wrong: ok: 1 of 1 proposals valid, 1 applied, 0 of 1 expected; 2 calls"
    assert lines[2] == "validity   1.00  (2 of 2 proposals passed the checks)"
    assert lines[3] == "precision  0.50  (1 of 2 applied changes were expected)"
    assert lines[4] == "recall     0.50  (1 of 2 expected changes applied)"
    assert lines[5] == "agreement  0.50  (1 of 2 verdicts agree with the expectation)"
    assert lines[6] == "calls      4"
    assert lines[7].startswith("bytes      ") and lines[7].endswith(" out")
    assert lines[8].startswith("seconds    ")
    # The pack itself is left as it was: the changes went to the cases' temporary notes.
    assert (pack / "eval" / "right" / "notes" / "Testing.md").read_text() == TESTING
    assert not (pack / "eval" / "right" / "recorded.json").exists()


class ShipsCore:
    """A distribution's plugin registering a pack named like the one under test."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @hookimpl
    def hippo_register_packs(self, register):
        register("core", self.folder)


def test_a_pack_a_distribution_also_ships_is_measured_from_its_folder(
    hippo: HippoRunner, here: Path, pack: Path, tmp_path: Path
):
    distribution = tmp_path / "site-packages" / "hippo_pack_core"
    distribution.mkdir(parents=True)
    (distribution / "plugin.py").write_text("", encoding="utf-8")
    shutil.move(pack, distribution / "pack")
    with registered(ShipsCore(distribution / "pack")):
        run = hippo("eval", "pack", str(distribution.parent), "--case", "right", cwd=here)
    assert run.code == 0, run.err
    assert run.out.splitlines()[0].startswith("right: ok: 1 of 1 proposals valid, 1 applied")


def test_one_case_alone_and_a_rejecting_reviewer(
    hippo: HippoRunner, here: Path, pack: Path, tmp_path: Path
):
    run, data = run_json(hippo, here, str(pack), "--case", "right")
    assert run.code == 0, run.err
    assert [case["name"] for case in data["cases"]] == ["right"]
    assert data["precision"] == {"rate": 1.0, "hits": 1, "total": 1}
    assert data["recall"] == {"rate": 1.0, "hits": 1, "total": 1}
    assert data["agreement"] == {"rate": 1.0, "hits": 1, "total": 1}

    use_model(here, scripted(tmp_path, REJECT)[0])
    run, data = run_json(hippo, here, str(pack))
    assert run.code == 0, run.err
    assert data["precision"] == {"rate": None, "hits": 0, "total": 0}
    assert data["recall"] == {"rate": 0.0, "hits": 0, "total": 2}
    # Rejecting the right change disagrees; rejecting the wrong one agrees.
    assert data["agreement"] == {"rate": 0.5, "hits": 1, "total": 2}


def test_the_json_shape(hippo: HippoRunner, here: Path, pack: Path):
    run, data = run_json(hippo, here, str(pack))
    assert run.code == 0, run.err
    assert set(data) == {
        "pack",
        "mode",
        "ok",
        "validity",
        "precision",
        "recall",
        "agreement",
        "calls",
        "bytes_in",
        "bytes_out",
        "seconds",
        "cases",
    }
    assert (data["pack"], data["mode"], data["ok"], data["calls"]) == ("core", "live", True, 4)
    assert data["bytes_in"] > 0 and data["bytes_out"] > 0
    right = data["cases"][0]
    assert set(right) == {
        "name",
        "status",
        "error",
        "transcripts",
        "sessions",
        "invalid",
        "proposals",
        "applied",
        "not_applied",
        "matched",
        "expected",
        "verdicts",
        "agreed",
        "pending",
        "calls",
        "bytes_in",
        "bytes_out",
        "seconds",
    }
    assert (right["name"], right["status"], right["error"]) == ("right", "ok", "")
    assert (right["transcripts"], right["sessions"], right["applied"]) == (1, 1, 1)


def test_a_queue_reviewer_gives_no_verdict_to_count(hippo: HippoRunner, here: Path, pack: Path):
    verify = pack / "passes" / "verify.toml"
    verify.write_text(verify.read_text() + 'review = "queue"\n')
    run = hippo("eval", "pack", str(pack), "--case", "right", cwd=here)
    assert run.code == 0, run.err
    assert "agreement     -  (0 of 0 verdicts agree with the expectation)" in run.out.splitlines()
    assert "recall     0.00  (0 of 1 expected changes applied)" in run.out.splitlines()


def test_record_then_replay_without_a_model_gives_the_same_figures(
    hippo: HippoRunner, here: Path, pack: Path, tmp_path: Path
):
    script = tmp_path / "models" / "model1.json"
    recorded, live = run_json(hippo, here, str(pack), "--record")
    assert recorded.code == 0, recorded.err
    assert live["mode"] == "record"
    calls_made = len(calls(script))
    assert calls_made == 4
    saved = json.loads((pack / "eval" / "right" / "recorded.json").read_text())
    assert saved["version"] == 1 and len(saved["calls"]) == 2
    proposer, reviewer = saved["calls"]
    assert set(proposer) == {"system", "prompt", "reply"}
    assert proposer["system"].startswith(PROPOSER) and PROPOSER in proposer["prompt"]
    assert reviewer["system"].startswith(VERIFY_REVIEWER)
    # The files a turn touched are shown relative to the case's workspace, so its
    # temporary path is in no prompt (where it is, it is written as {{workspace}}).
    assert "files: read pyproject.toml\n" in proposer["prompt"]
    assert "hippo-eval-" not in json.dumps(saved)

    use_model(here, NO_MODEL)
    run, replayed = run_json(hippo, here, str(pack), "--replay")
    assert run.code == 0, run.err
    assert len(calls(script)) == calls_made
    for key in ("validity", "precision", "recall", "agreement", "calls", "bytes_in", "bytes_out"):
        assert replayed[key] == live[key], key
    assert replayed["mode"] == "replay" and replayed["seconds"] == 0
    assert json.loads((pack / "eval" / "right" / "recorded.json").read_text()) == saved

    prompt = pack / "prompts" / "verify.md"
    prompt.write_text(prompt.read_text() + "\nHOUSE RULE: be brief.\n")
    run = hippo("eval", "pack", str(pack), "--replay", "--case", "right", cwd=here)
    assert run.code == 1
    [line] = [line for line in run.out.splitlines() if ": failed: " in line]
    assert line == (
        "right: failed: replay: a prompt of core/verify is not among the 2 recorded calls of "
        "eval/right/recorded.json (the prompt changed since the recording); "
        "run hippo eval pack with --record again"
    )


def test_replay_without_a_recording_says_to_record_first(
    hippo: HippoRunner, here: Path, pack: Path
):
    run = hippo("eval", "pack", str(pack), "--replay", "--case", "wrong", cwd=here)
    assert run.code == 1
    assert run.out.splitlines()[0] == (
        "wrong: failed: eval/wrong/recorded.json does not exist; "
        "run hippo eval pack with --record first"
    )
    assert not (pack / "eval" / "wrong" / "recorded.json").exists()


def test_an_unreachable_model_fails_the_case(hippo: HippoRunner, here: Path, pack: Path):
    use_model(here, NO_MODEL)
    run = hippo("eval", "pack", str(pack), "--record", "--case", "right", cwd=here)
    assert run.code == 1
    assert run.out.startswith("right: failed: model_command exited with 1")
    assert "1 of 1 case failed" in run.err
    assert not (pack / "eval" / "right" / "recorded.json").exists()


def test_the_users_own_agent_folders_and_index_are_left_alone(
    hippo: HippoRunner, here: Path, pack: Path, isolated_home: Path
):
    own = ClaudeSession(isolated_home / ".claude", str(here), start=START)
    own.prompt("How do we run the Testing suite?").answer("With `make test`.").write()
    hippo_home = os.environ["HIPPO_HOME"]
    run, data = run_json(hippo, here, str(pack), "--case", "right")
    assert run.code == 0, run.err
    [case] = data["cases"]
    assert (case["transcripts"], case["sessions"]) == (1, 1)
    assert os.environ["HIPPO_HOME"] == hippo_home
    assert not (Path(hippo_home) / "index.sqlite").exists()


def test_a_bad_case_is_one_line_per_problem(hippo: HippoRunner, here: Path, pack: Path):
    (pack / "eval" / "right" / "case.toml").write_text(
        'descripton = "typo"\npasses = ["check"]\n[[expect]]\nnote = "T.md"\nkind = "rewrite"\n'
    )
    shutil.rmtree(pack / "eval" / "wrong" / "notes")
    run = hippo("eval", "pack", str(pack), cwd=here)
    assert run.code == 1
    case = f"{pack}/eval/right/case.toml"
    assert run.err.splitlines() == [
        f"error: {case}: description: missing",
        f"error: {case}: unknown key 'descripton' - did you mean 'description'?",
        f"error: {pack}/eval/wrong/notes: missing; a case needs a notes/ folder holding the "
        "workspace's notes (notes/**.md)",
    ]
    assert run.out == ""


def test_a_case_names_passes_and_kinds_the_pack_has(hippo: HippoRunner, here: Path, pack: Path):
    (pack / "eval" / "right" / "case.toml").write_text(
        'description = "x"\npasses = ["check"]\n[[expect]]\nnote = "T.md"\nkind = "rewrite"\n'
    )
    run = hippo("eval", "pack", str(pack), "--case", "right", cwd=here)
    assert run.code == 1
    case = f"{pack}/eval/right/case.toml"
    passes, kinds = run.err.splitlines()
    assert passes == (
        f"error: {case}: passes: 'check' is not a pass of this pack; "
        "its passes are: consolidate, verify"
    )
    assert kinds.startswith(f"error: {case}: expect 1: kind 'rewrite' is not a kind here; ")
    assert "the kinds are: append, " in kinds and "replace" in kinds


def test_pack_names_cases_and_flags(hippo: HippoRunner, here: Path, pack: Path, tmp_path: Path):
    assert hippo("init", cwd=here).code == 0
    run = hippo("eval", "pack", "nope", cwd=here)
    assert (run.code, run.err) == (
        2,
        "error: no pack named 'nope' here; the packs here are: core\n",
    )
    run = hippo("eval", "pack", "core", cwd=here)
    assert (run.code, run.err) == (1, "error: core has no eval cases (eval/<case>/case.toml)\n")
    run = hippo("eval", "pack", str(pack), "--case", "nope", cwd=here)
    assert run.code == 2
    assert run.err == f"error: {pack} has no case 'nope'; its cases are: right, wrong\n"
    run = hippo("eval", "pack", str(pack), "--record", "--replay", cwd=here)
    assert (run.code, run.err) == (2, "error: give --record or --replay, not both\n")
    not_a_pack = tmp_path / "empty"
    not_a_pack.mkdir()
    run = hippo("eval", "pack", str(not_a_pack), cwd=here)
    assert run.code == 1
    assert (
        run.err
        == f"error: {not_a_pack}: not a pack (it has no passes/ folder); give a pack folder\n"
    )


def test_a_dream_given_transcript_folders_reads_only_those(
    make_workspace: WorkspaceMaker, isolated_home: Path, tmp_path: Path
):
    from datetime import timedelta

    from hippo_core.dream.run import Options, dream
    from hippo_core.workspace.folder import Workspace

    root = make_workspace()
    own = ClaudeSession(isolated_home / ".claude", str(root), start=START)
    own.prompt("How do we run the Testing suite?").answer("With `make test`.").write()
    elsewhere = tmp_path / "elsewhere"
    ClaudeSession(elsewhere, str(root), start=START).prompt("Hello").answer("Hi.").write()
    options = Options(
        dry_run=True,
        since=START,
        until=START + timedelta(minutes=1),
        transcripts={"claude-code": (str(elsewhere),)},
    )
    outcome = dream(Workspace.open(root), options, say=lambda line: None)
    report = outcome.report.read_text()
    assert "- from 2026-11-30T04:00:00Z to 2026-11-30T04:01:00Z: 1 chunk" in report
    assert "- ingest: ingested 1 of 1 transcript files" in report


def test_one_applied_change_meets_one_expectation_only(hippo: HippoRunner, here: Path, pack: Path):
    expect = '[[expect]]\nnote = "Testing.md"\nkind = "replace"\ncontains = ["{}"]\n'
    (pack / "eval" / "right" / "case.toml").write_text(
        'description = "two expectations the one change meets"\n'
        + expect.format("uv run pytest")
        + expect.format("repository root")
        + expect.format("tox")
    )
    run, data = run_json(hippo, here, str(pack), "--case", "right")
    assert run.code == 0, run.err
    assert data["precision"] == {"rate": 1.0, "hits": 1, "total": 1}
    assert data["recall"] == {"rate": 0.3333, "hits": 1, "total": 3}
    assert data["agreement"] == {"rate": 1.0, "hits": 1, "total": 1}
