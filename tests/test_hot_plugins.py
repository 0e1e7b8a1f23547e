"""The hot path's plugins (read without pluggy) are pluggy's plugins: same ones, same order."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from hippo_core import Workspace, build_context
from hippo_core.plugins.entry_points import cache_path, entry_points
from hippo_core.plugins.manager import BUILTIN_HOOKS, load_plugins, reset_plugins

from .conftest import WorkspaceMaker

PART = """
from hippo_core import ContextPart, hookimpl

@hookimpl{options}
def hippo_context_parts(workspace, session, task):
    return [ContextPart("{name}", "{name}\\n", required=False, order=55)]
"""


def make_distribution(site: Path, module: str, source: str, *, age: bool = True) -> None:
    """A module plugin with its dist-info, as pip would leave it (dated in the past)."""
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    dist = module.replace("_", "-")
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[hippo]\n{module} = {module}\n")
    if age:
        past = time.time() - 60
        for path in (site, info, info / "entry_points.txt", site / f"{module}.py"):
            os.utime(path, (past, past))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path for plugins, every plugin allowed (as without HIPPO_LOAD_PLUGINS)."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delenv("HIPPO_LOAD_PLUGINS")
    return folder


@pytest.fixture
def only_site(site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``site`` alone on sys.path: a folder on it changed in the last seconds (a checkout, an
    edit) would rightly keep the entry points from being cached."""
    import importlib.metadata  # noqa: F401  (imported while the standard library is on the path)

    monkeypatch.setattr(sys, "path", [str(site)])
    return site


def both_loads() -> tuple[object, object]:
    reset_plugins()
    hot = load_plugins(hot=True)
    reset_plugins()
    full = load_plugins()
    return hot, full


def test_the_builtins_implement_what_they_declare():
    full = load_plugins()
    found = {info.name: info.hooks for info in full.infos() if info.builtin}
    assert found == {name: tuple(sorted(hooks)) for name, hooks in BUILTIN_HOOKS.items()}


def test_every_hook_is_called_in_pluggy_order(site: Path):
    options = ["", "(tryfirst=True)", "(trylast=True)", "", "(tryfirst=True)", "(trylast=True)"]
    for number, option in enumerate(options):
        name = f"hippo_order_{number}"
        make_distribution(site, name, PART.format(options=option, name=name))
    hot, full = both_loads()
    assert hot.pm is None and full.pm is not None  # type: ignore[attr-defined]
    for hook in ("hippo_context_parts", "hippo_lint_note", "hippo_register_commands"):
        hot_order = [info.name for info in hot.implementers(hook)]  # type: ignore[attr-defined]
        full_order = [info.name for info in full.implementers(hook)]  # type: ignore[attr-defined]
        assert hot_order == full_order, hook
    assert [i.name for i in hot.infos()] == [i.name for i in full.infos()]  # type: ignore[attr-defined]


def test_the_hot_block_is_the_full_block(site: Path, make_workspace: WorkspaceMaker):
    make_distribution(site, "hippo_team_part", PART.format(options="", name="team"))
    notes = {"Home.md": "# Home\n\nWelcome.\n", "Home page.md": "# Home page\n\nThe shop.\n"}
    workspace = Workspace.open(make_workspace("", notes))
    hot, full = both_loads()
    assert (
        build_context(workspace, task="home", plugins=hot).text  # type: ignore[arg-type]
        == build_context(workspace, task="home", plugins=full).text  # type: ignore[arg-type]
        == "# Home\n\nWelcome.\nrelevant:\n- Home page: The shop.\nteam\n"
        "linter: overdue=0 dangling=0\n"
    )


OBJECT = """
from hippo_core import hookimpl


class Plugin:
    @hookimpl
    def hippo_context_parts(self, workspace, session, task):
        return []

plugin = Plugin()
"""


@pytest.mark.parametrize(
    ("module", "source", "attribute"),
    [
        # An object, not a module: pluggy reads its methods.
        ("hippo_shaped_object", OBJECT, "plugin"),
        # A misspelt hook: pluggy has the words for the refusal.
        (
            "hippo_shaped_misspelt",
            "from hippo_core import hookimpl\n@hookimpl\ndef hippo_contxt_parts():\n  pass\n",
            "",
        ),
        # A wrapper: only pluggy calls one right.
        (
            "hippo_shaped_wrapper",
            "from hippo_core import hookimpl\n@hookimpl(wrapper=True)\n"
            "def hippo_context_parts(workspace):\n  yield\n",
            "",
        ),
    ],
)
def test_a_plugin_only_pluggy_reads_makes_the_hot_load_give_way(
    site: Path, module: str, source: str, attribute: str
):
    make_distribution(site, module, source)
    if attribute:
        entry = site / f"{module}-1.0.dist-info" / "entry_points.txt"
        entry.write_text(f"[hippo]\n{module} = {module}:{attribute}\n")
        past = time.time() - 60
        os.utime(entry, (past, past))
    hot, full = both_loads()
    assert hot.pm is not None  # type: ignore[attr-defined]
    assert [(b.name, b.error) for b in hot.broken] == [  # type: ignore[attr-defined]
        (b.name, b.error)
        for b in full.broken  # type: ignore[attr-defined]
    ]


def test_entry_points_are_cached_until_a_distribution_comes(only_site: Path):
    site = only_site
    make_distribution(site, "hippo_first", PART.format(options="", name="first"))
    assert "hippo_first" in [point.name for point in entry_points("hippo")]
    cache = Path(cache_path())
    assert cache.parent == Path(os.environ["HIPPO_HOME"]) / "cache"
    stored = json.loads(cache.read_text())
    assert [p[0] for p in stored["payload"]["points"]] == ["hippo_first"]
    # What the cache holds is what is read: a point only the cache knows comes back.
    stored["payload"]["points"].append(["hippo_cached", "hippo_cached", "hippo-cached", "2"])
    cache.write_text(json.dumps(stored))
    assert [p.name for p in entry_points("hippo")] == ["hippo_first", "hippo_cached"]
    # A new distribution changes the folder's time: the folder is read again.
    make_distribution(site, "hippo_second", PART.format(options="", name="second"))
    assert [p.name for p in entry_points("hippo")] == ["hippo_first", "hippo_second"]


def test_a_folder_changed_just_now_is_not_cached(site: Path):
    make_distribution(site, "hippo_fresh", PART.format(options="", name="fresh"), age=False)
    found = entry_points("hippo")
    assert [p.name for p in found if p.distribution != "hippo-memory"] == ["hippo_fresh"]
    assert not Path(cache_path()).exists()


def test_each_interpreter_keeps_its_own_entry_points(only_site: Path, monkeypatch):
    site = only_site
    make_distribution(site, "hippo_first", PART.format(options="", name="first"))
    entry_points("hippo")
    first = Path(cache_path())
    monkeypatch.setattr(sys, "executable", "/elsewhere/bin/python")
    entry_points("hippo")
    second = Path(cache_path())
    assert first != second
    assert first.exists() and second.exists()
