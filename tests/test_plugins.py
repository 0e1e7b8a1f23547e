"""The plugin kernel: built-ins through the same hooks, entry points, broken plugins."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from hippo_core import ContextPart, Finding, HippoError, Workspace, build_context, hookimpl
from hippo_core.plugins import hookspecs
from hippo_core.plugins.manager import DEFAULT_PLUGINS, load_plugins

from .conftest import HippoRunner, WorkspaceMaker
from .dream_scene import TESTING
from .plugin_site import make_distribution, run_hippo

HOOKS = sorted(name for name in vars(hookspecs) if name.startswith("hippo_"))


def test_every_hookspec_is_documented():
    assert HOOKS == [
        "hippo_context_parts",
        "hippo_doctor_checks",
        "hippo_event",
        "hippo_lint_note",
        "hippo_local_paths",
        "hippo_notes_left_alone",
        "hippo_pass_gate",
        "hippo_register_agents",
        "hippo_register_appliers",
        "hippo_register_backends",
        "hippo_register_commands",
        "hippo_register_eval_runners",
        "hippo_register_kinds",
        "hippo_register_packs",
        "hippo_register_readers",
        "hippo_register_review_queues",
        "hippo_register_reviewers",
        "hippo_register_schedule_jobs",
        "hippo_register_settings",
        "hippo_register_tools",
        "hippo_register_validators",
        "hippo_verdict_refused",
    ]
    for name in HOOKS:
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert "Called" in doc and len(doc) > 80, name


def test_builtins_are_plugins_implementing_every_hook(hippo: HippoRunner, tmp_path: Path):
    run = hippo("plugins", "--json", cwd=tmp_path)
    infos = json.loads(run.out)
    # hippo's own: the built-in plugins, then the sleep pack's, from its entry point.
    assert [i["name"] for i in infos] == [*DEFAULT_PLUGINS, "sleep"]
    assert all(i["distribution"] == "hippo-memory" for i in infos)
    assert [i["builtin"] for i in infos] == [True] * len(DEFAULT_PLUGINS) + [False]
    assert sorted({h for i in infos for h in i["hooks"]}) == HOOKS
    sleep = infos.pop()
    assert sleep["commands"] == ["remember", "brief", "forget", "nudge", "sleep", "voice"]
    commands = next(i for i in infos if i["name"] == "hippo_core.builtins.commands")
    assert commands["hooks"] == ["hippo_register_commands"]
    assert commands["commands"][:3] == ["init", "context", "doctor"]
    assert all(i["commands"] == [] for i in infos if i is not commands)
    text = hippo("plugins", cwd=tmp_path).out.splitlines()
    assert text[0].startswith(
        "hippo_core.builtins.commands  hippo-memory 0.1.0  hippo_register_commands; "
        "commands: init, context, doctor, plugins, ingest, search, log, dream,"
    )
    assert text[1] == (
        "hippo_core.builtins.packs  hippo-memory 0.1.0  hippo_register_packs; "
        "packs: core, decisions, core-strict"
    )


class ExtraPart:
    @hookimpl
    def hippo_context_parts(self, workspace, session, task):
        return [ContextPart("extra", "extra: hello\n", required=False, order=55)]


class Shouty:
    @hookimpl
    def hippo_lint_note(self, workspace, note):
        return [Finding("warning", "shout", "too loud", note.path)] if "!" in note.title else []


class Crashing:
    @hookimpl
    def hippo_doctor_checks(self, workspace):
        raise RuntimeError("boom")


def test_a_registered_plugin_adds_a_context_part_and_findings(make_workspace: WorkspaceMaker):
    root = make_workspace("", {"Home.md": "---\na: 1\n---\n# Home!\n"})
    plugins = load_plugins()
    plugins.pm.register(ExtraPart(), name="extra")
    plugins.pm.register(Shouty(), name="shouty")
    try:
        workspace = Workspace.open(root)
        assert build_context(workspace).text.endswith(
            "extra: hello\nlinter: overdue=0 dangling=0\n"
        )
        findings = plugins.lint_note(workspace, next(iter(workspace.notes)))
        assert [f.code for f in findings] == ["shout"]
    finally:
        plugins.pm.unregister(name="extra")
        plugins.pm.unregister(name="shouty")


def test_a_failing_hook_names_its_plugin(make_workspace: WorkspaceMaker):
    plugins = load_plugins()
    plugins.pm.register(Crashing(), name="crashing")
    try:
        with pytest.raises(HippoError, match=r"plugin crashing .* failed in hippo_doctor_checks"):
            plugins.doctor_checks(Workspace.open(make_workspace()))
    finally:
        plugins.pm.unregister(name="crashing")


class ByHand:
    """Leaves Testing.md to a person, from every per-note pass."""

    answer: object = {"Testing.md": "kept by hand"}

    @hookimpl
    def hippo_notes_left_alone(self, workspace, pass_, notes):
        return self.answer if pass_.per_note else {}


def test_a_plugin_leaves_notes_alone_and_the_report_counts_them(scene: Any):
    from tests.dream_scene import PROPOSER

    scene.transcript(hours_ago=2)
    scene.proposer_replies()
    plugins = load_plugins()
    plugins.pm.register(ByHand(), name="by-hand")
    try:
        run = scene.dream()
        assert run.code == 0, run.err
        assert not [c for c in scene.calls() if PROPOSER in c.get("prompt", "")]
        assert any(
            line.endswith("core/verify: 1 note left alone by the plugin by-hand: kept by hand")
            for line in scene.section("Inputs")
        )
    finally:
        plugins.pm.unregister(name="by-hand")


def test_a_plugin_that_leaves_notes_alone_wrongly_is_named(scene: Any):
    scene.transcript(hours_ago=2)
    scene.proposer_replies()
    wrong = ByHand()
    wrong.answer = ["Testing.md"]
    plugins = load_plugins()
    plugins.pm.register(wrong, name="by-hand")
    try:
        run = scene.dream()
        assert run.code == 1
        assert run.err.strip().splitlines() == [
            "error: plugin by-hand (unknown distribution) answered hippo_notes_left_alone with "
            "list; it returns a dict of note path to a reason"
        ]
        assert scene.note.read_text() == TESTING
    finally:
        plugins.pm.unregister(name="by-hand")


GOOD = """
from hippo_core import ContextPart, hookimpl

@hookimpl
def hippo_context_parts(workspace, session, task):
    return [ContextPart("team", "team: payments\\n", required=True, order=35)]
"""
MISSPELT = """
from hippo_core import hookimpl

@hookimpl
def hippo_contxt_parts(workspace):
    return []
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "hippo-team", "hippo_team", GOOD)
    make_distribution(site, "hippo-broken", "hippo_broken", "raise ImportError('no numpy here')\n")
    make_distribution(site, "hippo-misspelt", "hippo_misspelt", MISSPELT)
    return site


def test_entry_point_plugins_load_and_broken_ones_are_skipped(
    site: Path, make_workspace: WorkspaceMaker
):
    root = make_workspace()
    listed = run_hippo(["plugins", "--json"], root, site, load=None)
    infos = {i["name"]: i for i in json.loads(listed.stdout)}
    assert infos["hippo_team"]["distribution"] == "hippo-team"
    assert infos["hippo_team"]["version"] == "1.2.0"
    assert infos["hippo_team"]["hooks"] == ["hippo_context_parts"]
    assert infos["hippo_broken"]["error"] == "ImportError: no numpy here"
    assert "unknown hook 'hippo_contxt_parts'" in infos["hippo_misspelt"]["error"]
    # Pack-author finding 23: the hook it probably meant.
    assert infos["hippo_misspelt"]["error"].endswith(" - did you mean 'hippo_context_parts'?")
    assert "hippo_broken from hippo-broken 1.2.0 was skipped" in listed.stderr

    context = run_hippo(["context"], root, site, load=None)
    assert context.returncode == 0
    assert context.stdout == "# Home\n\nWelcome.\nteam: payments\nlinter: overdue=0 dangling=0\n"

    doctor = run_hippo(["doctor"], root, site, load=None)
    assert "warning: plugin: hippo_broken from hippo-broken was skipped" in doctor.stdout


@pytest.mark.parametrize(
    ("load", "expected"),
    [("", set()), ("hippo_team", {"hippo_team"}), ("hippo-team, hippo-other", {"hippo_team"})],
)
def test_hippo_load_plugins_chooses(site: Path, tmp_path: Path, load: str, expected: set[str]):
    listed = run_hippo(["plugins", "--json"], tmp_path, site, load=load)
    names = {i["name"] for i in json.loads(listed.stdout) if not i["builtin"]}
    assert names == expected
    assert listed.stderr == ""
