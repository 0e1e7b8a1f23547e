"""A pack's life in a team, the quick parts: one bad pack never stops the others, the lock
file names what is missing, update falls back past a broken version, and what a pack
author is told. Each test is a reproduction from ../shared/findings/pack-author.md (its
row number in the name or the docstring); the slow parts, with real wheels, real virtual
environments and pip, are in tests/test_pack_team.py.

Third-party plugins are real distributions installed in a folder of their own
(tests/plugin_site.py) and hippo runs in a process that finds them; registries are served
by a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.dream_scene import Scene, replace
from tests.plugin_site import make_distribution, run_hippo
from tests.test_registry import (
    Server,
    make_pack,
    pack_entry,
    serving,
    settings_for,
    tar_pack,
    version,
    write_index,
)

CORE_PASSES = "passes: core/consolidate, core/verify"

# A distribution whose pack has a pass named like core's verify (finding 2's dup-pass).
DUP = """
from pathlib import Path
from hippo_core import hookimpl

@hookimpl
def hippo_register_packs(register):
    register("dup", Path(__file__).parent / "dup_pack")
"""
# One whose pack's prompt uses a placeholder its pass does not read (finding 2, second case).
BROKEN = """
from pathlib import Path
from hippo_core import hookimpl

@hookimpl
def hippo_register_packs(register):
    register("broken", Path(__file__).parent / "broken_pack")
"""
# One whose plugin raises while it registers its readers.
RAISING = """
from hippo_core import hookimpl

@hookimpl
def hippo_register_readers(register):
    raise RuntimeError("no tickets database here")
"""
PASS = (
    'protocol = "HIPPO_V1"\nprompt = "prompts/p.md"\nreads = ["notes"]\n'
    'reviewer = "personas/r.md"\nper_note = false\n'
)


def pack_folder(folder: Path, name: str, pass_name: str, prompt: str = "{{notes}}\n") -> None:
    (folder / "passes").mkdir(parents=True)
    (folder / "prompts").mkdir()
    (folder / "personas").mkdir()
    (folder / "pack.toml").write_text(
        f'name = "{name}"\nversion = "1.2.0"\ndescription = "d"\nprotocol = "HIPPO_V1"\n',
        encoding="utf-8",
    )
    (folder / "passes" / f"{pass_name}.toml").write_text(PASS, encoding="utf-8")
    (folder / "prompts" / "p.md").write_text(prompt, encoding="utf-8")
    (folder / "personas" / "r.md").write_text("Judge.\n", encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """Installed: hippo-dup (a pass named verify), hippo-broken (a bad prompt) and
    hippo-raising (a plugin that raises)."""
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "hippo-dup", "hippo_dup", DUP)
    pack_folder(site / "dup_pack", "dup", "verify")
    make_distribution(site, "hippo-broken", "hippo_broken", BROKEN)
    pack_folder(site / "broken_pack", "broken", "broken-check", "{{notes}}\n{{turns}}\n")
    make_distribution(site, "hippo-raising", "hippo_raising", RAISING)
    return site


@pytest.fixture
def root(make_workspace: WorkspaceMaker, hippo: HippoRunner) -> Path:
    folder = make_workspace()
    assert hippo("init", cwd=folder).code == 0
    return folder


def report_of(root: Path, out: str) -> str:
    path = out.splitlines()[-1].split(": report ", 1)[1]
    return (root / path).read_text(encoding="utf-8")


# Finding 2: a pip-installed pack no longer stops other workspaces' dreams


def test_a_colliding_and_a_broken_distribution_pack_are_left_out_and_core_runs(
    root: Path, site: Path
):
    run = run_hippo(["dream", "--dry-run"], root, site, load=None)
    assert run.returncode == 0, run.stderr  # neither is the workspace's: warnings
    report = report_of(root, run.stdout)
    head = report.splitlines()
    assert head[0] == "status: ok"
    disable = "hippo config set disabled_packs"
    assert head[1] == (
        "warning: pack 'broken' (hippo-broken 1.2.0) did not run: "
        f"{site}/broken_pack/prompts/p.md:2: placeholder {{{{turns}}}} is not in the reads of "
        "passes/broken-check.toml (notes); fix or uninstall hippo-broken, or turn it off here: "
        f"""{disable} '["broken"]'"""
    )
    assert head[2] == (
        "warning: pack 'dup' (hippo-dup 1.2.0) did not run: "
        f"{site}/dup_pack/passes/verify.toml: pack 'core' has a pass named 'verify' too "
        "(.hippo/packs/core/passes/verify.toml); pass names must be unique; fix or uninstall "
        f"""hippo-dup, or turn it off here: {disable} '["dup"]'"""
    )
    assert f"- {CORE_PASSES}" in report
    assert run.stderr.count("warning: pack ") == 2
    # doctor: warnings (the workspace never asked for them), and a plugin that raised.
    doctor = run_hippo(["doctor"], root, site, load=None)
    assert "warning: packs: pack 'dup' (hippo-dup 1.2.0) did not run" in doctor.stdout
    assert (
        "warning: plugin: plugin hippo_raising (hippo-raising) failed in hippo_register_readers: "
        "RuntimeError: no tickets database here; what it registers there is left out"
    ) in doctor.stdout
    assert "info: packs: passes that dream here: core/consolidate, core/verify" in doctor.stdout
    # hippo plugins: the third-party ones first, each pack with whether it runs here.
    plugins = run_hippo(["plugins"], root, site, load=None).stdout.splitlines()
    assert [line.split()[0] for line in plugins[:3]] == [
        "hippo_broken",
        "hippo_dup",
        "hippo_raising",
    ]
    assert plugins[1].startswith(
        "hippo_dup  hippo-dup 1.2.0  hippo_register_packs; packs: dup (did not run here: "
    )
    assert plugins[2].endswith(
        "failed in hippo_register_readers: RuntimeError: no tickets database here"
    )
    only = run_hippo(["plugins", "--hook", "hippo_register_readers"], root, site, load=None)
    assert [line.split()[0] for line in only.stdout.splitlines()] == [
        "hippo_raising",
        "hippo_core.builtins.dreaming",
        "sleep",
    ]


def test_an_eval_of_one_pack_runs_whatever_else_is_installed(root: Path, site: Path):
    run = run_hippo(["eval", "pack", "decisions", "--replay"], root, site, load=None)
    assert run.returncode == 2  # decisions is not installed here: named, not a traceback
    assert "no pack named 'decisions' here" in run.stderr
    assert run_hippo(["pack", "add", "decisions"], root, site, load=None).returncode == 0
    run = run_hippo(["eval", "pack", "decisions", "--replay"], root, site, load=None)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("handoff-decision: ok:")


def test_disabled_packs_turns_a_distributions_pack_off_here(root: Path, site: Path):
    assert (
        run_hippo(
            ["config", "set", "disabled_packs", '["dup", "broken"]'], root, site, load=None
        ).returncode
        == 0
    )
    run = run_hippo(["dream", "--dry-run"], root, site, load=None)
    assert (run.returncode, run.stderr) == (0, "")
    report = report_of(root, run.stdout)
    assert report.splitlines()[1] == ""
    assert "- off here (disabled_packs): broken, dup" in report
    listed = run_hippo(["pack", "list"], root, site, load=None)
    assert listed.returncode == 0, listed.stderr
    assert "dup  off here (disabled_packs); hippo-dup 1.2.0" in listed.stdout
    doctor = run_hippo(["doctor"], root, site, load=None).stdout
    assert "info: packs: off here (disabled_packs): broken, dup" in doctor
    plugins = run_hippo(["plugins"], root, site, load=None).stdout
    assert "packs: dup (off here: disabled_packs)" in plugins


def test_pack_check_warns_of_a_pass_name_an_installed_pack_has(
    hippo: HippoRunner, tmp_path: Path, site: Path
):
    pack_folder(tmp_path / "mine", "mine", "broken-check")
    run = run_hippo(["pack", "check", str(tmp_path / "mine")], tmp_path, site, load=None)
    assert run.returncode == 0
    assert run.stdout == "ok: mine 1.2.0 (passes: broken-check)\n"
    assert run.stderr == (
        "warning: the pass 'broken-check' of mine has the name of a pass of the pack 'broken' "
        "installed here; a workspace that has both leaves one of them out\n"
    )


# Finding 5: the lock file names a pack that is not here


def lock_entry(root: Path, text: str) -> None:
    lock = root / ".hippo" / "packs.lock"
    lock.write_text(lock.read_text(encoding="utf-8") + text, encoding="utf-8")


SECNOTES = (
    '\n[packs.security-notes]\nversion = "0.2.0"\norigin = "distribution"\n'
    'source = "hippo-pack-security-notes 0.2.0"\nregistry = "hippo"\n'
    'requirement = "hippo-pack-security-notes==0.2.0"\n'
)


def test_a_locked_pack_that_is_not_installed_fails_the_run_naming_the_fix(
    root: Path, hippo: HippoRunner
):
    lock_entry(root, SECNOTES)
    run = hippo("dream", "--dry-run", cwd=root)
    error = (
        "pack 'security-notes' (packs.lock) did not run: hippo-pack-security-notes is not "
        "installed in this environment; run: hippo pack sync"
    )
    assert run.code == 1 and run.err == f"error: {error}\n"
    report = report_of(root, run.out)
    assert report.splitlines()[:2] == ["status: failed", f"error: {error}"]
    assert f"- {CORE_PASSES}" in report  # the others ran
    # add tells the truth, and the way to install what the lock records.
    added = hippo("pack", "add", "security-notes", cwd=root)
    assert added.code == 1
    assert added.err == (
        "error: security-notes 0.2.0 is recorded in .hippo/packs.lock but not installed "
        "here; install what the lock file records with: hippo pack sync\n"
    )
    # --pass runs one pass: the missing pack is a warning there.
    one = hippo("dream", "--dry-run", "--pass", "verify", cwd=root)
    assert one.code == 0 and one.err == f"warning: {error}\n"


def test_pack_list_shows_a_locked_pack_that_is_not_here(root: Path, hippo: HippoRunner):
    lock_entry(root, SECNOTES)
    listed = hippo("pack", "list", cwd=root)
    assert listed.code == 1
    assert listed.out.endswith(
        "security-notes 0.2.0  hippo-pack-security-notes 0.2.0\n"
        "  installed: hippo-pack-security-notes 0.2.0 (distribution); edits not tracked\n"
        "  passes: none\n"
        "  error: hippo-pack-security-notes is not installed in this environment; run: "
        "hippo pack sync\n"
    )


def test_sync_puts_back_a_missing_folder_from_hippo_and_from_the_archive(
    root: Path, hippo: HippoRunner, tmp_path: Path
):
    pack = make_pack(tmp_path / "src" / "notes-check", "notes-check", "0.1.0")
    (tmp_path / "reg").mkdir()
    sha = tar_pack(pack, tmp_path / "reg" / "notes-check-0.1.0.tar.gz")
    index = write_index(
        tmp_path / "reg" / "index.toml",
        [
            pack_entry(
                "notes-check", [version("0.1.0", archive="notes-check-0.1.0.tar.gz", sha=sha)]
            )
        ],
    )
    assert hippo("pack", "add", "notes-check", "--registry", str(index), cwd=root).code == 0
    assert hippo("pack", "add", "decisions", cwd=root).code == 0
    lock = (root / ".hippo" / "packs.lock").read_bytes()
    for name in ("notes-check", "decisions"):
        import shutil

        shutil.rmtree(root / ".hippo" / "packs" / name)
    synced = hippo("pack", "sync", cwd=root)
    assert synced.code == 0, synced.err
    assert synced.out.splitlines() == [
        "core 0.1.0 ok (.hippo/packs/core/)",
        "decisions 0.1.0 copied from hippo (.hippo/packs/decisions/)",
        "notes-check 0.1.0 fetched, sha256 checked (.hippo/packs/notes-check/)",
    ]
    assert (root / ".hippo" / "packs.lock").read_bytes() == lock  # sync never writes it
    listed = hippo("pack", "list", cwd=root)
    assert listed.code == 0 and listed.out.count("not edited since") == 3
    # An archive whose bytes are not the locked ones installs nothing; the others sync.
    shutil.rmtree(root / ".hippo" / "packs" / "notes-check")
    (tmp_path / "reg" / "notes-check-0.1.0.tar.gz").write_bytes(b"not the archive")
    failed = hippo("pack", "sync", cwd=root)
    assert failed.code == 1
    assert failed.out.splitlines()[:2] == [
        "core 0.1.0 ok (.hippo/packs/core/)",
        "decisions 0.1.0 ok (.hippo/packs/decisions/)",
    ]
    assert "error: notes-check 0.1.0: notes-check 0.1.0: the archive's sha256 is " in failed.err
    assert not (root / ".hippo" / "packs" / "notes-check").exists()


# Findings 7 and 9: update falls back past a broken newest version; search --refresh


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    with serving(tmp_path / "served", monkeypatch) as running:
        yield running


def archive(server: Server, tmp_path: Path, name: str, number: str, text: str = "") -> dict:
    folder = tmp_path / "src" / f"{name}-{number}{'-x' if text else ''}" / name
    if not folder.exists():
        make_pack(folder, name, number, text=text)
    pack = folder
    file = f"{name}-{number}.tar.gz"
    return version(number, archive=file, sha=tar_pack(pack, server.root / file))


def test_update_falls_back_past_a_broken_version_and_updates_the_others(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, server: Server, tmp_path: Path
):
    url = server.url + "index.toml"
    first = [
        pack_entry("cve-watch", [archive(server, tmp_path, "cve-watch", "0.1.0")]),
        pack_entry("style", [archive(server, tmp_path, "style", "1.0")]),
    ]
    write_index(server.root / "index.toml", first)
    root = make_workspace(settings_for(url))
    assert hippo("init", cwd=root).code == 0
    assert hippo("pack", "add", "cve-watch", cwd=root).code == 0
    assert hippo("pack", "add", "style", cwd=root).code == 0
    # 0.2.0's prompt uses a placeholder its pass does not read; 0.1.1 is good.
    broken = archive(server, tmp_path, "cve-watch", "0.2.0", "\n{{nothing}}\n")
    versions = [
        archive(server, tmp_path, "cve-watch", "0.1.0"),
        archive(server, tmp_path, "cve-watch", "0.1.1"),
        broken,
    ]
    style = [archive(server, tmp_path, "style", "1.0"), archive(server, tmp_path, "style", "1.1")]
    write_index(
        server.root / "index.toml",
        [pack_entry("cve-watch", versions), pack_entry("style", style)],
    )
    # search reads the cached index until asked to fetch it again.
    assert "0.1.0" in hippo("pack", "search", "cve", cwd=root).out.split()
    refreshed = hippo("pack", "search", "cve", "--refresh", cwd=root).out.split()
    assert refreshed[:2] == ["cve-watch", "0.2.0"]
    updated = hippo("pack", "update", cwd=root)
    assert updated.code == 0, updated.err
    assert updated.out.splitlines() == [
        "core 0.1.0 up to date",
        "cve-watch 0.1.0 -> 0.1.1",
        "style 1.0 -> 1.1",
    ]
    assert updated.err.splitlines()[-1].startswith(
        "warning: cve-watch 0.2.0 is not a pack hippo can run: prompts/verify.md:"
    )
    lock = tomllib.loads((root / ".hippo" / "packs.lock").read_text(encoding="utf-8"))["packs"]
    assert (lock["cve-watch"]["version"], lock["style"]["version"]) == ("0.1.1", "1.1")
    # NAME==VERSION moves to that version, an older one too; a broken one named is an error.
    back = hippo("pack", "update", "cve-watch==0.1.0", cwd=root)
    assert (back.code, back.out) == (0, "cve-watch 0.1.1 -> 0.1.0\n"), back.err
    named = hippo("pack", "update", "cve-watch==0.2.0", cwd=root)
    assert named.code == 1
    assert named.err.startswith("error: cve-watch 0.2.0 is not a pack hippo can run: ")
    only_broken = [versions[0], broken]
    write_index(
        server.root / "index.toml",
        [pack_entry("cve-watch", only_broken), pack_entry("style", style)],
    )
    stays = hippo("pack", "update", "cve-watch", cwd=root)
    assert stays.code == 0
    assert stays.out == (
        "cve-watch 0.1.0 stays: the newer version cannot be installed (warnings above say why)\n"
    )


# Finding 11: search says which packs carry code; Finding 19: a --registry path as typed


def test_search_marks_a_pack_that_carries_code(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path
):
    index = write_index(
        tmp_path / "reg" / "index.toml",
        [pack_entry("jira", [version("1.0", distribution="hippo-jira==1.0")])],
    )
    root = make_workspace(settings_for(str(index)))
    run = hippo("pack", "search", "jira", cwd=root)
    assert run.out.split()[:4] == ["jira", "1.0", str(index), "pip"]
    assert run.err == (
        "pip: the pack carries code, which hippo pack add installs with pip (it asks first)\n"
    )
    data = json.loads(hippo("pack", "search", "--json", cwd=root).out)
    assert {hit["name"]: hit["code"] for hit in data}["jira"] is True


def test_a_registry_path_given_relative_is_recorded_relative_to_the_workspace(
    root: Path, hippo: HippoRunner, tmp_path: Path
):
    pack = make_pack(tmp_path / "src" / "style", "style", "1.0")
    (tmp_path / "registry-site").mkdir()
    sha = tar_pack(pack, tmp_path / "registry-site" / "style-1.0.tar.gz")
    write_index(
        tmp_path / "registry-site" / "index.good.toml",
        [pack_entry("style", [version("1.0", archive="style-1.0.tar.gz", sha=sha)])],
    )
    (root / "sub").mkdir()
    run = hippo(
        "pack",
        "add",
        "style",
        "--registry",
        "../../registry-site/index.good.toml",
        cwd=root / "sub",
    )
    assert run.code == 0, run.err
    lock = tomllib.loads((root / ".hippo" / "packs.lock").read_text(encoding="utf-8"))["packs"]
    assert lock["style"]["registry"] == "../registry-site/index.good.toml"
    assert lock["style"]["archive"] == "style-1.0.tar.gz"  # relative to the registry's folder


# Finding 16: a secret never reaches a proposal file


def test_a_proposal_holding_a_secret_is_refused_before_it_is_written(scene: Scene):
    scene.transcript()
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    new = f"Run `uv run pytest -q`, token {token}."
    scene.proposer_replies(replace(new=new))
    run = scene.dream()
    assert run.code == 0, run.err
    [line] = scene.section("Validation failures")
    assert line.endswith(
        "`Testing.md` (replace): new holds what looks like a secret (github-token); hippo "
        "writes none into a note or a proposal"
    )
    assert scene.files("proposals") == []
    assert all(token not in p.read_text() for p in (scene.root / ".hippo").rglob("*.json"))
    assert token[-9:] not in run.out + run.err  # no later check quotes it in the report


# Finding 27: a theme that is off and whose pack is missing stops nothing


def test_pack_list_with_an_off_theme_whose_pack_is_missing(root: Path, hippo: HippoRunner):
    theme = root / ".hippo" / "packs" / "terse"
    (theme / "personas").mkdir(parents=True)
    (theme / "pack.toml").write_text(
        'name = "terse"\nversion = "1"\ndescription = "d"\nprotocol = "HIPPO_V1"\n'
        'overlays = "security-notes"\n',
        encoding="utf-8",
    )
    listed = hippo("pack", "list", cwd=root)
    assert listed.code == 0, listed.err
    assert listed.out.endswith(
        "terse 1  theme over security-notes, off; .hippo/packs/terse\n"
        "  installed: not in packs.lock; edits not tracked\n"
        "  note: .hippo/packs/terse: overlays 'security-notes', which is not installed here\n"
    )


# Finding 20: hippo review shows a kind's own keys; finding 22: a name left out is said


class UnderHeading:
    """A kind with a key of its own, as the finding's plugin had."""

    name = "under-heading"
    fields = frozenset({"heading"})

    def check(self, proposal, note, evidence):  # type: ignore[no-untyped-def]
        return []

    def apply(self, proposal, note):  # type: ignore[no-untyped-def]
        return note + proposal.new.encode()


class Shadowing:
    from hippo_core import hookimpl

    @hookimpl
    def hippo_register_kinds(self, register):  # type: ignore[no-untyped-def]
        register(UnderHeading())

    @hookimpl
    def hippo_register_readers(self, register):  # type: ignore[no-untyped-def]
        from hippo_core.dream.readers import Notes

        register("turns", Notes())


def test_review_shows_a_kinds_keys_and_doctor_names_a_registration_left_out(
    root: Path, hippo: HippoRunner
):
    from hippo_core import Evidence, Proposal, Workspace, record_proposal
    from hippo_core.plugins.manager import PluginInfo, load_plugins

    plugins = load_plugins()
    plugins.pm.register(Shadowing(), name="shadowing")
    plugins.origins["shadowing"] = PluginInfo("shadowing", "hippo-shadowing", "1.0")
    proposal = Proposal(
        "20261130T060529611497Z-f6c0",
        "security-notes/security-notes",
        "Home.md",
        "under-heading",
        "",
        "- pyyaml 6.0.1 fixes CVE-2020-14343\n",
        "the session upgraded it",
        (Evidence("s1", 0),),
        {"heading": "Advisories"},
    )
    record_proposal(Workspace.open(root), proposal, prompt_digest="", review="queue", persona="p")
    shown = hippo("review", proposal.id, cwd=root)
    assert shown.code == 0, shown.err
    assert shown.out.splitlines()[3:5] == ["reason: the session upgraded it", "heading: Advisories"]
    doctor = hippo("doctor", cwd=root).out
    assert (
        "warning: plugin: plugin shadowing (hippo-shadowing) registers the reader 'turns', which "
        "hippo_core.builtins.dreaming (hippo-memory) registered first; that one is used"
    ) in doctor
