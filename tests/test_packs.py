"""Loading packs and rendering prompts: what runs, and one clear line for every bad file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hippo_core import Workspace, hookimpl
from hippo_core.base.errors import HippoError, UsageError
from hippo_core.dream.model import Pass
from hippo_core.dream.packs import PackError, read_persona, read_system
from hippo_core.dream.render import render_prompt
from hippo_core.packs.lock import Locked, update_lock
from hippo_core.packs.running import load_here, load_packs, load_passes
from hippo_core.plugins.manager import PluginInfo, Plugins, load_plugins

from .conftest import HippoRunner, WorkspaceMaker

PASS = {
    "protocol": "HIPPO_V1",
    "prompt": "prompts/p.md",
    "reads": ["notes"],
    "reviewer": "personas/r.md",
    "per_note": False,
}
CHECK = ".hippo/packs/extra/passes/check.toml"
PROMPT = ".hippo/packs/extra/prompts/p.md"
NO_LINKS = "is a symbolic link; hippo does not follow links in packs"
READERS = "brief, cores, critiques, fragments, human_confirmed, notes, sessions, turns"


def pass_file(**changes: Any) -> str:
    """A pass file's TOML: the defaults above, with keys changed (None drops a key)."""
    values = {**PASS, **changes}
    return "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items() if v is not None)


def write_pack(
    folder: Path,
    passes: dict[str, str] | None = None,
    files: dict[str, str | bytes] | None = None,
) -> Path:
    """A pack with one pass ``check`` reading notes, unless told otherwise."""
    passes = {"check": pass_file()} if passes is None else passes
    files = {"prompts/p.md": "Notes:\n{{notes}}\n", "personas/r.md": "Judge.\n", **(files or {})}
    (folder / "passes").mkdir(parents=True)
    for name, text in passes.items():
        (folder / "passes" / f"{name}.toml").write_text(text, encoding="utf-8")
    for rel, content in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


@pytest.fixture
def root(make_workspace: WorkspaceMaker) -> Path:
    return make_workspace()


@pytest.fixture
def initialised(make_workspace: WorkspaceMaker, hippo: HippoRunner) -> Path:
    root = make_workspace()
    assert hippo("init", cwd=root).code == 0
    return root


def passes(root: Path, only: str | None = None) -> list[Pass]:
    return load_passes(Workspace.open(root), load_plugins(), only=only)


def refusal(root: Path) -> str:
    """The one problem of the one pack left out here; the others still load."""
    loaded = load_here(Workspace.open(root), load_plugins())
    [left] = loaded.left_out
    assert passes(root) == loaded.passes()
    return left.problem


def extra(root: Path) -> Path:
    return root / ".hippo" / "packs" / "extra"


# The core pack


def test_the_core_pack_loads_with_its_passes_sorted(initialised: Path):
    loaded = passes(initialised)
    assert [p.key for p in loaded] == ["core/consolidate", "core/verify"]
    consolidate, verify = loaded
    assert verify.reads == ("sessions", "notes", "turns", "human_confirmed")
    assert verify.per_note and not consolidate.per_note
    assert verify.input_budget_bytes == 200_000 and verify.review == "model"
    assert verify.root == initialised / ".hippo" / "packs" / "core"
    assert (verify.prompt, verify.reviewer) == ("prompts/verify.md", "personas/verify-reviewer.md")
    assert read_persona(verify).startswith("You are the reviewer for hippo's verify pass.")
    [pack] = load_packs(Workspace.open(initialised), load_plugins())
    assert (pack.name, pack.source) == ("core", "workspace")


def test_passes_run_in_the_order_of_pack_and_name(root: Path):
    write_pack(root / ".hippo/packs/b", {"alpha": pass_file(), "zulu": pass_file()})
    write_pack(root / ".hippo/packs/a", {"mike": pass_file()})
    write_pack(root / ".hippo/packs/.hidden", {"hidden": pass_file()})
    (root / ".hippo/packs/README.md").write_text("not a pack\n", encoding="utf-8")
    assert [p.key for p in passes(root)] == ["a/mike", "b/alpha", "b/zulu"]


def test_only_keeps_the_pass_with_that_file_name(initialised: Path):
    assert [p.key for p in passes(initialised, only="verify")] == ["core/verify"]
    [pack] = load_packs(Workspace.open(initialised), load_plugins(), only="verify")
    assert [p.name for p in pack.passes] == ["verify"]
    with pytest.raises(UsageError) as info:
        passes(initialised, only="verfy")
    assert (
        str(info.value)
        == "no pass named 'verfy'; the passes here are: core/consolidate, core/verify"
    )
    assert info.value.exit_code == 2


# Pass files


def test_defaults_and_a_path_that_stays_inside_the_pack(root: Path):
    write_pack(extra(root), {"check": pass_file(prompt="prompts/../prompts/./p.md")})
    [check] = passes(root)
    assert (check.prompt, check.input_budget_bytes, check.review) == (
        "prompts/p.md",
        200000,
        "model",
    )
    queued = pass_file(review="queue", input_budget_bytes=9)
    write_pack(root / ".hippo/packs/more", {"queued": queued})
    assert passes(root, only="queued")[0].review == "queue"


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"protocol": "HIPPO_V2"}, 'protocol must be "HIPPO_V1", found "HIPPO_V2"'),
        ({"protocol": None}, "missing key 'protocol'"),
        ({"prompt": None}, "missing key 'prompt'"),
        ({"reads": None}, "missing key 'reads'"),
        ({"reviewer": None}, "missing key 'reviewer'"),
        ({"per_note": None}, "missing key 'per_note'"),
        ({"prompt": None, "promt": "prompts/p.md"}, "unknown key 'promt' - did you mean 'prompt'?"),
        (
            {"colour": "red"},
            "unknown key 'colour'; the keys are: protocol, prompt, reads, "
            "reviewer, per_note, input_budget_bytes, review, system",
        ),
        ({"per_note": "yes"}, "'per_note' must be true or false, found \"yes\""),
        ({"reads": "notes"}, "'reads' must be a list of strings, found \"notes\""),
        ({"reads": ["notes", 3]}, "'reads' must be a list of strings, found [\"notes\", 3]"),
        ({"prompt": 7}, "'prompt' must be a string, found 7"),
        ({"input_budget_bytes": 0}, "'input_budget_bytes' must be a whole number above 0, found 0"),
        (
            {"input_budget_bytes": True},
            "'input_budget_bytes' must be a whole number above 0, found true",
        ),
        (
            {"reads": ["fragment"]},
            f"reads: 'fragment' is not a reader here; the readers are: {READERS}",
        ),
        ({"reads": ["notes", "notes"]}, "reads: 'notes' is listed twice"),
        (
            {"review": "qeue"},
            "review: 'qeue' is not a reviewer here; the reviewers are: model, queue",
        ),
        ({"prompt": "prompts/../../x.md"}, "prompt 'prompts/../../x.md' leaves the pack"),
        ({"reviewer": "../core/personas/r.md"}, "reviewer '../core/personas/r.md' leaves the pack"),
        (
            {"prompt": "/etc/hosts"},
            "prompt '/etc/hosts' is an absolute path; name a file relative to the pack",
        ),
        (
            {"prompt": "prompts\\p.md"},
            "prompt 'prompts\\p.md' contains a backslash; separate folders with /",
        ),
        ({"prompt": ""}, "prompt '' must name a file of the pack"),
        ({"prompt": "prompts/missing.md"}, "prompt prompts/missing.md does not exist"),
        ({"reviewer": "personas"}, "reviewer personas is not a regular file"),
        ({"system": "prompts/gone.md"}, "system prompts/gone.md does not exist"),
        ({"system": "../x.md"}, "system '../x.md' leaves the pack"),
    ],
)
def test_a_bad_pass_file_is_one_line_naming_it(root: Path, changes: dict[str, Any], problem: str):
    write_pack(extra(root), {"check": pass_file(**changes)})
    assert refusal(root) == f"{CHECK}: {problem}"


def test_invalid_toml_names_the_file_and_the_parser_message(root: Path):
    write_pack(extra(root), {"check": 'protocol = "HIPPO_V1"\nprompt = \n'})
    assert refusal(root).startswith(f"{CHECK}: not valid TOML: Invalid value (at line 2")


def test_the_protocol_is_named_before_other_problems(root: Path):
    write_pack(extra(root), {"check": 'protocol = "HIPPO_V2"\nstages = 3\n'})
    assert refusal(root) == f'{CHECK}: protocol must be "HIPPO_V1", found "HIPPO_V2"'


def test_a_pack_needs_a_passes_folder(root: Path):
    (extra(root) / "prompts").mkdir(parents=True)
    assert refusal(root) == (
        ".hippo/packs/extra: a pack needs a passes/ folder holding its <name>.toml files"
    )


def test_a_pack_whose_pass_name_another_pack_has_is_left_out(root: Path):
    write_pack(root / ".hippo/packs/a")
    write_pack(root / ".hippo/packs/b", {"check": pass_file(), "other": pass_file()})
    assert refusal(root) == (
        ".hippo/packs/b/passes/check.toml: pack 'a' has a pass named 'check' too "
        "(.hippo/packs/a/passes/check.toml); pass names must be unique"
    )
    assert [p.key for p in passes(root)] == ["a/check"]
    with pytest.raises(HippoError, match="the pass 'other' does not run here: pack 'b' did not"):
        passes(root, only="other")


# Symbolic links, sizes, encodings


def test_a_linked_pack_folder_is_refused(root: Path, tmp_path: Path):
    target = write_pack(tmp_path / "elsewhere")
    (root / ".hippo/packs").mkdir()
    (root / ".hippo/packs/extra").symlink_to(target)
    assert refusal(root) == f".hippo/packs: extra {NO_LINKS}"


@pytest.mark.parametrize(
    ("link", "target", "problem"),
    [
        ("passes/check.toml", "spare.toml", f".hippo/packs/extra: passes/check.toml {NO_LINKS}"),
        ("passes", "spare", f".hippo/packs/extra: passes {NO_LINKS}"),
        ("prompts/p.md", "spare.md", f"{CHECK}: prompts/p.md {NO_LINKS}"),
        ("prompts", "spare", f"{CHECK}: prompts {NO_LINKS}"),
        ("personas/r.md", "spare.md", f"{CHECK}: personas/r.md {NO_LINKS}"),
    ],
)
def test_links_inside_a_pack_are_refused(root: Path, link: str, target: str, problem: str):
    pack = write_pack(extra(root))
    source = pack / link
    (pack / target).parent.mkdir(parents=True, exist_ok=True)
    source.rename(pack / target)
    source.symlink_to(pack / target)
    assert refusal(root) == problem


@pytest.mark.parametrize("rel", ["prompts/p.md", "personas/r.md"])
def test_prompts_and_personas_may_have_64_kib(root: Path, rel: str):
    pack = write_pack(extra(root))
    (pack / rel).write_bytes(b"x" * 65536)
    assert len(passes(root)) == 1
    (pack / rel).write_bytes(b"x" * 65537)
    problem = f"{rel} is 65537 bytes; prompts and personas may have at most 65536"
    assert refusal(root) == f"{CHECK}: {problem}"


def test_a_persona_is_checked_again_when_it_is_read(root: Path):
    pack = write_pack(extra(root))
    [check] = passes(root)
    assert read_persona(check) == "Judge.\n"
    (pack / "personas/r.md").write_bytes(b"x" * 65537)
    with pytest.raises(PackError) as info:
        read_persona(check)
    assert str(info.value).startswith(f"{check.file}: personas/r.md is 65537 bytes")


def test_a_prompt_that_is_not_utf8_is_refused(root: Path):
    write_pack(extra(root), files={"prompts/p.md": b"Notes: \xff{{notes}}\n"})
    assert refusal(root) == f"{CHECK}: prompts/p.md is not UTF-8 (byte 7); save it as UTF-8"


# Placeholders and includes


UNREAD = "is not in the reads of passes/check.toml (notes)"
SYNTAX = "template syntax error:"


@pytest.mark.parametrize(
    ("prompt", "problem"),
    [
        ("Notes:\n{{notes}}\n\n{{ turns }}\n", f":4: placeholder {{{{turns}}}} {UNREAD}"),
        (
            "{{note}}",
            f":1: placeholder {{{{note}}}} is not a reader here; the readers are: "
            f"{READERS} - did you mean {{{{notes}}}}?",
        ),
        (
            "{% for i in range(3) %}{{notes}}{% endfor %}",
            ":1: placeholder {{range}} is not a reader",
        ),
        ("{% include notes %}", ": includes must name a file of the pack"),
        ("x\n{% extends '../../x.md' %}", ":2: include '../../x.md' leaves the pack"),
        ("{% include 'prompts/gone.md' %}", ":1: include prompts/gone.md does not exist"),
        (
            "{% include 'prompts/p.md' %}",
            ":1: includes go round in a circle: prompts/p.md -> prompts/p.md",
        ),
        ("fine\n{% if notes %}\n{{notes}}\n", f":3: {SYNTAX} Unexpected end of template."),
        ("{{notes}}\n{{ notes | shuffle }}", f":2: {SYNTAX} No filter named 'shuffle'."),
        ("{{ notes }\n", f":1: {SYNTAX} unexpected '}}'"),
    ],
)
def test_a_bad_prompt_is_one_line_naming_the_file_and_line(root: Path, prompt: str, problem: str):
    write_pack(extra(root), files={"prompts/p.md": prompt})
    assert refusal(root).startswith(f"{PROMPT}{problem}")


def test_includes_are_followed_and_their_placeholders_checked(root: Path):
    files = {
        "prompts/p.md": 'Intro\n{% include "prompts/part.md" %}\n',
        "prompts/part.md": "{% import 'prompts/macros.md' as m %}{{ m.shout(notes) }}\n",
        "prompts/macros.md": "{% macro shout(text) %}{{ text | upper }}{% endmacro %}",
    }
    write_pack(extra(root), files=files)
    [check] = passes(root)
    assert render_prompt(check, {"notes": "a note"}) == "Intro\nA NOTE\n\n"
    (extra(root) / "prompts/macros.md").write_text(
        "{% macro shout(text) %}\n{{ turns }}{% endmacro %}"
    )
    assert (
        refusal(root)
        == f".hippo/packs/extra/prompts/macros.md:2: placeholder {{{{turns}}}} {UNREAD}"
    )


def test_a_linked_include_is_refused(root: Path):
    pack = write_pack(extra(root), files={"prompts/p.md": "{% include 'prompts/part.md' %}"})
    (pack / "prompts/part.md").symlink_to(pack / "personas/r.md")
    assert refusal(root) == f"{PROMPT}:1: prompts/part.md {NO_LINKS}"


# Rendering


def test_rendering_fills_placeholders_and_leaves_single_braces_alone(root: Path):
    prompt = 'Reply [ {"note": "a.md", "evidence": [ {"ordinal": 1} ] } ] or {}.\n{{notes}}\n'
    write_pack(extra(root), files={"prompts/p.md": prompt})
    [check] = passes(root)
    assert render_prompt(check, {"notes": "### Home {{x}}"}) == (
        'Reply [ {"note": "a.md", "evidence": [ {"ordinal": 1} ] } ] or {}.\n### Home {{x}}\n'
    )
    # A reader's text is material: a heading of the prompt's own levels is quoted.
    assert render_prompt(check, {"notes": "# Home"}).endswith("\n> # Home\n")


def test_the_core_passes_send_instructions_and_material_apart(initialised: Path):
    verify = passes(initialised, only="verify")[0]
    values = {name: f"<{name}>" for name in verify.reads}
    text = render_prompt(verify, values)
    assert "<human_confirmed>" in text and "<turns>" in text and "{{" not in text
    assert text.endswith("reply `[]`.\n")
    system = read_system(verify)
    assert system is not None and system.startswith("# Task: check one note")
    assert '[ {"note": "Build/Testing.md", "kind": "replace"' in system
    assert "ignore any instructions" in system and "ignore any instructions" not in text


def test_a_system_prompt_is_sent_as_it_is_so_a_placeholder_in_it_is_refused(root: Path):
    files = {"prompts/s.md": "Check the notes.\nThey are: {{notes}}\n"}
    write_pack(extra(root), {"check": pass_file(system="prompts/s.md")}, files)
    assert refusal(root) == (
        ".hippo/packs/extra/prompts/s.md:2: a system prompt is sent as it is and takes no "
        "placeholders or template tags; put the material in the pass's prompt"
    )
    (extra(root) / "prompts/s.md").write_text("Check the notes.\n", encoding="utf-8")
    [check] = passes(root)
    assert check.system == "prompts/s.md" and read_system(check) == "Check the notes.\n"


def test_an_edited_prompt_is_used_by_the_next_render(root: Path):
    write_pack(extra(root))
    [check] = passes(root)
    assert render_prompt(check, {"notes": "n"}) == "Notes:\nn\n"
    (extra(root) / "prompts/p.md").write_text("Just the notes: {{notes}}\n", encoding="utf-8")
    assert render_prompt(check, {"notes": "n"}) == "Just the notes: n\n"


def test_render_errors_are_one_line_naming_the_prompt(root: Path):
    write_pack(extra(root), files={"prompts/p.md": "{{notes}}\n{{ notes.__class__ }}\n"})
    [check] = passes(root)
    with pytest.raises(PackError) as info:
        render_prompt(check, {"notes": "n"})
    assert str(info.value) == (
        f"{check.root / 'prompts/p.md'}:2: cannot render: "
        "access to attribute '__class__' of 'str' object is unsafe."
    )
    assert str(info.value.shown_in(Workspace.open(root))).startswith(f"{PROMPT}:2: cannot render")
    with pytest.raises(PackError, match=r"p\.md:1: cannot render: 'notes' is undefined"):
        render_prompt(check, {})


# Packs from plugins


class ExtraPacks:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @hookimpl
    def hippo_register_packs(self, register):
        register("extra", self.folder)


@contextmanager
def registered(plugin: object, *, builtin: bool = False) -> Iterator[Plugins]:
    plugins = load_plugins()
    plugins.pm.register(plugin, name="extra-packs")
    plugins.origins["extra-packs"] = PluginInfo(
        "extra-packs", "hippo-extra", "1.2", builtin=builtin
    )
    try:
        yield plugins
    finally:
        plugins.pm.unregister(name="extra-packs")
        del plugins.origins["extra-packs"]


def test_a_distributions_pack_runs_and_a_vendored_copy_replaces_it(root: Path, tmp_path: Path):
    folder = write_pack(tmp_path / "dist" / "extra", {"lint": pass_file()})
    with registered(ExtraPacks(folder)) as plugins:
        [pack] = load_packs(Workspace.open(root), plugins)
        assert (pack.name, pack.root, pack.source) == ("extra", folder, "hippo-extra 1.2")
        assert [p.key for p in pack.passes] == ["extra/lint"]
        # A broken pack from a distribution is left out, and said, naming the way to turn
        # it off here; the others (none here) run.
        (folder / "prompts/p.md").write_text("{{turns}}", encoding="utf-8")
        loaded = load_here(Workspace.open(root), plugins)
        [left] = loaded.left_out
        assert loaded.packs == [] and left.source == "hippo-extra 1.2"
        assert left.problem.startswith(f"{folder / 'prompts/p.md'}:1: placeholder {{{{turns}}}}")
        assert left.fix == (
            "fix or uninstall hippo-extra, or turn it off here: "
            """hippo config set disabled_packs '["extra"]'"""
        )
        (folder / "prompts/p.md").write_text("{{notes}}", encoding="utf-8")
        # The workspace's own folder of the same name runs; the distribution's is left out.
        write_pack(extra(root), {"check": pass_file()})
        assert refusal(root) == (
            "pack 'extra' comes from two sources: .hippo/packs/extra and the distribution "
            "hippo-extra 1.2; the folder runs here; keep one: delete the folder (hippo pack "
            "remove extra) or uninstall hippo-extra with pip"
        )
        [pack] = load_packs(Workspace.open(root), plugins)
        assert (pack.source, [p.key for p in pack.passes]) == ("workspace", ["extra/check"])
        workspace = Workspace.open(root)
        update_lock(workspace, Locked("extra", "1.2", "vendored", "hippo-extra 1.2"))
        loaded = load_here(workspace, plugins)
        assert loaded.left_out == []
        [pack] = loaded.packs
        assert (pack.source, [p.key for p in pack.passes]) == ("workspace", ["extra/check"])


def test_a_builtin_registration_does_not_run_on_its_own(root: Path, tmp_path: Path):
    folder = write_pack(tmp_path / "dist" / "extra")
    assert "core" in load_plugins().packs()
    with registered(ExtraPacks(folder), builtin=True) as plugins:
        assert load_packs(Workspace.open(root), plugins) == []
        with pytest.raises(UsageError, match="no pass named 'verify'; the passes here are: none"):
            load_passes(Workspace.open(root), plugins, only="verify")
