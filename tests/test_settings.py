"""Settings: defaults, unknown keys, wrong values, and `hippo config get|set`."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo_core import Settings, Workspace

from .conftest import HippoRunner, WorkspaceMaker


def test_defaults(make_workspace: WorkspaceMaker):
    settings = Workspace.open(make_workspace("")).settings
    assert settings == Settings()
    assert (settings.notes_dir, settings.entry_note, settings.budget_bytes) == (
        "notes",
        "Home.md",
        25600,
    )
    assert settings.effective_log_path == "notes/Session log.md"


def test_a_missing_settings_file_means_defaults(make_workspace: WorkspaceMaker):
    root = make_workspace("")
    (root / ".hippo" / "settings.toml").unlink()
    assert Workspace.open(root).settings == Settings()


def test_workspace_is_found_by_walking_up(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace("budget_bytes = 99\n")
    deep = root / "notes" / "a" / "b"
    deep.mkdir(parents=True)
    assert Workspace.find(deep).root == root
    assert hippo("config", "get", "budget_bytes", cwd=deep).out == "99\n"


def test_unknown_key_is_named_once_with_a_suggestion(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace('budget_byte = 10\nbedtime = "late"\n')
    run = hippo("context", cwd=root)
    assert run.code == 0
    assert run.err.splitlines() == [
        "warning: .hippo/settings.toml: 'budget_byte' is not a setting and was ignored"
        " - did you mean budget_bytes?",
        "warning: .hippo/settings.toml: 'bedtime' is not a setting and was ignored",
    ]
    assert Workspace.open(root).settings.budget_bytes == 25600
    assert hippo("context", cwd=root).err == run.err  # the same from the cache


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'budget_bytes = "lots"\n',
            '.hippo/settings.toml: budget_bytes: input should be a valid integer, found "lots"',
        ),
        (
            "budget_bytes = 0\n",
            ".hippo/settings.toml: budget_bytes: input should be greater than 0, found 0",
        ),
        (
            'notes_dir = "../elsewhere"\n',
            ".hippo/settings.toml: notes_dir: must be a relative path that stays inside the "
            'workspace, found "../elsewhere"',
        ),
        (
            "required_notes = [1]\n",
            ".hippo/settings.toml: required_notes.0: input should be a valid string, found 1",
        ),
        ("budget_bytes = [\n", ".hippo/settings.toml: not valid TOML: "),
        ("x = 1\nx = 2\n", ".hippo/settings.toml: not valid TOML: "),
    ],
)
def test_a_wrong_value_is_one_error_naming_key_and_file(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, text: str, message: str
):
    root = make_workspace(text)
    before = (root / ".hippo" / "settings.toml").read_bytes()
    for command in (["context"], ["doctor"], ["notes", "lint"], ["config", "get", "notes_dir"]):
        run = hippo(*command, cwd=root)
        assert run.code == 1
        assert run.out == ""
        assert run.err.startswith(f"error: {message}")
        assert run.err.count("\n") == 1
    assert (root / ".hippo" / "settings.toml").read_bytes() == before


def test_settings_not_utf8(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace()
    (root / ".hippo" / "settings.toml").write_bytes(b'notes_dir = "caf\xe9"\n')
    run = hippo("context", cwd=root)
    assert run.err == "error: .hippo/settings.toml: not UTF-8 (byte 16); save it as UTF-8\n"


def test_config_get_prints_effective_values(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace('required_notes = ["A.md"]\n')
    assert hippo("config", "get", "required_notes", cwd=root).out == '["A.md"]\n'
    assert hippo("config", "get", "notes_dir", cwd=root).out == "notes\n"
    assert hippo("config", "get", "log_path", cwd=root).out == "notes/Session log.md\n"
    table = hippo("config", "get", "openai", cwd=root).out
    assert table.startswith('url = "http://127.0.0.1:8080/v1"\nmodel = "default"\n')


SETTINGS = """\
# Our team's settings.
notes_dir = "notes"  # where notes live

# The budget, tuned in May.
budget_bytes = 25600
"""


def test_config_set_keeps_comments(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace(SETTINGS)
    assert hippo("config", "set", "budget_bytes", "30000", cwd=root).code == 0
    assert hippo("config", "set", "sample_tasks", '["fix the build"]', cwd=root).code == 0
    assert hippo("config", "set", "entry_note", "Start.md", cwd=root).code == 0
    text = (root / ".hippo" / "settings.toml").read_text()
    assert text == SETTINGS.replace("25600", "30000") + (
        'sample_tasks = ["fix the build"]\nentry_note = "Start.md"\n'
    )
    settings = Workspace.open(root).settings
    assert (settings.budget_bytes, settings.sample_tasks) == (30000, ("fix the build",))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("budget_bytes", "-1", "budget_bytes: input should be greater than 0, found -1"),
        ("budget_bytes", "big", 'budget_bytes: input should be a valid integer, found "big"'),
        ("budget_byte", "1", "'budget_byte' is not a setting - did you mean budget_bytes?"),
        ("entry_note", "Home.txt", 'entry_note: must name a .md file, found "Home.txt"'),
    ],
)
def test_config_set_refuses_bad_values_and_writes_nothing(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, key: str, value: str, message: str
):
    root = make_workspace(SETTINGS)
    run = hippo("config", "set", key, "--", value, cwd=root)
    assert run.code != 0
    assert message in run.err
    assert run.err.count("\n") == 1
    assert (root / ".hippo" / "settings.toml").read_text() == SETTINGS


def test_config_set_creates_a_missing_file(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace("")
    (root / ".hippo" / "settings.toml").unlink()
    assert hippo("config", "set", "budget_bytes", "100", cwd=root).code == 0
    assert (root / ".hippo" / "settings.toml").read_text() == "budget_bytes = 100\n"


def test_hot_path_uses_the_validated_cache(make_workspace: WorkspaceMaker, tmp_path: Path):
    root = make_workspace("budget_bytes = 77\n")
    assert Workspace.open(root).settings.budget_bytes == 77
    assert (root / ".hippo" / "cache" / "settings.json").is_file()
    (root / ".hippo" / "settings.toml").write_text("budget_bytes = 78\n")
    assert Workspace.open(root).settings.budget_bytes == 78


def test_settings_that_cannot_be_read(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace()
    (root / ".hippo" / "settings.toml").unlink()
    (root / ".hippo" / "settings.toml").mkdir()
    run = hippo("context", cwd=root)
    assert run.code == 1
    assert run.err == "error: .hippo/settings.toml: cannot be read (Is a directory)\n"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "model_backend",
            "opnai",
            "model_backend: 'opnai' is not a backend here; use one of: command, openai - "
            "did you mean 'openai'?",
        ),
        (
            "registries",
            '["http://packs.example.org/index.toml"]',
            "registries: http://packs.example.org/index.toml: plain http is refused; use https",
        ),
        (
            "registries",
            '["ftp://example.org/i.toml"]',
            "registries: ftp://example.org/i.toml: 'ftp'",
        ),
        ("registries", '["../team/index.toml"]', "registries: ../team/index.toml: no index file"),
        (
            "themes",
            '["core-strikt"]',
            "themes: 'core-strikt' is not installed here; install it first "
            "(hippo pack add core-strikt)",
        ),
        ("themes", '["core"]', "themes: 'core' is a pack, not a theme"),
        ("index_url", "postgresql+psycopg://hippo@db:abc/team", "index_url: the port 'abc' is"),
        ("index_url", "postgresql+psycopg://hippo@db:99999/team", "index_url: the port '99999'"),
    ],
)
def test_config_set_refuses_a_value_a_later_command_would_refuse(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, key: str, value: str, message: str
):
    """What dream, pack and ingest would refuse, config set refuses first (newcomer 3)."""
    root = make_workspace(SETTINGS)
    assert hippo("init", cwd=root).code == 0
    before = (root / ".hippo" / "settings.toml").read_bytes()
    run = hippo("config", "set", key, value, cwd=root)
    assert (run.code, run.out) == (2 if key != "index_url" else 1, "")
    assert run.err == f"error: .hippo/settings.toml: {message}" + run.err.split(message, 1)[1]
    assert run.err.count("\n") == 1
    assert (root / ".hippo" / "settings.toml").read_bytes() == before


def test_config_set_takes_what_the_workspace_can_use(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace("")
    assert hippo("init", cwd=root).code == 0
    (root / "team").mkdir()
    (root / "team" / "index.toml").write_text("format = 1\npack = []\n", encoding="utf-8")
    for key, value in (
        ("model_backend", "openai"),
        ("registries", '["team/index.toml", "https://packs.example.org/index.toml", "hippo"]'),
        ("registries", '["http://127.0.0.1:8000/index.toml"]'),
        ("index_url", "postgresql+psycopg://hippo@db:5432/team"),
    ):
        assert hippo("config", "set", key, value, cwd=root).code == 0, (key, value)
    assert hippo("pack", "add", "core-strict", cwd=root).code == 0
    assert hippo("config", "set", "themes", '["core-strict"]', cwd=root).code == 0
    # A misspelt theme that is installed under another name is named, not offered to install.
    run = hippo("config", "set", "themes", '["core-strikt"]', cwd=root)
    assert run.err.endswith(
        "themes: 'core-strikt' is not installed here; did you mean 'core-strict'?\n"
    )


def test_an_index_url_whose_port_is_no_number_is_one_line_at_use(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace('index_url = "postgresql+psycopg://hippo@db:abc/team"\n')
    run = hippo("ingest", cwd=root)
    assert run.code == 1
    assert run.err == (
        "error: .hippo/settings.toml: index_url: the port 'abc' is not a number from 1 to 65535, "
        'found "postgresql+psycopg://db:abc/team"\n'
    )


def test_config_set_takes_a_negative_number_and_shows_a_list(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace("")
    run = hippo("config", "set", "triggers.after_sessions", "-1", cwd=root)
    assert run.err == (
        "error: .hippo/settings.toml: triggers.after_sessions: input should be greater than "
        "or equal to 0, found -1\n"
    )
    run = hippo("config", "set", "model_command", "claude -p --system-prompt-file x", cwd=root)
    assert run.err.endswith(
        """; write a list: hippo config set model_command '["claude", "-p", """
        """"--system-prompt-file", "x"]'\n"""
    )
    assert (root / ".hippo" / "settings.toml").read_text() == ""


def test_every_commented_default_of_the_template_is_toml_once_uncommented():
    """Uncommenting a line of the file ``hippo init`` writes gives valid TOML (the
    ``[openai]`` table's ``extra_body`` gave ``extra_body =``: newcomer defect 29)."""
    import re
    import tomllib

    from hippo_core.settings.schema import settings_template

    lines = re.findall(r"^# (\w+ = .*?)(?:  # .*)?$", settings_template(), re.M)
    assert len(lines) > 15
    for line in lines:
        assert tomllib.loads(line), line


def test_a_plugins_key_at_the_top_of_the_file_says_where_it_belongs(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    """The settings are read without the plugins; where a plugin's table has the key, the
    warning says so when it is shown (it said so once, then no longer did)."""
    root = make_workspace("max_attempts = 3\n")
    line = ".hippo/settings.toml: 'max_attempts' is not a setting and was ignored"
    hint = " - did you mean sleep.max_attempts?"
    assert f"warning: settings: {line}{hint}" in hippo("doctor", cwd=root).out
    assert f"warning: {line}{hint}" in hippo("notes", "lint", cwd=root).err
