"""Notes: discovery, frontmatter, titles, links, and the linter's findings."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from hippo_core import Workspace
from hippo_core.notes.note import parse_note

from .conftest import HippoRunner, WorkspaceMaker

TODAY = dt.datetime.now(dt.UTC).date()


def lint(hippo: HippoRunner, root: Path) -> list[dict[str, object]]:
    run = hippo("notes", "lint", "--json", cwd=root)
    return json.loads(run.out)["findings"]


def codes(findings: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(f["where"], f["level"], f["code"]) for f in findings]


def test_hidden_files_and_folders_are_not_notes(make_workspace: WorkspaceMaker):
    notes = {
        "Home.md": "# Home\n[[.Secret]] [[Inside]]\n",
        ".Secret.md": "# Secret\n",
        ".hidden/Inside.md": "# Inside\n",
        "visible/Note.md": "# Note\n",
        "readme.txt": "not markdown",
    }
    workspace = Workspace.open(make_workspace("", notes))
    assert sorted(n.path for n in workspace.notes) == ["Home.md", "visible/Note.md"]
    assert workspace.notes.resolve(".Secret") is None
    assert workspace.notes.resolve("Inside") is None


def test_symbolic_links_are_not_followed(make_workspace: WorkspaceMaker, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Leak.md").write_text("# Leak\n")
    root = make_workspace()
    os.symlink(outside / "Leak.md", root / "notes" / "Leak.md")
    os.symlink(outside, root / "notes" / "linked")
    assert [n.path for n in Workspace.open(root).notes] == ["Home.md"]


def test_the_five_keys_are_read_and_others_ignored():
    note = parse_note(
        "a.md",
        b"---\n# a comment\ntype: banana\nstatus: current\nowner: me\nupdated: 2026-11-07\n"
        b"review_after: '2026-12-05'\nsources: [Sources/Register.md]\n---\n# A\n",
    )
    assert note.meta.type == "banana"
    assert note.meta.status == "current"
    assert note.meta.updated == dt.date(2026, 11, 7)
    assert note.meta.review_after == dt.date(2026, 12, 5)
    assert note.meta.sources == ("Sources/Register.md",)
    assert note.problems == ()


@pytest.mark.parametrize(
    ("text", "title", "headings", "first"),
    [
        ("# Title\n\nFirst line.\n## Sub\n", "Title", ("Title", "Sub"), "First line."),
        ("## Not a title\n#nor this\nbody\n", "name", ("Not a title",), "#nor this"),
        (
            "intro before\n# Later title\n\n### Deep\ntext\n",
            "Later title",
            ("Later title", "Deep"),
            "text",
        ),
        ("```\n# in code\n```\n# Real\nafter\n", "Real", ("Real",), "after"),
        ("---\ntype: x\n---\n\n# T #\n\n\n  spaced  \n", "T", ("T",), "spaced"),
    ],
)
def test_title_headings_and_first_body_line(text, title, headings, first):
    note = parse_note("dir/name.md", text.encode())
    assert (note.title, note.headings, note.first_line) == (title, headings, first)


LINK_NOTES = {
    "Home.md": "# Home\n",
    "X.md": "# X at the top\n",
    "sub/X.md": "# X in sub\n",
    "sub/Only.md": "# Only\n",
    "a/Twin.md": "# Twin a\n",
    "b/Twin.md": "# Twin b\n",
}


@pytest.mark.parametrize(
    ("target", "resolved"),
    [
        ("X", "X.md"),
        ("sub/X", "sub/X.md"),
        ("Only", "sub/Only.md"),
        ("Twin", None),
        ("Missing", None),
        ("sub/Only", "sub/Only.md"),
        ("other/Only", None),
        ("../../x", None),
        ("../notes/X", None),
        ("/etc/passwd", None),
        ("./X", None),
    ],
)
def test_link_resolution(make_workspace: WorkspaceMaker, target: str, resolved: str | None):
    workspace = Workspace.open(make_workspace("", LINK_NOTES))
    assert workspace.notes.resolve(target) == resolved


def test_alias_and_heading_suffixes_are_ignored():
    note = parse_note("a.md", b"[[X|the x]] [[sub/X#Part]] [[ Y # h | alias ]] [[#self]]\n")
    assert [target for target, _ in note.links] == ["X", "sub/X", "Y"]


def test_only_the_first_bar_or_hash_ends_a_link_s_target():
    note = parse_note("a.md", b"[[X#a#b]] [[Y|a|b]] [[Z|a#b]] [[W#a|b]]\n")
    assert [target for target, _ in note.links] == ["X", "Y", "Z", "W"]


@pytest.mark.parametrize("target", ["../x", "a/../../x", "./x", "a/./x", "/etc/x", "a\\x", ".."])
def test_a_link_never_resolves_outside_the_notes_whatever_says_a_note_is_there(target: str):
    """The guard in ``resolve`` itself, with a lookup that would find a note anywhere: the
    callers' lookups know only notes inside the notes folder, so they cannot show it."""
    from hippo_core.notes.links import resolve

    assert resolve(target, lambda path: True, lambda name: [name]) is None
    assert resolve("sub/x", lambda path: True, lambda name: [name]) == "sub/x.md"
    # A path names one place: missing there, it is not looked for by its file name.
    assert resolve("sub/x", lambda path: False, lambda name: [name]) is None


def test_linter_findings_words_and_levels(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    yesterday = TODAY - dt.timedelta(days=1)
    notes = {
        "Home.md": "---\ntype: topic\n---\n# Home\n[[Nowhere]] [[Today]]\n",
        "Bare.md": "# Bare\n",
        "Soon.md": "---\nupdated: soon\nreview_after: 2000-01-01T10:00:00\n---\n# Soon\n",
        "List.md": "---\n- a\n- b\n---\n# List\n",
        "Broken.md": "---\nkey: [unclosed\n---\n# Broken\n",
        "Old.md": f"---\nreview_after: {yesterday}\n---\n# Old\n",
        "Today.md": f"---\nreview_after: {TODAY}\n---\n# Today\n",
        "Sources.md": "---\nsources: Register.md\n---\n# Sources\n",
    }
    findings = lint(hippo, make_workspace("", notes))
    assert sorted(codes(findings)) == sorted(
        [
            ("notes/Bare.md", "warning", "missing frontmatter"),
            ("notes/Broken.md", "error", "invalid frontmatter"),
            ("notes/Home.md", "warning", "dangling link"),
            ("notes/List.md", "warning", "bad frontmatter"),
            ("notes/Old.md", "warning", "overdue"),
            ("notes/Soon.md", "warning", "bad frontmatter"),
            ("notes/Soon.md", "warning", "bad frontmatter"),
            ("notes/Sources.md", "warning", "bad frontmatter"),
        ]
    )
    dangling = next(f for f in findings if f["code"] == "dangling link")
    assert (dangling["detail"], dangling["line"]) == ("[[Nowhere]]", 5)


def test_text_output_and_exit_codes(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace("", {"Home.md": "# Home\n[[Gone]]\n"})
    run = hippo("notes", "lint", cwd=root)
    assert run.code == 0
    assert run.out.splitlines() == [
        "notes/Home.md:1: warning: missing frontmatter",
        "notes/Home.md:2: warning: dangling link: [[Gone]]",
        "0 errors, 2 warnings",
    ]
    (root / "notes" / "Bad.md").write_text("---\na: b: c\n---\n")
    run = hippo("notes", "lint", cwd=root)
    assert run.code == 1
    assert "notes/Bad.md:2: error: invalid frontmatter: not valid YAML" in run.out


def test_a_bad_key_is_treated_as_absent(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    notes = {"Home.md": "---\nreview_after: someday\nupdated: never\n---\n# Home\n"}
    root = make_workspace("", notes)
    assert "overdue" not in [f["code"] for f in lint(hippo, root)]
    note = next(iter(Workspace.open(root).notes))
    assert (note.meta.updated, note.meta.review_after) == (None, None)


BAD_INPUT = {
    "latin1.md": "# Café\n".encode("latin-1"),
    "binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "unclosed.md": b"---\ntype: policy\n# Title\nbody\n",
    "tabs.md": b"---\ntype:\tpolicy\n\tstatus: x\n---\n# Tabs\n",
    "huge.md": b"---\n" + b"key: " + b"x" * (1024 * 1024) + b"\n---\n# Huge\n",
    "escape.md": b"---\ntype: x\n---\n# Escape\n[[../../x]]\n",
}


def test_bad_input_gives_findings_and_changes_nothing(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace("", {"Home.md": "---\na: 1\n---\n# Home\n", **BAD_INPUT})
    before = {p: p.read_bytes() for p in (root / "notes").iterdir()}
    findings = {(f["where"], f["code"], f["detail"]) for f in lint(hippo, root)}
    assert (
        "notes/latin1.md",
        "unreadable note",
        "not UTF-8 (byte 5); save it as UTF-8",
    ) in findings
    assert ("notes/binary.md", "unreadable note", "a binary file, not Markdown") in findings
    assert (
        "notes/unclosed.md",
        "invalid frontmatter",
        "the block opened on line 1 never closes",
    ) in findings
    assert ("notes/huge.md", "invalid frontmatter", "the block is over 64 KiB") in findings
    assert ("notes/escape.md", "dangling link", "[[../../x]]") in findings
    tabs = [f for f in findings if f[0] == "notes/tabs.md"]
    assert [f[1] for f in tabs] == ["invalid frontmatter"]
    assert {p: p.read_bytes() for p in (root / "notes").iterdir()} == before
    assert hippo("context", "--task", "escape tabs", cwd=root).code == 0


def test_the_cache_sees_an_edited_note(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace("", {"Home.md": "---\na: 1\n---\n# Home\n", "A.md": "# Alpha\n\none\n"})
    assert "- Alpha: one" in hippo("context", "--task", "alpha", cwd=root).out
    note = root / "notes" / "A.md"
    note.write_text("# Alpha\n\ntwo, longer\n")
    stamp = note.stat().st_mtime - 60
    os.utime(note, (stamp, stamp))
    assert "- Alpha: two, longer" in hippo("context", "--task", "alpha", cwd=root).out
    (root / ".hippo" / "cache" / "notes.json").write_text("{not json")
    assert "- Alpha: two, longer" in hippo("context", "--task", "alpha", cwd=root).out
