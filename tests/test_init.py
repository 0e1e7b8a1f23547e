"""`hippo init`: what it writes, what a second run keeps, what --force overwrites."""

from __future__ import annotations

from pathlib import Path

from hippo_core import Workspace

from .conftest import HippoRunner, WorkspaceMaker

CORE_FILES = [
    ".hippo/packs/core/pack.toml",
    ".hippo/packs/core/passes/consolidate.toml",
    ".hippo/packs/core/passes/verify.toml",
    ".hippo/packs/core/personas/consolidate-reviewer.md",
    ".hippo/packs/core/personas/verify-reviewer.md",
    ".hippo/packs/core/prompts/consolidate-system.md",
    ".hippo/packs/core/prompts/consolidate.md",
    ".hippo/packs/core/prompts/verify-system.md",
    ".hippo/packs/core/prompts/verify.md",
]
LOCAL_ONLY = [
    "/.hippo/snapshots/",
    "/.hippo/reports/",
    "/.hippo/sessions/",
    "/.hippo/dream-state.json",
    "/.hippo/cache/",
    "/.hippo/.pack-*/",
    "/notes/Session log.md",
    # the sleep pack's machine state (its plugin's hippo_local_paths)
    "/.hippo/sleep/fragments/",
    "/.hippo/sleep/pruned/",
    "/.hippo/sleep/intents.json",
    "/.hippo/sleep/state.json",
    "/.hippo/sleep/events.jsonl",
    "/.hippo/sleep/sleep.lock",
    "/.hippo/sleep/fates.jsonl",
    "/.hippo/sleep/purging/",
    "/.hippo/sleep/notified.jsonl",
    "/.hippo/sleep/ripples.jsonl",
    "/.hippo/sleep/ripples.json",
    "/.hippo/sleep/model.json",
    "/.hippo/sleep/formats.json",
    "/.hippo/sleep/serve.lock",
    "/.hippo/sleep/serve.token",
]


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".hippo/cache" not in p.as_posix() and "home/hippo/" not in p.as_posix()
    }


def test_init_writes_settings_core_pack_entry_note_and_ignore_rules(
    tmp_path: Path, hippo: HippoRunner
):
    run = hippo("init", cwd=tmp_path)
    assert run.code == 0, run.err
    written = files(tmp_path)
    assert sorted(written) == sorted(
        [".gitignore", ".hippo/packs.lock", ".hippo/settings.toml", "notes/Home.md", *CORE_FILES]
    )
    assert run.out.splitlines()[0] == "created   .hippo/settings.toml"
    gitignore = written[".gitignore"].decode().splitlines()
    assert gitignore[1:] == LOCAL_ONLY
    workspace = Workspace.open(tmp_path)
    assert workspace.settings.budget_bytes == 25600
    assert hippo("doctor", cwd=tmp_path).code == 0
    assert hippo("context", cwd=tmp_path).out.startswith("# Home\n")


def test_a_second_init_changes_nothing(tmp_path: Path, hippo: HippoRunner):
    hippo("init", cwd=tmp_path)
    prompt = tmp_path / ".hippo/packs/core/prompts/verify.md"
    prompt.write_text("my edited prompt {{notes}}\n")
    (tmp_path / "notes" / "Home.md").write_text("# Mine\n")
    before = files(tmp_path)
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    run = hippo("init", cwd=tmp_path)
    assert run.code == 0
    assert all(line.startswith("kept") for line in run.out.splitlines())
    assert files(tmp_path) == before
    assert all(
        p.stat().st_mtime_ns == stamp for p, stamp in stamps.items() if "cache" not in str(p)
    )


def test_init_restores_a_missing_core_file(tmp_path: Path, hippo: HippoRunner):
    hippo("init", cwd=tmp_path)
    original = (tmp_path / CORE_FILES[0]).read_bytes()
    (tmp_path / CORE_FILES[0]).unlink()
    assert f"created   {CORE_FILES[0]}" in hippo("init", cwd=tmp_path).out
    assert (tmp_path / CORE_FILES[0]).read_bytes() == original


def test_force_overwrites_only_the_core_pack(tmp_path: Path, hippo: HippoRunner):
    hippo("init", cwd=tmp_path)
    pristine = files(tmp_path)
    edits = {
        ".hippo/packs/core/prompts/verify.md": "edited {{notes}}\n",
        ".hippo/settings.toml": "budget_bytes = 1000\n",
        "notes/Home.md": "# My home\n",
        ".gitignore": "mine\n",
    }
    for rel, text in edits.items():
        (tmp_path / rel).write_text(text)
    run = hippo("init", "--force", cwd=tmp_path)
    assert "overwrote .hippo/packs/core/prompts/verify.md" in run.out
    after = files(tmp_path)
    assert (
        after[".hippo/packs/core/prompts/verify.md"]
        == pristine[".hippo/packs/core/prompts/verify.md"]
    )
    assert after[".hippo/settings.toml"] == b"budget_bytes = 1000\n"
    assert after["notes/Home.md"] == b"# My home\n"
    assert after[".gitignore"].decode().splitlines()[0] == "mine"
    assert after[".hippo/packs.lock"] == pristine[".hippo/packs.lock"]
    assert "kept      .hippo/packs.lock" in run.out


def test_init_appends_missing_rules_to_an_existing_gitignore(tmp_path: Path, hippo: HippoRunner):
    (tmp_path / ".gitignore").write_text("node_modules/\n/.hippo/cache/")
    hippo("init", cwd=tmp_path)
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[:3] == ["node_modules/", "/.hippo/cache/", lines[2]]
    assert lines[2].startswith("# hippo:")
    assert sorted(lines[3:]) == sorted(r for r in LOCAL_ONLY if r != "/.hippo/cache/")


def test_init_follows_a_configured_notes_dir(tmp_path: Path, hippo: HippoRunner):
    (tmp_path / ".hippo").mkdir()
    (tmp_path / ".hippo" / "settings.toml").write_text(
        'notes_dir = "wiki"\nentry_note = "Start.md"\n'
    )
    hippo("init", cwd=tmp_path)
    assert (tmp_path / "wiki" / "Start.md").is_file()
    assert "/wiki/Session log.md" in (tmp_path / ".gitignore").read_text().splitlines()


def test_init_refuses_when_settings_are_broken(tmp_path: Path, hippo: HippoRunner):
    (tmp_path / ".hippo").mkdir()
    (tmp_path / ".hippo" / "settings.toml").write_text("budget_bytes = [\n")
    run = hippo("init", cwd=tmp_path)
    assert run.code == 1
    assert run.err.startswith("error: .hippo/settings.toml: not valid TOML")
    assert not (tmp_path / ".hippo" / "packs").exists()


def test_init_inside_a_workspace_says_so_and_makes_nothing(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
):
    """A second workspace below the first would take over every command run below it
    (newcomer defect 10); --nested makes one on purpose."""
    outer = make_workspace()
    inner = outer / "services" / "billing"
    inner.mkdir(parents=True)
    run = hippo("init", cwd=inner)
    assert (run.code, run.out) == (1, "")
    assert run.err == (
        f"error: {outer} is already a hippo workspace, and this folder is inside it; run "
        "hippo there, or give --nested to make a workspace of its own here\n"
    )
    assert list(inner.iterdir()) == []
    made = hippo("init", "--nested", cwd=inner)
    assert made.code == 0 and "created   .hippo/settings.toml" in made.out
    assert hippo("init", cwd=inner).code == 0  # completing a workspace is no nesting
