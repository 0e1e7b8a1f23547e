"""`hippo doctor`: settings, notes, budgets, git; exit 1 only on errors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import HippoRunner, WorkspaceMaker

HOME = "---\ntype: topic\n---\n# Home\n\nShort.\n"


def doctor(hippo: HippoRunner, root: Path) -> tuple[int, list[tuple[str, str, str]]]:
    run = hippo("doctor", "--json", cwd=root)
    data = json.loads(run.out)
    return run.code, [(f["level"], f["code"], f["detail"]) for f in data["findings"]]


def test_a_healthy_workspace(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace('sample_tasks = ["write the home page"]\n', {"Home.md": HOME})
    code, findings = doctor(hippo, root)
    assert code == 0
    # The entry note is in the block already: it is not listed again as relevant.
    assert ("info", "budget", "task 'write the home page' uses 44 of 25600 bytes") in findings


def test_warnings_do_not_fail(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace("budget_byte = 1\n", {"Home.md": "# Home\n[[Nowhere]]\n"})
    run = hippo("doctor", cwd=root)
    assert run.code == 0
    lines = run.out.splitlines()
    assert (
        "warning: settings: .hippo/settings.toml: 'budget_byte' is not a setting and was ignored"
        " - did you mean budget_bytes?" in lines
    )
    assert "notes/Home.md:2: warning: dangling link: [[Nowhere]]" in lines
    assert lines[-1] == "0 errors, 3 warnings"


def test_errors_fail(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    settings = 'entry_note = "Start.md"\nrequired_notes = ["Rules.md"]\n'
    root = make_workspace(settings, {"Home.md": HOME, "Bad.md": "---\n: [\n---\n"})
    code, findings = doctor(hippo, root)
    assert code == 1
    assert ("error", "entry note", "notes/Start.md does not exist (entry_note)") in findings
    assert ("error", "required note", "notes/Rules.md does not exist (required_notes)") in findings
    assert ("error", "invalid frontmatter") in [f[:2] for f in findings]


def test_budget_of_each_sample_task(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    notes = {"Home.md": HOME, "Deploy.md": "# Deploy\n\n" + "Ship it carefully. " * 20 + "\n"}
    settings = 'budget_bytes = 80\nsample_tasks = ["deploy", "nothing here"]\n'
    code, findings = doctor(hippo, make_workspace(settings, notes))
    assert code == 0
    assert ("info", "budget", "task 'nothing here' uses 44 of 80 bytes") in findings
    omitted = [f for f in findings if f[0] == "warning" and f[1] == "budget"]
    assert omitted == [("warning", "budget", "task 'deploy': omitted: relevant notes (400)")]
    code, findings = doctor(
        hippo, make_workspace('budget_bytes = 10\nsample_tasks = ["x"]\n', notes)
    )
    assert code == 1
    assert ("error", "budget", "task 'x': context over budget: 15 > 10") in findings


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_tracking_local_only_files_is_a_warning(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace("", {"Home.md": HOME, "Session log.md": "# Log\n"})
    (root / ".hippo" / "sessions").mkdir()
    (root / ".hippo" / "sessions" / "s1.json").write_text("{}")
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    index = (root / ".git" / "index").read_bytes()
    code, findings = doctor(hippo, root)
    assert code == 0
    tracked = sorted(f[2].split(",")[0] for f in findings if f[1] == "git")
    assert tracked == ["git tracks .hippo/sessions/s1.json", "git tracks notes/Session log.md"]
    assert (root / ".git" / "index").read_bytes() == index  # doctor only reads git
    subprocess.run(
        [*git, "rm", "-q", "--cached", "-r", ".hippo/sessions", "notes/Session log.md"], cwd=root
    )
    assert [f for f in doctor(hippo, root)[1] if f[1] == "git"] == []


def test_outside_git_the_check_is_skipped(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    code, findings = doctor(hippo, make_workspace("", {"Home.md": HOME}))
    assert code == 0
    git = "not a git repository; tracked local-only files not checked"
    assert [f for f in findings if f[1] == "git"] == [("info", "git", git)]


def test_a_team_index_away_is_a_warning_worded_once(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
):
    """Ingest and search go on without the server; doctor warns, and exits 0 for it
    (newcomer defect 8). Port 1 on this machine refuses at once."""
    ws = make_workspace('index_url = "postgresql+psycopg://hippo@127.0.0.1:1/team"\n')
    run = hippo("doctor", cwd=ws)
    [line] = [line for line in run.out.splitlines() if "team index" in line]
    assert line.startswith(
        "warning: team index: postgresql+psycopg://hippo@127.0.0.1:1/team: connection failed: "
    )
    assert line.endswith("; the local index has everything; the next ingest catches up")
    assert line.count("team index") == 1
    assert run.code == 0, run.out
