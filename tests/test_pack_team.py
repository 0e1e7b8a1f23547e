"""A pack with a plugin, from its author to a team, for real: the pack author builds, checks
and publishes two versions; a teammate with a fresh clone and a fresh environment runs one
command and dreams with it; ``update`` brings the second version; a broken third version
and a colliding pack are reported while core's passes still run; and ``remove`` takes it
out. ../shared/findings/pack-author.md, rows 1, 2, 5, 6, 7, 8, 11, 12, 24 and 26.

Wheels are built by ``hippo pack build`` (``python -m build``) and by ``python -m build``
itself; the registry and the wheels are served by a real HTTP server on 127.0.0.1, which
pip reads as its --find-links page; every person has a fresh virtual environment and a
fresh ``HIPPO_HOME``. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_registry import Server, serving
from tests.venvs import make_venv, offline_env, wheel_backend_missing

NAME = "secnotes"
DIST = f"hippo-pack-{NAME}"
MODULE = f"hippo_pack_{NAME}"
VALIDATOR = '''

class NoTodo:
    """Refuses a change that adds a TODO."""

    name = "no-todo"

    def check(self, proposal, context):
        return ["new adds a TODO"] if "TODO" in proposal.new else []


@hookimpl
def hippo_register_validators(register):
    register(NoTodo())
'''


class Person:
    """Someone with their own virtual environment and HIPPO_HOME, running hippo and pip."""

    def __init__(self, folder: Path, wheels: str) -> None:
        self.venv = make_venv(folder / "venv")
        self.env = offline_env(self.venv)
        self.env["HIPPO_HOME"] = str(folder / "hippo-home")
        self.env["HOME"] = str(folder / "home")
        self.env["PIP_FIND_LINKS"] = wheels
        (folder / "home").mkdir()

    @property
    def python(self) -> str:
        return str(self.venv / ("Scripts" if os.name == "nt" else "bin") / "python")

    def run(self, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args], cwd=cwd, env=self.env, capture_output=True, text=True
        )

    def hippo(self, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-m", "hippo_core", *args, cwd=cwd)

    def installed(self, dist: str) -> str:
        probe = f"import importlib.metadata as m; print(m.version({dist!r}))"
        found = self.run(self.python, "-c", probe, cwd=self.venv)
        return found.stdout.strip() if found.returncode == 0 else ""


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def lock_of(root: Path) -> dict[str, dict[str, object]]:
    text = (root / ".hippo" / "packs.lock").read_text(encoding="utf-8")
    return tomllib.loads(text)["packs"]


def report(root: Path, result: subprocess.CompletedProcess[str]) -> str:
    """The report the dream wrote (its last line of output names it)."""
    path = result.stdout.splitlines()[-1].split(": report ", 1)[1]
    return (root / path).read_text(encoding="utf-8")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def set_versions(source: Path, pyproject: str, pack: str) -> None:
    for file, number in ((source / "pyproject.toml", pyproject), (pack_toml(source), pack)):
        lines = file.read_text(encoding="utf-8").splitlines()
        lines = [
            f'version = "{number}"' if line.startswith("version = ") else line for line in lines
        ]
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")


def pack_toml(source: Path) -> Path:
    return source / source.name.replace("-", "_") / "pack" / "pack.toml"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    with serving(tmp_path / "site", monkeypatch) as running:
        (running.root / "wheels").mkdir()
        yield running


def new_distribution(author: Person, work: Path, name: str) -> Path:
    ok(author.hippo("pack", "new", name, "--dir", "src", cwd=work))
    source = work / "src" / f"hippo-pack-{name}"
    module = source / f"hippo_pack_{name.replace('-', '_')}"
    manifest = module / "pack" / "pack.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + 'license = "MIT"\n', "utf-8")
    return source


@pytest.mark.slow
def test_a_pack_with_a_plugin_from_its_author_to_a_team(tmp_path: Path, server: Server):
    missing = wheel_backend_missing()
    if missing:
        pytest.skip(missing)
    wheels_url = server.url + "wheels/"
    index_url = server.url + "index.toml"
    site = server.root
    author = Person(tmp_path / "author", wheels_url)
    lead = Person(tmp_path / "lead", wheels_url)
    mate = Person(tmp_path / "mate", wheels_url)
    work = tmp_path / "work"
    work.mkdir()

    # The author writes the pack and its plugin, checks it, and publishes 0.1.0.
    source = new_distribution(author, work, NAME)
    plugin = source / MODULE / "plugin.py"
    plugin.write_text(plugin.read_text(encoding="utf-8") + VALIDATOR, encoding="utf-8")
    assert ok(author.hippo("pack", "check", source, cwd=work)) == (
        f"ok: {NAME} 0.1.0 (passes: {NAME})\n"
    )
    built = author.hippo(
        "pack", "build", source, "--out", site / "wheels", "--index", site / "index.toml", cwd=work
    )
    wheel_1 = site / "wheels" / f"{MODULE}-0.1.0-py3-none-any.whl"
    assert ok(built).splitlines() == [
        f"built {site}/wheels/{wheel_1.name}: {DIST} 0.1.0",
        f"  sha256 {sha256(wheel_1)}",
        f"  ok: {NAME} 0.1.0 (passes: {NAME})",
        f"added {NAME} 0.1.0 to {site}/index.toml (a new pack)",
        f"next: upload {site}/wheels/{wheel_1.name} to the package index teams install from "
        "(python -m twine upload, or a folder pip's --find-links reads), then publish the "
        "registry index",
    ]
    # Finding 24: the scaffold builds with no warning walls from setuptools.
    quiet = author.run(
        author.python,
        "-m",
        "build",
        "--no-isolation",
        "--wheel",
        "--outdir",
        tmp_path / "scratch",
        source,
        cwd=work,
    )
    assert "is absent from the `packages` configuration" not in ok(quiet) + quiet.stderr
    assert ok(author.hippo("registry", "check", site / "index.toml", cwd=work)) == (
        f"ok: {site}/index.toml: 1 pack, no problems\n"
    )

    # The lead adds it to the team's workspace (it carries code: --yes) and commits.
    team = tmp_path / "team"
    team.mkdir()
    ok(lead.hippo("init", cwd=team))
    ok(lead.hippo("config", "set", "registries", json.dumps([index_url]), cwd=team))
    search = lead.hippo("pack", "search", NAME, cwd=team)
    assert ok(search).split()[:4] == [NAME, "0.1.0", index_url, "pip"]
    added = lead.hippo("pack", "add", NAME, "--yes", cwd=team)
    assert ok(added).splitlines() == [  # finding 26: pip is quiet
        f"added {NAME} 0.1.0 from {index_url}",
        f"  runs from the distribution {DIST} 0.1.0",
    ]
    assert lock_of(team)[NAME] == {  # finding 6: the wheel's sha256 is pinned
        "version": "0.1.0",
        "origin": "distribution",
        "source": f"{DIST} 0.1.0",
        "registry": index_url,
        "requirement": f"{DIST}==0.1.0",
        "wheel": wheel_1.name,
        "sha256": sha256(wheel_1),
    }
    dreamed = lead.hippo("dream", "--dry-run", cwd=team)
    assert ok(dreamed) and f"- passes: core/consolidate, core/verify, {NAME}/{NAME}" in report(
        team, dreamed
    )

    # A teammate clones it into a fresh environment: the dream names what is missing.
    clone = tmp_path / "clone"
    shutil.copytree(team, clone, ignore=shutil.ignore_patterns("cache", "reports"))
    missing_run = mate.hippo("dream", "--dry-run", cwd=clone)
    assert missing_run.returncode == 1
    assert missing_run.stderr == (
        f"error: pack '{NAME}' (packs.lock) did not run: {DIST} is not installed in this "
        "environment; run: hippo pack sync\n"
    )
    # A lock whose sha256 is not the wheel's installs nothing.
    good = (clone / ".hippo" / "packs.lock").read_text(encoding="utf-8")
    (clone / ".hippo" / "packs.lock").write_text(good.replace(sha256(wheel_1), "0" * 64), "utf-8")
    tampered = mate.hippo("pack", "sync", cwd=clone)
    assert tampered.returncode == 1
    assert tampered.stderr == (
        f"error: {NAME} 0.1.0: {NAME} 0.1.0: the wheel's sha256 is {sha256(wheel_1)}, "
        f".hippo/packs.lock says {'0' * 64}; nothing was installed\n"
    )
    assert mate.installed(DIST) == ""
    (clone / ".hippo" / "packs.lock").write_text(good, encoding="utf-8")
    # One command installs what the lock records, and the dream runs the pass.
    synced = mate.hippo("pack", "sync", cwd=clone)
    assert ok(synced).splitlines() == [
        "core 0.1.0 ok (.hippo/packs/core/)",
        f"{NAME} 0.1.0 installed ({DIST} 0.1.0, sha256 checked)",
    ]
    assert (clone / ".hippo" / "packs.lock").read_text(encoding="utf-8") == good
    dreamed = mate.hippo("dream", "--dry-run", cwd=clone)
    assert ok(dreamed).startswith("dream ok: ") and dreamed.stderr == ""
    assert f"- passes: core/consolidate, core/verify, {NAME}/{NAME}" in report(clone, dreamed)
    assert ok(mate.hippo("pack", "sync", cwd=clone)).splitlines()[1] == (
        f"{NAME} 0.1.0 ok ({DIST} 0.1.0)"
    )
    assert ok(mate.hippo("pack", "search", NAME, cwd=clone)).split()[1] == "0.1.0"

    # Finding 12: a version raised in pyproject.toml only is refused before it is built.
    set_versions(source, "0.2.0", "0.1.0")
    drift = author.hippo("pack", "build", source, "--out", site / "wheels", cwd=work)
    assert drift.returncode == 1
    assert drift.stderr == (
        f"error: {MODULE}-0.2.0-py3-none-any.whl: {MODULE}/pack/pack.toml: version 0.1.0, but "
        f"{DIST} is 0.2.0; raise the version in pyproject.toml and pack.toml together\n"
    )
    (site / "wheels" / f"{MODULE}-0.2.0-py3-none-any.whl").unlink()
    set_versions(source, "0.2.0", "0.2.0")
    ok(
        author.hippo(
            "pack",
            "build",
            source,
            "--out",
            site / "wheels",
            "--index",
            site / "index.toml",
            cwd=work,
        )
    )
    wheel_2 = site / "wheels" / f"{MODULE}-0.2.0-py3-none-any.whl"

    # Findings 1 and 9: the teammate sees 0.2.0 once the index is fetched again, and update
    # brings it (add of an installed pack says how).
    assert ok(mate.hippo("pack", "search", NAME, cwd=clone)).split()[1] == "0.1.0"  # cached
    refreshed = ok(mate.hippo("pack", "search", NAME, "--refresh", cwd=clone)).split()
    assert refreshed[:6] == [NAME, "0.2.0", index_url, "pip", "installed", "0.1.0"]
    again = mate.hippo("pack", "add", f"{NAME}==0.2.0", cwd=clone)
    assert again.stderr == (
        f"error: {NAME} 0.1.0 is already installed here (distribution: {DIST} 0.1.0); to "
        f"change it to 0.2.0 run: hippo pack update {NAME}==0.2.0\n"
    )
    updated = mate.hippo("pack", "update", cwd=clone)
    assert ok(updated).splitlines() == ["core 0.1.0 up to date", f"{NAME} 0.1.0 -> 0.2.0"]
    assert mate.installed(DIST) == "0.2.0"
    entry = lock_of(clone)[NAME]
    assert (entry["version"], entry["requirement"], entry["sha256"]) == (
        "0.2.0",
        f"{DIST}==0.2.0",
        sha256(wheel_2),
    )

    # Findings 7 and 8: a broken 0.3.0, built with python -m build and listed by hand, is
    # named by the checker; update installs it, finds it broken, puts 0.2.0 back.
    set_versions(source, "0.3.0", "0.3.0")
    prompt = source / MODULE / "pack" / "prompts" / f"{NAME}.md"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\n{{sessions}}\n", encoding="utf-8")
    ok(
        author.run(
            author.python,
            "-m",
            "build",
            "--no-isolation",
            "--wheel",
            "--outdir",
            site / "wheels",
            source,
            cwd=work,
        )
    )
    wheel_3 = site / "wheels" / f"{MODULE}-0.3.0-py3-none-any.whl"
    index = (site / "index.toml").read_text(encoding="utf-8")
    index += (
        f'\n[[pack.versions]]\nversion = "0.3.0"\nhippo = ">=0.1"\npasses = ["{NAME}"]\n'
        f'source = {{ distribution = "{DIST}==0.3.0", sha256 = "{sha256(wheel_3)}" }}\n'
    )
    (site / "index.toml").write_text(index, encoding="utf-8")
    checked = author.hippo("registry", "check", site / "index.toml", cwd=work)
    assert checked.returncode == 1
    assert (
        f"error: registry {site}/index.toml: pack '{NAME}' version 0.3.0: {wheel_3.name}: "
        f"{MODULE}/pack/prompts/{NAME}.md:"
    ) in checked.stderr
    assert "placeholder {{sessions}} is not in the reads of" in checked.stderr
    stays = mate.hippo("pack", "update", cwd=clone)
    assert ok(stays).splitlines()[-1] == (
        f"{NAME} 0.2.0 stays: the newer version cannot be installed (warnings above say why)"
    )
    assert f"{DIST}==0.2.0 was put back; nothing was recorded" in stays.stderr
    assert mate.installed(DIST) == "0.2.0"
    assert lock_of(clone)[NAME]["version"] == "0.2.0"

    # Finding 2: a pip-installed pack whose pass is named like core's is left out and said;
    # core's passes and the team's run. The workspace can turn it off.
    dup = new_distribution(author, work, "dup")
    (dup / "hippo_pack_dup" / "pack" / "passes" / "dup.toml").rename(
        dup / "hippo_pack_dup" / "pack" / "passes" / "verify.toml"
    )
    ok(author.hippo("pack", "build", dup, "--out", site / "wheels", cwd=work))
    ok(mate.run(mate.python, "-m", "pip", "install", "--quiet", "hippo-pack-dup", cwd=clone))
    collided = mate.hippo("dream", "--dry-run", cwd=clone)
    assert ok(collided).startswith("dream ok: ")
    assert collided.stderr.startswith("warning: pack 'dup' (hippo-pack-dup 0.1.0) did not run: ")
    assert f"- passes: core/consolidate, core/verify, {NAME}/{NAME}" in report(clone, collided)
    ok(mate.hippo("config", "set", "disabled_packs", '["dup"]', cwd=clone))
    assert mate.hippo("dream", "--dry-run", cwd=clone).stderr == ""

    # Finding 11: remove stops it running here, and pip uninstalls it when asked.
    removed = mate.hippo("pack", "remove", NAME, "--uninstall", cwd=clone)
    assert ok(removed).splitlines() == [
        f"{NAME} no longer runs here: dropped from the lock file and turned off in "
        ".hippo/settings.toml (disabled_packs)",
        f"uninstalled {DIST} 0.2.0",
    ]
    assert mate.installed(DIST) == "" and NAME not in lock_of(clone)
    final = mate.hippo("dream", "--dry-run", cwd=clone)
    assert ok(final).startswith("dream ok: ") and final.stderr == ""
    # The lead's environment was never touched by any of it.
    assert lead.installed(DIST) == "0.1.0"
