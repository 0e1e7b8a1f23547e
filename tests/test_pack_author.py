"""``hippo pack new`` and ``hippo pack check``: the scaffold, and one line for every problem."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hippo_core import __version__
from tests.conftest import HippoRunner, Run, WorkspaceMaker
from tests.models import model_settings, scripted_model

NAME = "house-rules"
DIST = f"hippo-pack-{NAME}"
MODULE = "hippo_pack_house_rules"
PACK = f"{DIST}/{MODULE}/pack"
SESSION = "3c6f1a52-8d4e-4b7a-9f21-6e0d5c8b7a14"
PROPOSER = "# Task: add to one note what recent agent sessions learned about its subject"
REVIEWER = f"You are the reviewer for the {NAME} pass."
FILES = [
    ".gitignore",
    "MANIFEST.in",
    "README.md",
    f"{MODULE}/__init__.py",
    f"{MODULE}/pack/eval/example/case.toml",
    f"{MODULE}/pack/eval/example/notes/Deploy.md",
    f"{MODULE}/pack/eval/example/transcripts/claude-code/projects/-workspace/{SESSION}.jsonl",
    f"{MODULE}/pack/pack.toml",
    f"{MODULE}/pack/passes/{NAME}.toml",
    f"{MODULE}/pack/personas/{NAME}-reviewer.md",
    f"{MODULE}/pack/prompts/{NAME}.md",
    f"{MODULE}/plugin.py",
    "pyproject.toml",
    "tests/test_pack.py",
]
APPEND = {
    "note": "Deploy.md",
    "kind": "append",
    "old": "",
    "new": "- 2026-11-30: Run `make assets` before `make deploy`; it fails without them.\n",
    "reason": "The deploy failed until make assets had run.",
    "evidence": [{"session": SESSION, "ordinal": 0}],
}
CONFIRM = json.dumps({"verdict": "confirm", "notes": "Turn 0 shows it."})


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty folder to run the commands in."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def made(hippo: HippoRunner, work: Path) -> Path:
    """``hippo pack new house-rules`` run in ``work``; the distribution's folder."""
    result = hippo("pack", "new", NAME, cwd=work)
    assert result.code == 0, result.err
    return work / DIST


def check(hippo: HippoRunner, cwd: Path, *args: str) -> Run:
    return hippo("pack", "check", *args, cwd=cwd)


def refused(result: Run, problem: str) -> None:
    assert (result.code, result.out, result.err) == (1, "", f"error: {problem}\n")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


# hippo pack new


def test_new_writes_a_distribution_and_says_what_next(hippo: HippoRunner, work: Path):
    result = hippo("pack", "new", NAME, cwd=work)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == f"created {DIST}/, the pack {NAME} in a Python distribution:"
    assert lines[1 : 1 + len(FILES)] == [f"  {rel}" for rel in FILES]
    assert lines[1 + len(FILES) :] == [
        "next steps:",
        f"  edit {PACK}/: the prompt, the reviewer persona, pack.toml's description",
        f"  hippo pack check {DIST}",
        f"  hippo eval pack {PACK} --record   (in a workspace with a model)",
        f"  pip install -e {DIST}",
        f"{DIST}/README.md says more.",
    ]
    folder = work / DIST
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == (
        sorted(FILES)
    )
    assert [p.name for p in work.iterdir()] == [DIST]  # no staging folder left behind


def test_the_scaffolds_files_name_the_pack_its_module_and_this_hippo(made: Path):
    major_minor = ".".join(__version__.split(".")[:2])
    project = tomllib.loads((made / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == DIST
    assert project["project"]["version"] == "0.1.0"
    assert project["project"]["dependencies"] == [f"hippo-memory>={major_minor}"]
    assert project["project"]["entry-points"]["hippo"] == {NAME: f"{MODULE}.plugin"}
    assert project["tool"]["setuptools"]["package-data"] == {MODULE: ["pack/**/*"]}
    manifest = tomllib.loads((made / MODULE / "pack/pack.toml").read_text(encoding="utf-8"))
    assert manifest == {
        "name": NAME,
        "version": "0.1.0",
        "description": manifest["description"],
        "protocol": "HIPPO_V1",
        "hippo": f">={major_minor}",
    }
    plugin = (made / MODULE / "plugin.py").read_text(encoding="utf-8")
    assert "from hippo_core import hookimpl" in plugin
    assert f'register("{NAME}", PACK)' in plugin
    pass_file = tomllib.loads((made / MODULE / f"pack/passes/{NAME}.toml").read_text())
    assert pass_file["reads"] == ["notes", "turns"] and pass_file["per_note"] is True
    case = tomllib.loads((made / MODULE / "pack/eval/example/case.toml").read_text())
    assert case["passes"] == [NAME]
    transcript = next((made / MODULE / "pack/eval").rglob("*.jsonl")).read_text()
    assert '"cwd":"{{workspace}}"' in transcript
    for path in made.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            for marker in ("{name}", "{module}", "{hippo}"):
                assert marker not in text, f"{path} keeps {marker}"


def test_the_scaffold_passes_check_as_written(hippo: HippoRunner, made: Path, work: Path):
    ok = f"ok: {NAME} 0.1.0 (passes: {NAME})\n"
    assert check(hippo, work, DIST).out == ok
    assert check(hippo, work, PACK).out == ok
    assert check(hippo, made, ".").out == ok
    assert check(hippo, made / MODULE / "pack", ".").code == 0


@pytest.mark.slow
def test_the_scaffolds_own_test_passes(made: Path):
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=made,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_new_writes_below_dir_and_makes_it(hippo: HippoRunner, work: Path):
    result = hippo("pack", "new", "x2", "--dir", "some/where", cwd=work)
    assert result.code == 0
    assert result.out.startswith("created some/where/hippo-pack-x2/, the pack x2")
    assert (work / "some/where/hippo-pack-x2/hippo_pack_x2/pack/passes/x2.toml").is_file()


@pytest.mark.parametrize(
    "name", ["Rules", "_rules", "house rules", "house.rules", "r" * 65, "", "hippo/x"]
)
def test_new_refuses_a_name_that_is_no_pack_name(hippo: HippoRunner, work: Path, name: str):
    result = hippo("pack", "new", name, cwd=work)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"error: '{name}' is not a pack name: use lower-case letters, digits, '-' or '_', "
        "starting with a letter or digit, at most 64 characters\n"
    )
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "pack"),
    [
        ("verify", "core"),
        ("consolidate", "core"),
        # Pack-author finding 13: the sleep pack's passes, and decisions'.
        ("draft", "sleep"),
        ("choose", "sleep"),
        ("rechoose", "sleep"),
        ("redraft", "sleep"),
    ],
)
def test_new_refuses_the_name_of_a_first_party_pass(
    hippo: HippoRunner, work: Path, name: str, pack: str
):
    result = hippo("pack", "new", name, cwd=work)
    assert result.code == 2
    assert result.err == (
        f"error: '{name}' is the name of a pass of hippo's {pack} pack, and the new pack's "
        "pass takes the pack's name; pass names must be unique, so choose another\n"
    )
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("name", ["core", "core-strict", "decisions", "sleep"])
def test_new_refuses_the_name_of_a_first_party_pack(
    hippo: HippoRunner, work: Path, monkeypatch: pytest.MonkeyPatch, name: str
):
    # Whatever plugins load: hippo's registry names its packs.
    monkeypatch.setenv("HIPPO_LOAD_PLUGINS", "")
    result = hippo("pack", "new", name, cwd=work)
    assert (result.code, result.err) == (
        2,
        f"error: '{name}' is the name of hippo's {name} pack; choose another name\n",
    )


def test_new_refuses_an_existing_folder_and_writes_nothing(hippo: HippoRunner, work: Path):
    (work / DIST).mkdir()
    (work / DIST / "mine.txt").write_text("keep\n", encoding="utf-8")
    result = hippo("pack", "new", NAME, cwd=work)
    assert (result.code, result.out) == (1, "")
    assert result.err == (f"error: {DIST} already exists; choose another name or folder (--dir)\n")
    assert [p.name for p in work.iterdir()] == [DIST]
    assert [p.name for p in (work / DIST).iterdir()] == ["mine.txt"]


def test_new_refuses_a_dir_that_is_a_file(hippo: HippoRunner, work: Path):
    (work / "notes.txt").write_text("x\n", encoding="utf-8")
    result = hippo("pack", "new", NAME, "--dir", "notes.txt", cwd=work)
    assert (result.code, result.err) == (
        1,
        "error: notes.txt is not a folder; give --dir a folder to write the pack in\n",
    )


# hippo pack check: what it refuses


def test_check_names_the_folder_it_cannot_use(hippo: HippoRunner, made: Path, work: Path):
    refused(
        check(hippo, work, "nowhere"),
        "nowhere: does not exist; give a pack's folder or its distribution's",
    )
    refused(
        check(hippo, work, "."),
        ".: has no pack.toml, and no <module>/pack/pack.toml as hippo pack new writes it; "
        "give the pack's folder",
    )
    # A distribution's packs are those its plugin registers; a folder with no
    # pyproject.toml is looked in for the one pack hippo pack new writes.
    (made / "second" / "pack").mkdir(parents=True)
    (made / "second" / "pack" / "pack.toml").write_text("", encoding="utf-8")
    assert check(hippo, work, DIST).out == f"ok: {NAME} 0.1.0 (passes: {NAME})\n"
    (made / "pyproject.toml").unlink()
    refused(
        check(hippo, work, DIST),
        f"{DIST}: holds several packs ({MODULE}/pack, second/pack); give the folder of one",
    )
    refused(
        check(hippo, work, f"{PACK}/pack.toml"),
        f"{PACK}/pack.toml: is not a folder; give the folder that holds pack.toml",
    )


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('name = "', 'nmae = "', "unknown key 'nmae' - did you mean 'name'?"),
        (
            'version = "0.1.0"',
            'version = "soon"',
            "version 'soon' is not a version like 1.0 or 0.2.1",
        ),
        (
            'protocol = "HIPPO_V1"',
            'protocol = "HIPPO_V2"',
            'protocol must be "HIPPO_V1", found "HIPPO_V2"',
        ),
        ('version = "0.1.0"\n', "", "missing key 'version'"),
        ('name = "', 'name = ["', "not valid TOML: "),
    ],
)
def test_check_refuses_a_bad_pack_toml(
    hippo: HippoRunner, made: Path, work: Path, old: str, new: str, problem: str
):
    edit(made / MODULE / "pack/pack.toml", old, new)
    result = check(hippo, work, DIST)
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith(f"error: {PACK}/pack.toml: {problem}")
    assert result.err.count("\n") == 1


def test_check_refuses_a_pack_for_a_newer_hippo(hippo: HippoRunner, made: Path, work: Path):
    edit(made / MODULE / "pack/pack.toml", 'hippo = ">=', 'hippo = ">=99.0,>=')
    refused(
        check(hippo, work, DIST),
        f"{PACK}/pack.toml: needs hippo >=99.0,>=0.1 and this is hippo {__version__}; "
        "upgrade hippo (git pull and pip install -e . in hippo's checkout) or install an older "
        "version of the pack",
    )


def test_check_names_a_missing_distribution_and_the_pip_command(
    hippo: HippoRunner, made: Path, work: Path
):
    manifest = made / MODULE / "pack/pack.toml"
    manifest.write_text(
        manifest.read_text() + 'requires = ["hippo-jira>=1.2", "pluggy>=1"]\n', encoding="utf-8"
    )
    refused(
        check(hippo, work, DIST),
        f"{PACK}/pack.toml: needs hippo-jira>=1.2, which is not installed; "
        "install with: pip install 'hippo-jira>=1.2'",
    )
    edit(manifest, "hippo-jira>=1.2", "pluggy>=999")
    refused(
        check(hippo, work, DIST),
        f"{PACK}/pack.toml: needs pluggy>=999, which is not installed; "
        "install with: pip install 'pluggy>=999'",
    )
    edit(manifest, "pluggy>=999", "packaging")
    assert check(hippo, work, DIST).code == 0


def test_check_refuses_a_placeholder_the_pass_does_not_read(
    hippo: HippoRunner, made: Path, work: Path
):
    prompt = made / MODULE / f"pack/prompts/{NAME}.md"
    edit(prompt, "{{turns}}", "{{sessions}}")
    line = prompt.read_text().splitlines().index("{{sessions}}") + 1
    refused(
        check(hippo, work, DIST),
        f"{PACK}/prompts/{NAME}.md:{line}: placeholder {{{{sessions}}}} is not in the reads "
        f"of passes/{NAME}.toml (notes, turns)",
    )
    edit(prompt, "{{sessions}}", "{{turn}}")
    refused(
        check(hippo, work, DIST),
        f"{PACK}/prompts/{NAME}.md:{line}: placeholder {{{{turn}}}} is not a reader here; "
        "the readers are: brief, cores, critiques, fragments, human_confirmed, notes, sessions, "
        "turns - did you mean {{turns}}?",
    )


def test_check_refuses_a_bad_pass_file(hippo: HippoRunner, made: Path, work: Path):
    edit(made / MODULE / f"pack/passes/{NAME}.toml", "reviewer = ", "reveiwer = ")
    refused(
        check(hippo, work, DIST),
        f"{PACK}/passes/{NAME}.toml: unknown key 'reveiwer' - did you mean 'reviewer'?",
    )


def write_theme(folder: Path, files: dict[str, str]) -> Path:
    manifest = (
        'name = "terse"\nversion = "1.0"\ndescription = "Shorter verify reviews."\n'
        'protocol = "HIPPO_V1"\noverlays = "core"\n'
    )
    for rel, text in {"pack.toml": manifest, **files}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def test_check_checks_a_theme_against_the_pack_it_overlays(hippo: HippoRunner, work: Path):
    write_theme(work / "terse", {"personas/verify-reviewer.md": "Be brief.\n"})
    assert check(hippo, work, "terse").out == "ok: terse 1.0 (a theme over core)\n"
    data = json.loads(check(hippo, work, "terse", "--json").out)
    assert (data["ok"], data["overlays"], data["passes"]) == (True, "core", [])

    write_theme(work / "terse", {"prompts/review.md": "Be brief.\n"})
    refused(
        check(hippo, work, "terse"),
        "terse/prompts/review.md: overrides prompts/review.md, which pack 'core' does not "
        "have; a theme may only replace files of the pack it overlays",
    )
    (work / "terse/prompts/review.md").unlink()
    write_theme(work / "terse", {"prompts/verify.md": "{{notes}}\n{{tickets}}\n"})
    result = check(hippo, work, "terse")
    assert result.code == 1
    assert result.err.startswith(
        "error: terse/prompts/verify.md:2: placeholder {{tickets}} is not a reader here"
    )
    (work / "terse/prompts/verify.md").unlink()
    write_theme(work / "terse", {"passes/extra.toml": ""})
    refused(
        check(hippo, work, "terse"),
        "terse: a theme adds no passes; remove its passes/ folder",
    )


def test_check_checks_a_theme_against_a_pack_of_the_workspace_here(hippo: HippoRunner, work: Path):
    assert hippo("init", cwd=work).code == 0
    team = work / ".hippo/packs/team"
    (team / "passes").mkdir(parents=True)
    (team / "passes/review.toml").write_text(
        'protocol = "HIPPO_V1"\nprompt = "prompts/review.md"\nreads = ["notes"]\n'
        'reviewer = "personas/judge.md"\nper_note = false\n',
        encoding="utf-8",
    )
    for rel, text in {"prompts/review.md": "{{notes}}\n", "personas/judge.md": "Judge.\n"}.items():
        (team / rel).parent.mkdir(parents=True, exist_ok=True)
        (team / rel).write_text(text, encoding="utf-8")
    theme = write_theme(work / "terse", {"prompts/review.md": "{{notes}}\n{{turns}}\n"})
    (theme / "pack.toml").write_text(
        (theme / "pack.toml").read_text().replace('"core"', '"team"'), encoding="utf-8"
    )
    result = check(hippo, work, "terse")
    assert result.err == (
        "error: terse/prompts/review.md:2: placeholder {{turns}} is not in the reads of "
        "passes/review.toml (notes)\n"
    )
    (theme / "prompts/review.md").write_text("Briefly.\n{{notes}}\n", encoding="utf-8")
    assert check(hippo, work, "terse").out == "ok: terse 1.0 (a theme over team)\n"


# hippo pack check --json


def test_check_json_says_ok_and_what_the_pack_is(hippo: HippoRunner, made: Path, work: Path):
    result = check(hippo, work, DIST, "--json")
    assert result.code == 0
    assert json.loads(result.out) == {
        "ok": True,
        "path": PACK,
        "name": NAME,
        "version": "0.1.0",
        "passes": [NAME],
        "overlays": "",
        "error": None,
        "eval": None,
        "packs": [
            {
                "path": PACK,
                "name": NAME,
                "version": "0.1.0",
                "passes": [NAME],
                "overlays": "",
                "error": None,
            }
        ],
    }
    edit(made / MODULE / "pack/pack.toml", 'hippo = ">=', 'hippo = ">=99,>=')
    result = check(hippo, work, DIST, "--json")
    data = json.loads(result.out)
    assert (result.code, result.err, data["ok"], data["path"], data["name"]) == (
        1,
        "",
        False,
        PACK,
        NAME,
    )
    assert data["error"].startswith(f"{PACK}/pack.toml: needs hippo >=99,>=0.1 and this is")


# hippo pack check --eval


@pytest.fixture
def here(make_workspace: WorkspaceMaker, tmp_path: Path) -> Path:
    """A workspace whose scripted model proposes the example case's change and confirms it."""
    argv, _script = scripted_model(
        tmp_path,
        [
            {"when": [PROPOSER], "reply": json.dumps([APPEND])},
            {"when": [REVIEWER], "reply": CONFIRM},
        ],
    )
    return make_workspace(model_settings(argv))


def test_check_eval_replays_the_recorded_cases(
    hippo: HippoRunner, made: Path, here: Path, work: Path
):
    pack = made / MODULE / "pack"
    recorded = hippo("eval", "pack", str(pack), "--record", cwd=here)
    assert recorded.code == 0, recorded.out + recorded.err
    assert (pack / "eval/example/recorded.json").is_file()

    result = check(hippo, work, DIST, "--eval")
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        f"ok: {NAME} 0.1.0 (passes: {NAME})\n"
        "eval example: ok: 1 of 1 proposals valid, 1 applied, 1 of 1 expected; 2 calls\n"
        "eval: 1 of 1 cases replayed\n"
    )
    data = json.loads(check(hippo, work, DIST, "--eval", "--json").out)
    assert data["ok"] is True and data["eval"]["mode"] == "replay"
    assert data["eval"]["recall"] == {"rate": 1.0, "hits": 1, "total": 1}
    assert [case["status"] for case in data["eval"]["cases"]] == ["ok"]

    # A prompt edited after the recording makes calls the recording does not have.
    edit(pack / f"prompts/{NAME}.md", "Most notes need\nnothing", "Most notes need\nno change")
    result = check(hippo, work, DIST, "--eval")
    assert result.code == 1
    assert "eval example: failed: replay: a prompt of house-rules/house-rules " in result.out
    assert result.out.endswith("eval: 0 of 1 cases replayed\n")


def test_check_eval_fails_a_case_with_no_recording(hippo: HippoRunner, made: Path, work: Path):
    result = check(hippo, work, DIST, "--eval")
    assert result.code == 1
    assert result.out == (
        f"ok: {NAME} 0.1.0 (passes: {NAME})\n"
        "eval example: failed: eval/example has no recorded.json; run "
        f"hippo eval pack {PACK} --record first\n"
        "eval: 0 of 1 cases replayed\n"
    )
    data = json.loads(check(hippo, work, DIST, "--eval", "--json").out)
    assert data["ok"] is False
    assert data["eval"]["cases"][0]["error"].startswith("eval/example has no recorded.json")


def test_check_eval_needs_cases_and_names_a_broken_one(hippo: HippoRunner, made: Path, work: Path):
    pack = made / MODULE / "pack"
    (pack / "eval/example/case.toml").write_text('descripton = "x"\n', encoding="utf-8")
    (pack / "eval/example/recorded.json").write_text('{"version": 1, "calls": []}\n')
    result = check(hippo, work, DIST, "--eval")
    assert result.code == 1
    assert "unknown key 'descripton' - did you mean 'description'?" in result.err
    shutil.rmtree(pack / "eval")
    result = check(hippo, work, DIST, "--eval")
    assert result.code == 1
    assert result.err == (f"error: {PACK} has no eval cases (eval/<case>/case.toml) to replay\n")


# What the pack author is told (pack-author findings 12, 14, 25)


def test_check_refuses_a_distribution_whose_versions_differ(
    hippo: HippoRunner, made: Path, work: Path
):
    """Finding 12: a wheel built at 0.1.1 while pack.toml says 0.1.0 is named before it ships."""
    edit(made / "pyproject.toml", 'version = "0.1.0"', 'version = "0.1.1"')
    refused(
        check(hippo, work, DIST),
        f"{PACK}/pack.toml: version 0.1.0, but {DIST} is 0.1.1; raise the version in "
        "pyproject.toml and pack.toml together",
    )


THEME_PLUGIN = """

@hookimpl
def hippo_register_packs(register):
    register("{name}", PACK)
    register("{name}-terse", PACK.parent / "theme")
"""


def test_check_checks_every_pack_the_distributions_plugin_registers(
    hippo: HippoRunner, made: Path, work: Path
):
    """Finding 14: the theme the plugin registers beside the pack is checked too."""
    plugin = made / MODULE / "plugin.py"
    text = plugin.read_text(encoding="utf-8")
    head = text[: text.index("@hookimpl")]
    plugin.write_text(head + THEME_PLUGIN.format(name=NAME).lstrip("\n"), encoding="utf-8")
    theme = made / MODULE / "theme"
    (theme / "personas").mkdir(parents=True)
    (theme / "pack.toml").write_text(
        f'name = "{NAME}-terse"\nversion = "0.1.0"\ndescription = "Terse."\n'
        f'protocol = "HIPPO_V1"\noverlays = "{NAME}"\n',
        encoding="utf-8",
    )
    persona = theme / "personas" / f"{NAME}-reviwer.md"
    persona.write_text("Be terse.\n", encoding="utf-8")
    refused(
        check(hippo, work, DIST),
        f"{DIST}/{MODULE}/theme/personas/{NAME}-reviwer.md: overrides personas/{NAME}-reviwer.md, "
        f"which pack '{NAME}' does not have; a theme may only replace files of the pack it "
        "overlays",
    )
    persona.rename(theme / "personas" / f"{NAME}-reviewer.md")
    assert check(hippo, work, DIST).out == (
        f"ok: {NAME} 0.1.0 (passes: {NAME})\nok: {NAME}-terse 0.1.0 (a theme over {NAME})\n"
    )


def test_the_scaffold_declares_its_test_needs_and_points_to_the_manual(made: Path):
    """Finding 25: pytest as an extra, the sdist takes the tests, the hooks' chapter named."""
    project = tomllib.loads((made / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["optional-dependencies"]["test"] == ["pytest>=8"]
    assert (made / "MANIFEST.in").read_text(encoding="utf-8").splitlines()[1] == "graft tests"
    plugin = (made / MODULE / "plugin.py").read_text(encoding="utf-8")
    assert "docs/hooks.md" in plugin and "hippo_core.plugins.hookspecs" not in plugin
