"""Docs that cannot drift: the command reference, the README's commands, the manual's links."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))

from gen_api import render as render_api  # noqa: E402
from gen_cli import command_paths, render  # noqa: E402
from gen_hooks import render as render_hooks  # noqa: E402

import hippo_core  # noqa: E402
from hippo_core.cli import app  # noqa: E402
from tests.sleep_scene import make_sleepy  # noqa: E402


def test_command_reference_matches_the_help():
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == render(), (
        "docs/cli.md is stale: run python docs/gen_cli.py"
    )


def test_the_help_reads_as_plain_text():
    """What --help prints: no reStructuredText markup, an option's value named by a word, no
    "(required)" on an option click does not require, the defaults said (newcomer defect 31)."""
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert not re.findall(r"[^`]``[^`]", reference)
    assert "<str>" not in reference and "<int>" not in reference
    assert "(required)" not in reference
    assert "--reason R  Why it must go; forget refuses to run without it." in reference
    assert "(default: 1d, at 03:00 local time)" in reference


def test_hook_reference_matches_the_hookspecs():
    assert (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8") == render_hooks(), (
        "docs/hooks.md is stale: run python docs/gen_hooks.py"
    )


def test_the_api_tables_match_the_code():
    """docs/plugins.md's tables of the public API: signatures and docstrings as they are."""
    page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert page == render_api(page), "docs/plugins.md is stale: run python docs/gen_api.py"
    assert page.count("<!-- api: ") == len(hippo_core._API)
    assert "`command_group(help_text)`" in page


def test_every_public_name_says_what_it_is():
    """No row of the API tables without its docstring (or ``#:`` comment)."""
    page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert not re.findall(r"(?m)^\| `[^`]+` \|\s*\|$", page)


def test_the_plugin_list_of_the_install_page_is_what_hippo_prints(hippo, tmp_path):
    page = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    block = page.split("$ hippo plugins\n", 1)[1].split("```", 1)[0]
    assert hippo("plugins", cwd=tmp_path).out == block
    builtins = [line for line in block.splitlines() if line.startswith("hippo_core.builtins.")]
    numbers = {16: "sixteen", 22: "twenty-two", 23: "twenty-three", 24: "twenty-four"}
    assert f"so these {numbers[len(builtins)]} lines are" in " ".join(page.split())
    version = page.split("$ hippo --version\n", 1)[1].split("```", 1)[0]
    assert hippo("--version", cwd=tmp_path).out == version


def test_every_command_is_in_the_reference():
    from typer.main import get_command

    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for path in command_paths(get_command(app)):
        assert f"## `{' '.join(('hippo', *path))}`" in reference


def test_ci_ends_with_the_readmes_checks_as_written():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("Check a change as CI does", 1)[1].split("```sh\n", 1)[1]
    steps = block.split("```", 1)[0].splitlines()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert steps[2:] == [
        ".venv/bin/ruff check .",
        ".venv/bin/ruff format --check .",
        ".venv/bin/mypy",
        ".venv/bin/python -m pytest",
    ]
    assert ci[-len(steps) :] == steps
    # set -e stops the script at a failing line, not at a failing command before a line's &&.
    assert not [step for step in steps if "&&" in step or "||" in step or ";" in step]


def test_contributing_sets_up_as_ci_does():
    chapter = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "`python3 -m venv .venv && .venv/bin/pip install -e '.[dev]'`" in chapter
    assert "\npython3 -m venv .venv\n.venv/bin/pip install -q -e '.[dev]'\n" in ci


SPEC_ORDER = [
    "Introduction",
    "Install",
    "Quick start",
    "Concepts",
    "Architecture",
    "Packs",
    "Writing a pack",
    "First-party packs",
    "The registry",
    "Themes",
    "Commands",
    "Configuration",
    "Sharing a brain in a team",
    "Scheduling on macOS",
    "Measuring with hippo eval",
    "Troubleshooting with hippo doctor",
    "Security and privacy",
    "Roadmap",
    "Limits and known gaps",
    "Contributing and licence",
]


def test_the_index_lists_every_chapter_in_the_specs_order():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    contents = index[index.index("## Contents") :]
    places = [contents.find(title) for title in SPEC_ORDER]
    assert -1 not in places, [t for t, at in zip(SPEC_ORDER, places, strict=True) if at < 0]
    assert places == sorted(places)
    linked = set(re.findall(r"\]\(([a-z-]+\.md)\)", contents))
    chapters = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert chapters == linked, chapters ^ linked


def test_the_manual_links_resolve():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_the_configuration_chapter_shows_what_hippo_config_prints(hippo, make_workspace):
    """The chapter's hippo config examples that run in any workspace, as they print."""
    chapter = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    ws = make_workspace()
    for command in (
        "hippo config set budget_byte 5",
        "hippo config set triggers.on_compact true",
        "hippo config get triggers.on_compact",
        "hippo config set triggers.after_session 5",
        "hippo config set index_url postgresql+psycopg://hippo:s3cret@db.example.org/hippo_team",
        "hippo config set budget_bytes -5",
        "hippo config set sample_tasks refunds",
        "hippo config set model_backend opnai",
        "hippo config set registries '[\"http://packs.example.org/index.toml\"]'",
        "hippo config set themes '[\"core-strikt\"]'",
        "hippo config set index_url postgresql+psycopg://hippo@db.example.org:port/hippo_team",
    ):
        run = hippo(*shlex.split(command)[1:], cwd=ws)
        shown = f"$ {command}\n{run.out}{run.err}"
        assert shown in chapter, shown
    sleepy = make_sleepy(make_workspace(), hippo)  # the sleep pack's table, out of range
    for command in (
        "hippo config set sleep.interval_seconds 100",
        "hippo config set interval_seconds 72000",
        "hippo config set sleep.model.keep_warm_seconds 60",
    ):
        run = sleepy.run(*command.split()[1:])
        assert run.code != 0
        shown = f"$ {command}\n{run.out}{run.err}"
        assert shown in chapter, shown


INDEX_INSTALLS = re.compile(r"pip install (?:-U )?'?hippo-memory\b")


def test_every_install_hint_is_from_a_checkout():
    """hippo-memory is not on the package index yet: no hint, message or page may tell a
    reader to install it from there (install.md says how, from a checkout)."""
    from hippo_core.base.distribution import install_hint, upgrade_hint

    assert install_hint("mcp") == "pip install -e '.[mcp]' in hippo's checkout"
    assert upgrade_hint() == "git pull and pip install -e . in hippo's checkout"
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    code = [*(ROOT / "hippo_core").rglob("*.*"), *(ROOT / "hippo_packs").rglob("*.*")]
    found = []
    for path in [*pages, *code]:
        if path.suffix not in (".py", ".md", ".toml", ".tmpl", ".js"):
            continue
        text = path.read_text(encoding="utf-8")
        # Only what says it is for once hippo is released may name the index.
        text = re.sub(
            r"## From the package index, once released\n.*?\n(?=## )", "", text, flags=re.S
        )
        text = re.sub(r"\nOnce it is released, .*?\n\n", "\n", text, flags=re.S)
        found += [f"{path.relative_to(ROOT)}: {m.group()}" for m in INDEX_INSTALLS.finditer(text)]
        if "pypi.org/project/hippo-memory" in text:
            found.append(f"{path.relative_to(ROOT)}: a link to an index page not published")
    assert found == []


def test_the_ingest_json_of_the_transcripts_chapter_has_every_key(hippo, tmp_path):
    """Every key ``hippo ingest --json`` prints is in the chapter's example, in its order."""
    import json

    chapter = (ROOT / "docs" / "transcripts.md").read_text(encoding="utf-8")
    shown = chapter.split("`hippo ingest --json` prints the counts", 1)[1]
    example = json.loads(shown.split("```json\n", 1)[1].split("```", 1)[0])
    printed = json.loads(hippo("ingest", "--json", cwd=tmp_path).out)
    assert list(example) == list(printed)


def test_every_claude_model_command_is_the_one_models_md_recommends():
    """``--no-session-persistence`` keeps each model call from being saved as a session
    (quick-start.md left it out: newcomer defect 20)."""
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    commands = [
        (page.name, found)
        for page in pages
        for found in re.findall(
            r'model_command[^\n]*?\["claude", "-p"[^\]]*\]', page.read_text(encoding="utf-8")
        )
    ]
    assert commands
    assert [c for c in commands if '"-p", "--no-session-persistence", ' not in c[1]] == []
