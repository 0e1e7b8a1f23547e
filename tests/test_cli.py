"""The command line: help, usage lines, the fast reader against typer, plugin commands."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer._click import Context
from typer._click.types import IntParamType
from typer.main import get_command
from typer.testing import CliRunner

from hippo_core.base.errors import HippoError
from hippo_core.builtins.commands import COMMANDS
from hippo_core.cli import hot
from hippo_core.cli.root import app
from hippo_core.plugins.manager import reset_plugins
from hippo_packs.sleep.plugin import COMMANDS as SLEEP_COMMANDS

from .conftest import HippoRunner, Run, WorkspaceMaker
from .plugin_site import make_distribution
from .plugin_site import run_hippo as run_with_plugins

#: hippo's own commands, then the sleep pack's (its plugin comes from an entry point).
BUILTIN = {name: help_text for name, _, help_text in COMMANDS}
REGISTERED = {**BUILTIN, **{name: help_text for name, _, help_text in SLEEP_COMMANDS}}


@pytest.fixture(autouse=True)
def console_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process, click names the program ``hippo``, as for the installed script.

    (Under ``python -m pytest`` it would name it after pytest's ``__main__``.)
    """
    monkeypatch.setattr(sys.modules["__main__"], "__package__", None, raising=False)
    monkeypatch.setenv("COLUMNS", "100")  # help wrapped at click's 78, whatever the terminal


def normalised(text: str) -> str:
    return " ".join(text.split())


def command_paths(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command and group below ``command``, depth first (as ``docs/gen_cli.py``)."""
    yield path
    if not hasattr(command, "list_commands"):
        return
    context = Context(command, info_name="hippo")
    for name in command.list_commands(context):
        yield from command_paths(command.get_command(context, name), (*path, name))


def find(*path: str) -> Any:
    """The click command at ``path`` below the root."""
    command: Any = get_command(app)
    for name in path:
        command = command.get_command(Context(command, info_name="hippo"), name)
        assert command is not None, path
    return command


def usage_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("Usage: ")]
    assert len(lines) == 1, output
    return lines[0]


def first_paragraph(output: str) -> str:
    """The first paragraph after the usage line of a ``--help``, on one line."""
    lines = output.splitlines()
    at = lines.index(usage_line(output)) + 1
    while at < len(lines) and not lines[at].strip():
        at += 1
    paragraph = []
    while at < len(lines) and lines[at].strip():
        paragraph.append(lines[at])
        at += 1
    return normalised(" ".join(paragraph))


def listed_commands(output: str) -> dict[str, str]:
    """The ``Commands:`` section of a group's help: each name and its description."""
    lines = output.splitlines()
    rows: dict[str, str] = {}
    name = ""
    for line in lines[lines.index("Commands:") + 1 :]:
        if not line.strip():
            break
        row = re.match(r"^  (\S+)(?:\s+(.*))?$", line)
        if row:
            name = row.group(1)
            rows[name] = row.group(2) or ""
        else:
            assert name and line.startswith("   "), line
            rows[name] += " " + line.strip()
    return {key: normalised(value) for key, value in rows.items()}


# 1. A bare group prints its help and exits 0.


def test_hippo_alone_prints_the_help_and_exits_0(hippo: HippoRunner, tmp_path: Path):
    bare = hippo(cwd=tmp_path)
    assert bare.code == 0
    assert bare.err == ""
    assert usage_line(bare.out) == "Usage: hippo [OPTIONS] COMMAND [ARGS]..."
    assert list(listed_commands(bare.out)) == list(REGISTERED)
    assert bare.out == hippo("--help", cwd=tmp_path).out


@pytest.mark.parametrize("group", ["pack", "config", "notes", "eval"])
def test_a_group_alone_prints_its_help_and_exits_0(hippo: HippoRunner, tmp_path: Path, group: str):
    bare = hippo(group, cwd=tmp_path)
    assert bare.code == 0
    assert bare.err == ""
    assert usage_line(bare.out) == f"Usage: hippo {group} [OPTIONS] COMMAND [ARGS]..."
    assert listed_commands(bare.out)
    assert bare.out == hippo(group, "--help", cwd=tmp_path).out


# 2. Usage lines: NAME, never {NAME}.


def test_every_usage_line_shows_arguments_as_upper_case_names(hippo: HippoRunner, tmp_path: Path):
    usages: dict[tuple[str, ...], str] = {}
    for path in command_paths(get_command(app)):
        run = hippo(*path, "--help", cwd=tmp_path)
        assert run.code == 0, (path, run.err)
        line = usage_line(run.out)
        assert "{" not in line and "}" not in line, line
        prefix = " ".join(("Usage: hippo", *path, "[OPTIONS]"))
        assert line.startswith(prefix), line
        rest = line[len(prefix) :].split()
        command = find(*path)
        if hasattr(command, "list_commands"):
            assert rest == ["COMMAND", "[ARGS]..."], line
        else:
            arguments = [p for p in command.params if p.param_type_name == "argument"]
            assert len(rest) == len(arguments), line
            assert all(piece == piece.upper() for piece in rest), line
        # A group's list of commands is whole sentences too, never cut.
        for description in listed_commands(run.out).values() if "Commands:" in run.out else ():
            assert description.endswith(".") and "..." not in description, (path, description)
        usages[path] = line
    assert len(usages) > len(REGISTERED)
    assert usages[("search",)].endswith(" QUERY")
    assert usages[("revert",)].endswith(" [RECEIPT]")  # or --confirmed, or --withdraw
    assert usages[("config", "set")].endswith(" KEY VALUE")


# 3. `hippo --help` lists the registered sentences, which are each command's own help.


def test_the_top_level_list_is_the_registered_whole_sentences(hippo: HippoRunner, tmp_path: Path):
    listed = listed_commands(hippo("--help", cwd=tmp_path).out)
    assert list(listed) == list(REGISTERED)
    for name, description in listed.items():
        assert description == normalised(REGISTERED[name]), name
        assert description[0].isupper() and description.endswith("."), description
        assert "..." not in description, description


@pytest.mark.parametrize("name", list(REGISTERED))
def test_the_registered_help_is_the_first_paragraph_of_the_commands_own_help(
    hippo: HippoRunner, tmp_path: Path, name: str
):
    run = hippo(name, "--help", cwd=tmp_path)
    assert run.code == 0, run.err
    assert first_paragraph(run.out) == normalised(REGISTERED[name])


# 4. The fast reader takes exactly what the typer commands declare.


@pytest.mark.parametrize(
    ("option_set", "path"),
    [
        ("context", ("context",)),
        ("ingest", ("ingest",)),
        *(("hook", ("hook", event)) for event in hot.HOOK_EVENTS),
    ],
)
def test_the_fast_reader_takes_the_typer_commands_options(option_set: str, path: tuple[str, ...]):
    command = find(*path)
    declared = {}
    for param in command.get_params(Context(command, info_name="hippo")):
        assert param.param_type_name == "option", (path, param.name)
        for opt in (*param.opts, *param.secondary_opts):
            if opt.startswith("--") and opt != "--help":
                declared[opt] = param
    read = hot.OPTIONS[option_set]
    assert set(declared) == set(read)
    for opt, param in declared.items():
        assert param.is_flag == (read[opt] is bool), opt
        assert isinstance(param.type, IntParamType) == (read[opt] is int), opt


def test_the_fast_reader_knows_the_hook_events():
    hook = find("hook")
    assert tuple(hook.list_commands(Context(hook, info_name="hippo"))) == hot.HOOK_EVENTS


# 5. The fast path and typer's path give the same answers.


def through_typer(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """``hippo ARGS`` through the typer app, a user's error one line as ``main()`` makes it."""
    monkeypatch.chdir(cwd)
    reset_plugins()
    result = CliRunner().invoke(app, args, prog_name="hippo", terminal_width=78)
    reset_plugins()
    out, err, code = result.stdout, result.stderr, result.exit_code
    if isinstance(result.exception, HippoError):
        err += f"error: {result.exception}\n"
        code = result.exception.exit_code
    else:
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )
    return Run(code, out, err)


@pytest.mark.parametrize(
    "args",
    [
        ["context", "--task", "X"],
        ["context", "--task=X", "--budget", "5000"],
        ["context", "--budget=0"],
    ],
)
def test_the_fast_path_and_typer_agree(
    hippo: HippoRunner,
    make_workspace: WorkspaceMaker,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
):
    assert hot.read_options(args[1:], hot.OPTIONS["context"]) is not None  # the fast path
    root = make_workspace()
    fast = hippo(*args, cwd=root)
    typed = through_typer(args, root, monkeypatch)
    assert (fast.code, fast.out, fast.err) == (typed.code, typed.out, typed.err)
    if "--budget=0" in args:
        assert fast.code == 2
        assert fast.out == ""
        assert fast.err == "error: --budget must be a positive number of bytes, not 0\n"
    else:
        assert fast.code == 0
        assert fast.out.startswith("# Home\n")


def as_a_process(args: list[str], root: Path, stdin: str = "") -> Run:
    """``hippo ARGS`` run as the console script runs it, in a process of its own, its
    standard output buffered as an agent's pipe has it."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    done = subprocess.run(
        [sys.executable, "-m", "hippo_core", *args],
        cwd=root,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def test_the_console_script_leaving_at_once_loses_nothing(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
):
    """``script`` ends ``hook`` and ``context`` with ``os._exit``: what they print and
    write is the same as when the interpreter is torn down."""
    notes = {f"Topic {i}.md": f"# Topic {i}\n\nDeploys from main.\n" for i in range(9)}
    lines = "".join(f"- line {i} of the entry note\n" for i in range(5000))
    notes["Home.md"] = f"# Home\n\n{lines}"
    root = make_workspace('relevance = "bm25"\nbudget_bytes = 200000\n', notes)
    args = ["context", "--task", "deploys from main", "--budget", "150000"]
    quick, slow = as_a_process(args, root), hippo(*args, cwd=root)
    assert (quick.code, quick.out, quick.err) == (slow.code, slow.out, slow.err)
    assert len(quick.out) > 100_000  # more than a pipe holds: all of it flushed
    refused = as_a_process(["context", "--budget", "0"], root)
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == "error: --budget must be a positive number of bytes, not 0\n"
    payload = json.dumps({"session_id": "s-quick", "cwd": str(root), "prompt": "deploys?"})
    prompt = as_a_process(["hook", "prompt"], root, payload)
    assert (prompt.code, prompt.err) == (0, "")
    assert prompt.out.startswith("<hippo-context>\nrelevant:\n- Topic")
    record = json.loads(next((root / ".hippo" / "sessions").glob("*.json")).read_text())
    assert record["task"] == "deploys?" and record["first_prompt"]
    assert as_a_process(["hook", "prompt"], root, payload) == Run(0, "", "")


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (["context", "--budget", "abc"], 2, "Invalid value for '--budget'"),
        (["context", "--tsk", "x"], 2, "No such option: --tsk"),
        (["hook", "nonsense"], 2, "No such command 'nonsense'"),
    ],
)
def test_calls_the_fast_reader_leaves_get_typers_usage_errors(
    hippo: HippoRunner,
    make_workspace: WorkspaceMaker,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    code: int,
    expected: str,
):
    assert hot.run(args) is None
    root = make_workspace()
    run = hippo(*args, cwd=root)
    assert run.code == code
    assert run.out == ""
    assert expected in run.err
    assert run.err.startswith(f"Usage: hippo {args[0]} [OPTIONS]")
    typed = through_typer(args, root, monkeypatch)
    assert (typed.code, typed.out, typed.err) == (run.code, run.out, run.err)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["context", "--help"], ["--task TEXT", "--session ID", "--budget N"]),
        (["hook", "prompt", "--help"], ["--tool NAME"]),
    ],
)
def test_help_of_a_hot_command_comes_from_typer(
    hippo: HippoRunner,
    make_workspace: WorkspaceMaker,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    expected: list[str],
):
    assert hot.run(args) is None
    root = make_workspace()
    run = hippo(*args, cwd=root)
    assert run.code == 0
    assert run.err == ""
    assert usage_line(run.out) == f"Usage: hippo {' '.join(args[:-1])} [OPTIONS]"
    assert all(option in run.out for option in expected)
    typed = through_typer(args, root, monkeypatch)
    assert (typed.code, typed.out, typed.err) == (run.code, run.out, run.err)


def test_read_options_reads_only_what_it_is_sure_of():
    options = hot.OPTIONS["context"]
    assert hot.read_options(["--task", "X", "--budget=5000"], options) == {
        "task": "X",
        "budget": 5000,
    }
    assert hot.read_options(["--task", "-x"], options) is None
    assert hot.read_options(["--task", "--budget", "5"], options) is None
    assert hot.read_options(["--budget", "1_000"], options) is None
    assert hot.read_options(["--budget", "-5"], options) is None
    assert hot.read_options(["--budget"], options) is None
    assert hot.read_options(["--nope", "x"], options) is None
    assert hot.read_options(["--json=1"], hot.OPTIONS["ingest"]) is None
    assert hot.read_options(["--full", "--json"], hot.OPTIONS["ingest"]) == {
        "full": True,
        "json": True,
    }


# 6. Commands from third-party plugins.

HELLO = """
from hippo_core import hookimpl

@hookimpl
def hippo_register_commands(register):
    register("hello", "hippo_hello_cli:app", "Say hello to someone.")
"""
HELLO_CLI = """
import os
from pathlib import Path

import typer

from hippo_core import command_group, subcommand

Path(os.environ["HELLO_MARKER"]).write_text("imported")

app = command_group("Say hello to someone.")


@subcommand(app, "world")
def world() -> None:
    \"\"\"Greet the world.\"\"\"
    typer.echo("hello, world")
"""
GREET = """
from hippo_core import hookimpl


def greet(name: str) -> None:
    \"\"\"Greet someone by name.\"\"\"
    print(f"Hi, {name}!")


@hookimpl
def hippo_register_commands(register):
    register("greet", "hippo_greet:greet", "Greet someone by name.")
"""
DREAMER = """
from hippo_core import hookimpl


def dream() -> None:
    \"\"\"Another dream.\"\"\"
    print("the plugin's dream")


@hookimpl
def hippo_register_commands(register):
    register("dream", "hippo_dreamer:dream", "Dream the plugin's way.")
"""
VANISH = """
from hippo_core import hookimpl

@hookimpl
def hippo_register_commands(register):
    register("vanish", "hippo_vanish_cli:app", "Vanish without a trace.")
"""
PLUGINS = {
    "hippo_hello": ("hippo-hello", HELLO),
    "hippo_greet": ("hippo-greet", GREET),
    "hippo_dreamer": ("hippo-dreamer", DREAMER),
    "hippo_vanish": ("hippo-vanish", VANISH),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One site folder for every subprocess test: the four plugins, installed."""
    site = tmp_path_factory.mktemp("site")
    for module, (dist, source) in PLUGINS.items():
        make_distribution(site, dist, module, source)
    (site / "hippo_hello_cli.py").write_text(HELLO_CLI)
    (site / "hippo_vanish_cli.py").write_text("raise ImportError('needs the vanishing library')\n")
    return site


def run_hippo(
    args: list[str], cwd: Path, site: Path, marker: Path | None = None
) -> subprocess.CompletedProcess[str]:
    marked = str(marker or cwd / "marker")
    return run_with_plugins(args, cwd, site, None, HELLO_MARKER=marked, COLUMNS="100")


def test_a_plugin_command_is_listed_without_being_imported(site: Path, tmp_path: Path):
    marker = tmp_path / "imported"
    listed = run_hippo(["--help"], tmp_path, site, marker)
    assert listed.returncode == 0, listed.stderr
    commands = listed_commands(listed.stdout)
    assert commands["hello"] == "Say hello to someone."
    assert commands["greet"] == "Greet someone by name."
    assert commands["vanish"] == "Vanish without a trace."
    assert not marker.exists()
    assert run_hippo(["plugins"], tmp_path, site, marker).returncode == 0
    assert not marker.exists()

    world = run_hippo(["hello", "world"], tmp_path, site, marker)
    assert (world.returncode, world.stdout, world.stderr) == (0, "hello, world\n", "")
    assert marker.read_text() == "imported"


def test_a_plugin_group_alone_prints_its_help(site: Path, tmp_path: Path):
    bare = run_hippo(["hello"], tmp_path, site)
    assert bare.returncode == 0, bare.stderr
    assert bare.stderr == ""
    assert usage_line(bare.stdout).endswith(" hello [OPTIONS] COMMAND [ARGS]...")
    assert first_paragraph(bare.stdout) == "Say hello to someone."
    assert listed_commands(bare.stdout) == {"world": "Greet the world."}


def test_a_plugin_function_is_a_command(site: Path, tmp_path: Path):
    greet = run_hippo(["greet", "Ann"], tmp_path, site)
    assert (greet.returncode, greet.stdout, greet.stderr) == (0, "Hi, Ann!\n", "")
    missing = run_hippo(["greet"], tmp_path, site)
    assert missing.returncode == 2
    assert "Missing argument" in missing.stderr


def test_a_plugin_functions_argument_is_an_upper_case_name_in_its_usage(site: Path, tmp_path: Path):
    shown = run_hippo(["greet", "--help"], tmp_path, site)
    assert shown.returncode == 0, shown.stderr
    assert first_paragraph(shown.stdout) == "Greet someone by name."
    assert usage_line(shown.stdout).endswith(" greet [OPTIONS] NAME")


def test_a_plugin_cannot_take_a_name_hippo_has(site: Path, tmp_path: Path):
    listed = listed_commands(run_hippo(["--help"], tmp_path, site).stdout)
    assert list(listed)[: len(BUILTIN)] == list(BUILTIN)  # hippo's own first
    assert listed["dream"] == REGISTERED["dream"]
    shown = run_hippo(["dream", "--help"], tmp_path, site)
    assert shown.returncode == 0, shown.stderr
    assert first_paragraph(shown.stdout) == REGISTERED["dream"]
    ran = run_hippo(["dream"], tmp_path, site)  # outside a workspace: hippo's says so
    assert "the plugin's dream" not in ran.stdout
    assert ran.stderr.startswith("error: ")


def test_doctor_names_the_plugin_whose_command_was_left_out(
    site: Path, tmp_path: Path, hippo: HippoRunner
):
    root = tmp_path / "project"
    root.mkdir()
    assert hippo("init", cwd=root).code == 0
    doctor = run_hippo(["doctor"], root, site)
    warnings = [line for line in doctor.stdout.splitlines() if "'dream'" in line]
    assert len(warnings) == 1, doctor.stdout
    assert warnings[0].startswith("warning: plugin: plugin hippo_dreamer (hippo-dreamer) ")
    assert "registers the command 'dream'" in warnings[0]
    assert "hippo_core.builtins.commands" in warnings[0]


def test_a_plugin_command_that_cannot_be_imported_is_one_error_line(site: Path, tmp_path: Path):
    broken = run_hippo(["vanish"], tmp_path, site)
    assert broken.returncode == 1
    assert broken.stdout == ""
    lines = broken.stderr.splitlines()
    assert len(lines) == 1, broken.stderr
    assert lines[0].startswith("error: the command ")
    assert "'vanish'" in lines[0] and "hippo_vanish (hippo-vanish)" in lines[0]
    assert "hippo_vanish_cli:app" in lines[0]
    assert "ImportError: needs the vanishing library" in lines[0]
    assert "Traceback" not in broken.stderr

    listed = run_hippo(["--help"], tmp_path, site)
    assert listed.returncode == 0
    assert listed_commands(listed.stdout)["vanish"] == "Vanish without a trace."


def test_hippo_plugins_shows_the_commands_each_plugin_adds(site: Path, tmp_path: Path):
    text = run_hippo(["plugins"], tmp_path, site)
    assert text.returncode == 0, text.stderr
    lines = {line.split()[0]: line for line in text.stdout.splitlines()}
    for module, added in [
        ("hippo_hello", "hello"),
        ("hippo_greet", "greet"),
        ("hippo_dreamer", "dream"),
        ("hippo_vanish", "vanish"),
    ]:
        # A command hippo has already is marked as left out (pack-author finding 28).
        clash = " (left out: hippo_core.builtins.commands has it)" if added == "dream" else ""
        assert lines[module] == (
            f"{module}  {PLUGINS[module][0]} 1.2.0  hippo_register_commands; "
            f"commands: {added}{clash}"
        )
    assert lines["hippo_core.builtins.commands"].endswith(f"commands: {', '.join(BUILTIN)}")

    listed = run_hippo(["plugins", "--json"], tmp_path, site)
    infos = {info["name"]: info for info in json.loads(listed.stdout)}
    assert infos["hippo_core.builtins.commands"]["commands"] == list(BUILTIN)
    assert infos["hippo_core.builtins.commands"]["commands"][0] == "init"
    assert infos["hippo_hello"]["commands"] == ["hello"]
    assert infos["hippo_greet"]["commands"] == ["greet"]
    assert infos["hippo_dreamer"]["commands"] == ["dream"]
    assert infos["hippo_vanish"]["commands"] == ["vanish"]
    assert infos["hippo_core.builtins.packs"]["commands"] == []
