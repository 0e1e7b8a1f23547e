"""hippo as it would be published: ``python -m build`` makes an sdist and a wheel, ``twine
check`` passes them, and each installs into a fresh virtual environment where the commands
a newcomer runs first work, from the installed files alone.

Offline: the build uses the setuptools that is here (no build isolation), and each venv
installs the artefact without its dependencies, borrowing this environment's instead (the
wheel's own files come first on the path). ``.ci/dist.sh`` installs them with their
dependencies from the package index, as a user would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from hippo_core.version import __version__
from tests.venvs import ROOT

NAME = f"hippo_memory-{__version__}"
PIP = [sys.executable, "-m", "pip"]
OFFLINE = ["-q", "--no-deps", "--no-index", "--no-build-isolation"]


def run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, built from a copy of the checkout's tracked files."""
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source")
    # Building in the checkout writes its egg-info there, and the checkout is on every
    # test's sys.path (an editable install): other tests would see it change under them.
    tracked = run(["git", "-C", str(ROOT), "ls-files", "-z"], cwd=out).split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source], cwd=out)
    return out


def fresh(folder: Path, artefact: Path, home: Path) -> dict[str, str]:
    """A new venv holding ``artefact`` (its dependencies borrowed); the environment of a
    shell in it, with a home of its own."""
    quiet = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    if artefact.name.endswith(".tar.gz"):  # built as pip would, with the setuptools here
        built = folder.parent / "from-sdist"
        run(
            [*PIP, "wheel", *OFFLINE, "-w", str(built), str(artefact)],
            cwd=folder.parent,
            env=quiet,
        )
        [artefact] = built.glob("*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder], check=True)
    python = folder / "bin" / "python"
    run(
        [*PIP, "--python", str(python), "install", *OFFLINE, str(artefact)],
        cwd=folder,
        env=quiet,
    )
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], folder)
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site.strip()) / "_borrowed.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HIPPO_LOAD_PLUGINS")}
    env.update(PATH=f"{folder / 'bin'}{os.pathsep}{env['PATH']}", HOME=str(home))
    env.update(HIPPO_HOME=str(home / "hippo"), VIRTUAL_ENV=str(folder))
    return env


def test_the_sdist_and_the_wheel_hold_hippo_and_pass_twine(dist: Path) -> None:
    wheel, sdist = dist / f"{NAME}-py3-none-any.whl", dist / f"{NAME}.tar.gz"
    assert sorted(p.name for p in dist.iterdir()) == [wheel.name, sdist.name]
    said = run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist], cwd=dist)
    assert said.count("PASSED") == 2, said
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    for data in (
        "hippo_packs/registry.toml",
        "hippo_packs/core/passes/verify.toml",
        "hippo_packs/decisions/eval/handoff-decision/recorded.json",
        "hippo_packs/sleep/pack/pack.toml",
        "hippo_core/builtins/agents/opencode.js",
        "hippo_core/packs/scaffold/pyproject.toml.tmpl",
    ):
        assert data in names, data
    metadata = zipfile.ZipFile(wheel).read(f"{NAME}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "Requires-Python: >=3.11" in metadata
    entry_points = zipfile.ZipFile(wheel).read(f"{NAME}.dist-info/entry_points.txt").decode()
    assert "hippo = hippo_core.cli:script" in entry_points
    assert "sleep = hippo_packs.sleep.plugin" in entry_points
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert f"{NAME}/README.md" in members and f"{NAME}/LICENSE" in members
    assert f"{NAME}/docs/install.md" in members
    assert not [m for m in members if "__pycache__" in m or m.startswith(f"{NAME}/tests/")]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_each_installs_into_a_fresh_venv_and_runs(dist: Path, tmp_path: Path, kind: str) -> None:
    artefact = dist / (f"{NAME}-py3-none-any.whl" if kind == "wheel" else f"{NAME}.tar.gz")
    home = tmp_path / "home"  # the isolated home every test has
    env = fresh(tmp_path / "venv", artefact, home)
    where = run(["python", "-c", "import hippo_core; print(hippo_core.__file__)"], home, env)
    assert where.startswith(str(tmp_path / "venv")), where  # the installed files, not ours
    project = tmp_path / "project"
    project.mkdir()
    assert run(["hippo", "--version"], project, env) == f"hippo {__version__}\n"
    assert "created   .hippo/packs/core/passes/verify.toml" in run(["hippo", "init"], project, env)
    block = run(["hippo", "context", "--task", "first steps"], project, env)
    assert block.startswith("# Home\n"), block
    # The packs' data came along: the sleep pack's plugin, decisions and its recording.
    assert "\nsleep  hippo-memory " in run(["hippo", "plugins"], project, env)
    run(["hippo", "pack", "add", "decisions"], project, env)
    replay = run(["hippo", "eval", "pack", "decisions", "--replay"], project, env)
    assert replay.startswith("handoff-decision: ok: 1 of 1 proposals valid, 1 applied"), replay
