"""Packs from pip, for real: a pack made by ``hippo pack new``, with a plugin validator added,
built into a wheel and installed into a fresh virtual environment, where hippo finds it.

Nothing is downloaded. The virtual environment gets hippo from this checkout and borrows this
environment's packages (hippo's dependencies, pip, setuptools) through a ``.pth`` file, and
pip runs with no index. Building a wheel offline needs a setuptools that builds wheels by
itself (70.1 or newer) or the ``wheel`` package in this environment.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.venvs import make_venv, offline_env, wheel_backend_missing

NAME = "audit"
DIST = f"hippo-pack-{NAME}"
MODULE = f"hippo_pack_{NAME}"
VALIDATOR = '''

class NoTodo:
    """Refuses a change that adds a TODO: notes say what is, not what is left to do."""

    name = "no-todo"

    def check(self, proposal, context):
        return ["new adds a TODO"] if "TODO" in proposal.new else []


@hookimpl
def hippo_register_validators(register):
    register(NoTodo())
'''
NEEDS = {
    "pack.toml": (
        'name = "needs-audit"\nversion = "1.0.0"\ndescription = "Uses the audit plugin."\n'
        f'protocol = "HIPPO_V1"\nrequires = ["{DIST}"]\n'
    ),
    "passes/needs.toml": (
        'protocol = "HIPPO_V1"\nprompt = "prompts/p.md"\nreads = ["notes"]\n'
        'reviewer = "personas/r.md"\nper_note = false\n'
    ),
    "prompts/p.md": "Notes:\n{{notes}}\n",
    "personas/r.md": "Judge.\n",
}
PIP_INSTALL = f"install with: pip install '{DIST}'"


def run(args: list[str | Path], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )


def build_wheel(source: Path, dist: Path, env: dict[str, str]) -> Path:
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    built = run([*pip, "-w", dist, source], env, source.parent)
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = dist.glob("*.whl")
    return wheel


@pytest.mark.slow
def test_a_pack_from_a_wheel_runs_with_its_plugin(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path
):
    missing = wheel_backend_missing()
    if missing:
        pytest.skip(missing)
    assert hippo("pack", "new", NAME, "--dir", str(tmp_path / "src"), cwd=tmp_path).code == 0
    source = tmp_path / "src" / DIST
    plugin = source / MODULE / "plugin.py"
    plugin.write_text(plugin.read_text(encoding="utf-8") + VALIDATOR, encoding="utf-8")
    venv = make_venv(tmp_path / "venv")
    env = offline_env(venv)

    wheel = build_wheel(source, tmp_path / "dist", env)
    assert wheel.name == f"{MODULE}-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        points = archive.read(f"{MODULE}-0.1.0.dist-info/entry_points.txt").decode()
    pack = f"{MODULE}/pack"
    assert {
        f"{MODULE}/plugin.py",
        f"{pack}/pack.toml",
        f"{pack}/passes/{NAME}.toml",
        f"{pack}/prompts/{NAME}.md",
        f"{pack}/personas/{NAME}-reviewer.md",
        f"{pack}/eval/example/case.toml",
        f"{pack}/eval/example/notes/Deploy.md",
    } <= names
    assert f"[hippo]\n{NAME} = {MODULE}.plugin" in points

    workspace = make_workspace()
    assert hippo("init", cwd=workspace).code == 0
    for rel, text in NEEDS.items():
        path = workspace / ".hippo" / "packs" / "needs-audit" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    # Before the wheel is installed, the pack that requires it does not run, which fails
    # the run naming the pip command; core's passes run all the same.
    dream = run(["hippo", "dream", "--dry-run"], env, workspace)
    assert dream.returncode == 1
    assert (
        "error: pack 'needs-audit' did not run: .hippo/packs/needs-audit/pack.toml: needs "
        f"{DIST}, which is not installed; {PIP_INSTALL}" in dream.stderr
    )
    doctor = run(["hippo", "doctor"], env, workspace)
    assert doctor.returncode == 1 and PIP_INSTALL in doctor.stdout

    installed = run(["pip", "install", "--no-deps", "--no-index", wheel], env, workspace)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    listed = run(["hippo", "pack", "list", "--json"], env, workspace)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)["packs"]}
    assert sorted(rows) == ["audit", "core", "needs-audit"]
    assert (rows[NAME]["source"], rows[NAME]["version"]) == (f"{DIST} 0.1.0", "0.1.0")
    assert rows[NAME]["passes"] == [NAME]
    assert f"{DIST} 0.1.0" in run(["hippo", "pack", "list"], env, workspace).stdout

    plugins = run(["hippo", "plugins", "--json"], env, workspace)
    [ours] = [info for info in json.loads(plugins.stdout) if info["name"] == NAME]
    assert (ours["distribution"], ours["version"], ours["error"]) == (DIST, "0.1.0", "")
    assert ours["hooks"] == ["hippo_register_packs", "hippo_register_validators"]

    dream = run(["hippo", "dream", "--dry-run"], env, workspace)
    assert dream.returncode == 0, dream.stderr
    doctor = run(["hippo", "doctor"], env, workspace)
    assert doctor.returncode == 0, doctor.stdout
    assert (
        "info: packs: passes that dream here: audit/audit, core/consolidate, core/verify, "
        "needs-audit/needs" in doctor.stdout
    )
