"""The agent's hot path stays light: `hippo context`, `hippo hook ...` and `hippo ingest`
import no heavy library, and none of dreaming (its types alone cost a few milliseconds).

Each command runs, through the real `main()`, in a fresh interpreter whose modules are read
at exit and compared with those of an interpreter that ran nothing.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

import hippo_core

from .claude_factory import ClaudeSession
from .conftest import WorkspaceMaker

ROOT = Path(hippo_core.__file__).parent.parent
PAYLOADS = Path(__file__).parent / "fixtures" / "hook-payloads"

#: The issue's rule: the hook and context path never imports these (typer vendors click).
HEAVY = ("typer", "typer._click", "click", "sqlalchemy", "pydantic", "jinja2", "rich", "tomlkit")
#: ... and what the code goes further to avoid there. json (and the re it imports) may load:
#: the console script imports re before hippo runs, and the rest of json costs about 1 ms, a
#: fair price for the standard library's own strict parser.
HOT = (*HEAVY, "pluggy", "dataclasses", "typing", "inspect", "pathlib", "sqlite3.dbapi2")
#: What a later prompt of a session, which prints nothing, avoids on top: it has its answer
#: from the session record before the workspace is opened.
LATER_PROMPT = (*HOT, "hippo_core.workspace.folder", "hippo_core.settings.values", "contextlib")
INGEST = (
    *HEAVY,
    "pluggy",
    "dataclasses",
    "hippo_core.index.store",
    "hippo_core.transcripts.privacy",
)

#: Imports only sys before main(); reads sys.modules whatever happens. Like a console script,
#: it has no "" (the current folder) on sys.path.
PROBE = """
import sys
sys.path.remove("")
sys.argv = ["hippo", *sys.argv[1:]]
code = 0
try:
    from hippo_core.cli import main
    main()
except SystemExit as exc:
    code = exc.code
finally:
    sys.stderr.write(f"\\nexit:{code}\\nmodules:{' '.join(sys.modules)}\\n")
"""
BASELINE = "import sys; sys.stderr.write(f\"\\nexit:0\\nmodules:{' '.join(sys.modules)}\\n\")"


#: The workspace's notes: the entry note, and a note the task "the home page" finds (the
#: entry note itself is never listed as relevant: the block gives it already).
PAGES = {
    "Home.md": "---\ntype: topic\n---\n# Home\n\nWelcome.\n",
    "Pages.md": "---\ntype: topic\n---\n# Home page\n\nThe home page lists the shop.\n",
}


def python(
    code: str, *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -S -c CODE ARGS``: without site, whose editable-install finder in a dev venv
    imports re and pathlib at start-up; hippo and its dependencies come from PYTHONPATH."""
    path = os.pathsep.join([*site.getsitepackages(), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-S", "-c", code, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**(os.environ if env is None else env), "PYTHONPATH": path},
        timeout=60,
    )


def modules_at_exit(result: subprocess.CompletedProcess[str]) -> set[str]:
    _, _, tail = result.stderr.rpartition("\nexit:")
    code, _, modules = tail.partition("\nmodules:")
    assert code in ("0", "None"), result.stderr
    return set(modules.split())


@functools.cache
def baseline() -> frozenset[str]:
    """What the interpreter loads by itself: not hippo's doing."""
    modules = modules_at_exit(python(BASELINE, cwd=ROOT))
    loaded = sorted(modules.intersection(LATER_PROMPT, INGEST))
    assert not loaded, f"the interpreter imports {loaded} itself: these checks would mean nothing"
    return frozenset(modules)


def imported(
    root: Path, *args: str, stdin: str = "", expect: str = "", env: dict[str, str] | None = None
) -> set[str]:
    """The modules ``hippo ARGS`` imports; its output starts with ``expect``, or is empty."""
    result = python(PROBE, *args, cwd=root, stdin=stdin, env=env)
    modules = modules_at_exit(result)
    printed = result.stdout.startswith(expect) if expect else result.stdout == ""
    assert printed, (result.stdout, result.stderr)
    return modules - baseline()


def assert_none(modules: set[str], unwanted: tuple[str, ...], what: str) -> None:
    found = sorted(modules.intersection(unwanted))
    assert not found, f"{what} imported {', '.join(found)}"


def hooks_log() -> str:
    path = Path(os.environ["HIPPO_HOME"]) / "hooks.log"
    return path.read_text() if path.exists() else ""


def payload(name: str, root: Path, **fields: str) -> str:
    """A payload Claude Code sent, moved into the workspace ``root``."""
    data = json.loads((PAYLOADS / name).read_text())
    return json.dumps({**data, "cwd": str(root), **fields})


def test_context_imports_no_heavy_library(make_workspace: WorkspaceMaker) -> None:
    root = make_workspace("budget_bytes = 20000\n", PAGES)
    first = imported(root, "context", "--task", "home page", expect="# Home")
    assert "sqlalchemy" not in first and "jinja2" not in first and "rich" not in first
    assert "hippo_core.dream.model" not in first
    # Once the settings were validated, not even pydantic is needed.
    again = imported(root, "context", "--task", "home page", expect="# Home")
    assert_none(again, (*HOT, "hippo_core.dream.model"), "hippo context")


def test_hooks_import_no_heavy_library(make_workspace: WorkspaceMaker) -> None:
    root = make_workspace("budget_bytes = 20000\n", PAGES)
    imported(root, "context", expect="# Home")  # validates the settings once, as any command
    start = payload("SessionStart.json", root)
    prompt = payload("UserPromptSubmit.json", root, prompt="the home page")
    end = payload("SessionEnd.json", root)
    session = json.loads(start)["session_id"]
    record = root / ".hippo" / "sessions" / f"{session}.json"

    # What Claude Code's hooks print needs no agent registered (actions/hook.py's tables).
    agents = ("hippo_core.plugins.agent", "hippo_core.builtins.agents.claude_code")
    modules = imported(root, "hook", "session-start", stdin=start, expect="<hippo-context>\n# Home")
    assert_none(modules, (*HOT, *agents, "hippo_core.dream.model"), "hippo hook session-start")
    modules = imported(root, "hook", "prompt", stdin=prompt, expect="<hippo-context>\nrelevant:")
    # The linter counts reckon the day without datetime (about a millisecond).
    first_prompt = (*HOT, *agents, "hippo_core.dream.model", "datetime", "heapq")
    assert_none(modules, first_prompt, "hippo hook prompt (the first)")
    assert json.loads(record.read_text())["first_prompt"]

    # A later prompt prints nothing, and finds that out before the workspace is opened.
    modules = imported(root, "hook", "prompt", stdin=prompt, expect="")
    assert "hippo_core.actions.hook" in modules  # the hook ran, and its modules were seen
    assert_none(modules, LATER_PROMPT, "hippo hook prompt (a later one)")

    assert "exit_reason" not in json.loads(record.read_text())
    modules = imported(root, "hook", "session-end", stdin=end, expect="")
    assert_none(modules, HOT, "hippo hook session-end")
    assert json.loads(record.read_text())["exit_reason"] == "other"  # the end was recorded
    compact = json.dumps({**json.loads(end), "hook_event_name": "PreCompact", "trigger": "auto"})
    modules = imported(root, "hook", "compact", stdin=compact, expect="")
    assert "hippo_core.builtins.triggers" in modules  # the event reached the triggers
    assert_none(modules, HOT, "hippo hook compact")
    assert hooks_log() == ""


@pytest.mark.skipif(sys.platform != "linux", reason="elsewhere platformdirs finds the folder")
def test_the_default_hippo_home_costs_no_import(
    make_workspace: WorkspaceMaker, tmp_path: Path
) -> None:
    root = make_workspace("budget_bytes = 20000\n", PAGES)
    # As a user runs it: no HIPPO_HOME, and the installed plugins looked for (in the home).
    env = {k: v for k, v in os.environ.items() if k not in ("HIPPO_HOME", "HIPPO_LOAD_PLUGINS")}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    imported(root, "ingest", expect="ingested 0 of 0", env=env)
    assert (tmp_path / "data" / "hippo" / "index.sqlite").is_file()  # the default home
    imported(root, "context", expect="# Home", env=env)  # validates the settings once
    prompt = payload("UserPromptSubmit.json", root, prompt="the home page")
    modules = imported(
        root, "hook", "prompt", stdin=prompt, expect="<hippo-context>\nrelevant:", env=env
    )
    assert_none(modules, (*HOT, "platformdirs"), "hippo hook prompt without HIPPO_HOME")


LAZY = """
import sys
import hippo_core
ours = lambda: sorted(m for m in sys.modules if m.split(".")[0] == "hippo_core")
first = ours()
workspace = hippo_core.Workspace
print(repr((first, ours(), workspace.__module__, dir(hippo_core))))
"""


def test_importing_the_package_is_cheap() -> None:
    result = python(LAZY, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    first, then, home, names = ast.literal_eval(result.stdout)
    assert first == ["hippo_core", "hippo_core.version"], f"import hippo_core imported {first}"
    assert "hippo_core.workspace.folder" in then and home == "hippo_core.workspace.folder", then
    missing = sorted(set(hippo_core.__all__) - set(names))
    assert not missing, f"dir(hippo_core) leaves out {missing}"
    modules = modules_at_exit(python(f"import hippo_core\n{BASELINE}", cwd=ROOT))
    assert_none(modules - baseline(), HOT, "import hippo_core")


@pytest.mark.parametrize("transcripts", [0, 1])
def test_ingest_with_nothing_new_imports_no_heavy_library(
    make_workspace: WorkspaceMaker, claude_home: Path, transcripts: int
) -> None:
    root = make_workspace()
    for _ in range(transcripts):
        ClaudeSession(claude_home, str(root)).prompt("work here").answer("done").write()
    imported(root, "ingest", expect=f"ingested {transcripts} of {transcripts} transcript files")
    again = imported(root, "ingest", expect=f"ingested 0 of {transcripts} transcript files")
    assert_none(again, INGEST, "hippo ingest (nothing new)")


def test_ingest_of_one_new_turn_imports_no_heavy_library(
    make_workspace: WorkspaceMaker, claude_home: Path
) -> None:
    root = make_workspace()
    session = ClaudeSession(claude_home, str(root)).prompt("work here").answer("done")
    session.write()
    imported(root, "ingest", expect="ingested 1 of 1 transcript files")
    session.prompt("and the tests").tool("Read", file_path=str(root / "notes" / "Home.md"))
    session.answer("they pass").write()
    modules = imported(root, "ingest", expect="ingested 1 of 1 transcript files, 1 new turn")
    assert "hippo_core.index.store" in modules  # the turn was written
    assert_none(modules, (*HEAVY, "pluggy", "dataclasses", "copy", "hashlib"), "hippo ingest")


def test_history_relevance_with_a_watcher_imports_no_heavy_library(
    make_workspace: WorkspaceMaker, claude_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from .watchers import WatcherThread

    root = make_workspace('relevance = "history"\nbudget_bytes = 20000\n', PAGES)
    made = ClaudeSession(claude_home, str(root)).prompt("the home page")
    made.tool("Read", file_path=str(root / "notes" / "Pages.md")).answer("done").write()
    imported(root, "ingest", expect="ingested 1 of 1 transcript files")
    imported(root, "context", expect="# Home")  # validates the settings once, as any command
    modules = imported(root, "context", "--task", "home page", expect="# Home")
    assert "hippo_core.index.history" in modules  # the sessions were asked
    assert "_socket" not in modules  # no watcher: no socket either
    assert_none(modules, (*HOT, "hippo_core.dream.model"), "hippo context under history")
    if sys.platform != "linux":
        return
    monkeypatch.setenv("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="hippo-run-"))
    serving = WatcherThread(root, with_terms=True)
    try:
        prompt = payload("UserPromptSubmit.json", root, prompt="the home page")
        modules = imported(
            root, "hook", "prompt", stdin=prompt, expect="<hippo-context>\nrelevant:"
        )
        assert "_socket" in modules and "socket" not in modules  # asked, with the C module
        assert_none(modules, (*HOT, "hippo_core.dream.model"), "the first prompt, watched")
    finally:
        serving.stop()
    assert hooks_log() == ""


def test_every_module_this_file_names_exists() -> None:
    """A module moved or renamed while this file kept its old name would make the checks
    above pass for nothing: every ``hippo_core...`` name written here is a module, not a
    package (whose ``__init__`` holds nothing to avoid)."""
    import importlib.util
    import re

    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    named = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"hippo_core(\.\w+)+", node.value)
    }
    assert {"hippo_core.dream.model", "hippo_core.index.store"} <= named
    specs = {name: importlib.util.find_spec(name) for name in sorted(named)}
    missing = [name for name, spec in specs.items() if spec is None]
    assert not missing, f"no such module: {missing}"
    packages = [name for name, spec in specs.items() if spec and spec.submodule_search_locations]
    assert not packages, f"packages, not modules: {packages}"
