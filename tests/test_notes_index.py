"""The notes index (.hippo/cache/notes.sqlite): what it serves is what the files say.

The fast path (a persistent index refreshed from stats) must give the block a from-scratch
reading of every note gives, byte for byte, whatever happened to the files in between.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hippo_core
from hippo_core import Workspace, build_context
from hippo_core.actions.hook import run_hook
from hippo_core.builtins.context_parts import task_words
from hippo_core.builtins.lint import today
from hippo_core.notes.index import FORMAT, SWEEP
from hippo_core.notes.links import LinkResolver
from hippo_core.notes.note import Note, parse_note
from hippo_core.notes.text import singular
from hippo_core.plugins.manager import load_plugins

from .conftest import HippoRunner, WorkspaceMaker, write_notes

WORDS = ["deploy", "refund", "queue", "ledger", "cache", "retry", "lock", "index", "rotate"]
FOLDERS = ["", "a/", "a/b/", "c/", ".hidden/"]


def reference_block(root: Path, task: str) -> str:
    """The relevant notes and linter counts as the spec defines them, from every file."""
    notes_dir = root / "notes"
    notes: dict[str, Note] = {}
    for folder, dirs, files in os.walk(notes_dir):
        dirs[:] = [
            d for d in dirs if not d.startswith(".") and not os.path.islink(Path(folder) / d)
        ]
        for name in files:
            path = Path(folder) / name
            if name.startswith(".") or not name.endswith(".md") or path.is_symlink():
                continue
            rel = path.relative_to(notes_dir).as_posix()
            notes[rel] = parse_note(rel, path.read_bytes())
    words = list(dict.fromkeys(singular(word) for word in task_words(task)))
    scored = []
    for note in notes.values():
        vocabulary = {singular(word) for word in note.vocabulary}
        score = sum(1 for word in words if word in vocabulary)
        if score:
            updated = note.meta.updated.toordinal() if note.meta.updated else 0
            scored.append((-score, -updated, note.path, note))
    best = [entry[-1] for entry in sorted(scored)][:5]
    text = ""
    if best:
        lines = [f"- {note.title}: {note.first_line}".rstrip() for note in best]
        text = "relevant:\n" + "".join(f"{line}\n" for line in lines)
    resolver = LinkResolver(notes)
    dangling = sum(1 for n in notes.values() for t, _ in n.links if resolver.resolve(t) is None)
    overdue = sum(
        1 for n in notes.values() if n.meta.review_after and n.meta.review_after < today()
    )
    return text + f"linter: overdue={overdue} dangling={dangling}\n"


def served_block(root: Path, task: str) -> str:
    """The same two parts as hippo builds them, through the index."""
    block = build_context(Workspace.open(root), task=task, plugins=load_plugins(hot=True))
    return block.text.split("Welcome.\n", 1)[1]


def note_text(title: str, heading: str, links: list[str], updated: str, review: str) -> str:
    front = f"---\nupdated: {updated}\nreview_after: {review}\n---\n" if updated else ""
    body = " ".join(f"[[{link}]]" for link in links)
    return f"{front}# {title}\n\nAbout {title.lower()}.\n\n## {heading}\n\n{body}\n"


names = st.sampled_from([f"{w.title()} {v}" for w in WORDS[:5] for v in ("notes", "log")])
notes_text = st.builds(
    note_text,
    title=st.sampled_from([f"{a} {b}" for a in WORDS for b in WORDS[:3]]),
    heading=st.sampled_from(WORDS),
    links=st.lists(
        st.sampled_from([*(n for n in WORDS), "Refund notes", "a/Cache log"]), max_size=3
    ),
    updated=st.sampled_from(["", "2026-01-02", "2026-05-05", "2026-13-01"]),
    review=st.sampled_from(["2020-01-01", "2099-01-01", "soon"]),
)
steps = st.lists(
    st.tuples(
        st.sampled_from(
            ["write"] * 4 + ["edit in place"] * 2 + ["delete", "rename", "drop folder"]
        ),
        st.sampled_from(FOLDERS),
        names,
        notes_text,
        st.booleans(),  # afterwards, date every file and folder a minute back
    ),
    min_size=1,
    max_size=12,
)


def apply(root: Path, step: tuple[str, str, str, str, bool], clock: list[float]) -> None:
    action, folder, name, text, age = step
    notes = root / "notes"
    path = notes / folder / f"{name}.md"
    existing = sorted(p for p in notes.rglob("*.md") if p.name != "Home.md")
    if action == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    elif action == "edit in place" and existing:
        target = existing[len(text) % len(existing)]
        with target.open("r+", encoding="utf-8") as handle:  # the folder's time stays
            handle.truncate(0)
            handle.write(text)
    elif action == "delete" and existing:
        existing[len(text) % len(existing)].unlink()
    elif action == "rename" and existing:
        path.parent.mkdir(parents=True, exist_ok=True)
        existing[len(text) % len(existing)].rename(path)
    elif action == "drop folder" and folder and (notes / folder).is_dir():
        for child in sorted((notes / folder).rglob("*"), reverse=True):
            child.unlink() if child.is_file() else child.rmdir()
        (notes / folder).rmdir()
    if age:  # dated in the past, a second apart: the stamps decide, not the racy rule
        recent = time.time() - 3600
        for entry in sorted(notes.rglob("*")):
            # A folder keeps its time unless an entry in it came or went just now, as
            # folders do: an edit in place leaves it alone.
            if entry.is_file() or entry.stat().st_mtime > recent:
                clock[0] += 1
                os.utime(entry, (clock[0], clock[0]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, task=st.sampled_from(["fix the refund queue", "rotate cache", "index lock"]))
def test_the_index_serves_what_a_reading_from_scratch_gives(steps, task: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / ".hippo").mkdir(parents=True)
        write_notes(root, {"Home.md": "# Home\n\nWelcome.\n"})
        clock = [time.time() - 100_000]
        served_block(root, task)  # an index exists before the first change
        for step in steps:
            apply(root, step, clock)
            assert served_block(root, task) == reference_block(root, task), step
        (root / ".hippo" / "cache" / "notes.sqlite").unlink()
        assert served_block(root, task) == reference_block(root, task)  # a fresh build agrees


def reference_bm25(root: Path, task: str) -> str:
    """The relevant part under ``relevance = "bm25"``, from every file: BM25 over each
    note's fields (title, headings, body; each field's own idf and mean length), ties to
    the body's score, then updated, then the path."""
    import math

    from hippo_core.notes.fields import FIELDS
    from hippo_core.notes.terms import note_terms, terms

    notes_dir = root / "notes"
    counted = {}
    for path in notes_dir.rglob("*.md"):
        rel = path.relative_to(notes_dir).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        note = parse_note(rel, path.read_bytes())
        found = note_terms(note, path.read_bytes())
        counted[rel] = (note, (found.title, found.headings, found.body))
    count = len(counted)
    means = [
        max(sum(sum(c[f].values()) for _, c in counted.values()) / max(count, 1), 1.0)
        for f in range(len(FIELDS))
    ]
    asked = sorted(set(terms(task)))
    scored = []
    for rel, (note, fields) in counted.items():
        score = body = 0.0
        for term in asked:
            for f, field in enumerate(FIELDS):
                tf = fields[f][term]
                if not tf:
                    continue
                df = sum(1 for _, c in counted.values() if c[f][term])
                idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
                length = sum(fields[f].values())
                norm = field.k1 * (1 - field.b + field.b * length / means[f])
                part = field.weight * idf * tf / (tf + norm)
                score += part
                body += part if field is FIELDS[-1] else 0.0
        if score:
            updated = note.meta.updated.toordinal() if note.meta.updated else 0
            scored.append((-round(score, 9), -round(body, 9), -updated, rel, note))
    best = [entry[-1] for entry in sorted(scored, key=lambda e: e[:4])][:5]
    lines = [f"- {note.title}: {note.first_line}".rstrip() for note in best]
    return "relevant:\n" + "".join(f"{line}\n" for line in lines) if best else ""


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, task=st.sampled_from(["fix the refund queues", "rotated caches", "locks"]))
def test_bm25_from_the_index_is_bm25_from_scratch(steps, task: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / ".hippo").mkdir(parents=True)
        (root / ".hippo" / "settings.toml").write_text('relevance = "bm25"\n')
        write_notes(root, {"Home.md": "# Home\n\nWelcome.\n"})
        clock = [time.time() - 100_000]
        served_block(root, task)
        for step in steps:
            apply(root, step, clock)
            served = served_block(root, task).split("linter:")[0]
            assert served == reference_bm25(root, task), step


def looking_block(root: Path, task: str, looks: int) -> str:
    """The two parts as a call an agent waits for builds them: stat-ing ``looks`` notes."""
    workspace = Workspace.open(root)
    workspace.looks = looks
    block = build_context(workspace, task=task, plugins=load_plugins(hot=True))
    return block.text.split("Welcome.\n", 1)[1]


def shown_lines(block: str) -> set[str]:
    return {line for line in block.splitlines() if line.startswith("- ")}


def current_lines(root: Path) -> set[str]:
    """The line each note of the folder would be shown with, read from its file now."""
    lines = set()
    notes_dir = root / "notes"
    for path in notes_dir.rglob("*.md"):
        rel = path.relative_to(notes_dir).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        note = parse_note(rel, path.read_bytes())
        lines.add(f"- {note.title}: {note.first_line}".rstrip())
    return lines


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, task=st.sampled_from(["fix the refund queue", "rotate cache", "index lock"]))
def test_a_call_that_looks_at_a_few_notes_shows_none_stale_and_in_turn_sees_all(
    steps, task: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / ".hippo").mkdir(parents=True)
        write_notes(root, {"Home.md": "# Home\n\nWelcome.\n"})
        clock = [time.time() - 100_000]
        looking_block(root, task, 2)
        for step in steps:
            apply(root, step, clock)
            # What it shows of a note is what the note says now, whatever it ranked by.
            assert shown_lines(looking_block(root, task, 2)) <= current_lines(root), step
        # A run of such calls looks at every note in turn: then the block is the reference.
        for _ in range(len(current_lines(root)) // 2 + 1):
            looking_block(root, task, 2)
        assert looking_block(root, task, 2) == reference_block(root, task)


def test_a_note_added_is_seen_at_once_and_an_edit_in_place_within_a_run_of_calls(
    make_workspace: WorkspaceMaker,
) -> None:
    notes = {**HOME, **{f"deep/n{i:02}.md": f"# Note {i}\n\nNothing.\n" for i in range(38)}}
    root = make_workspace("", notes)
    past = time.time() - 600
    for folder in (root / "notes", root / "notes" / "deep"):
        os.utime(folder, (past, past))
    assert "Zebra" not in looking_block(root, "zebra", 1)
    # A note added: its folder changed, so it is listed again and read at once.
    (root / "notes" / "deep" / "Zebra.md").write_text("# Zebra\n\nStriped.\n")
    assert "- Zebra: Striped." in looking_block(root, "zebra", 1)
    os.utime(root / "notes" / "deep" / "Zebra.md", (past, past))
    os.utime(root / "notes" / "deep", (past, past))
    looking_block(root, "zebra", 1)  # the folder's time as it is now: not listed again
    # A note edited in place, its folder as it was: seen once a call looks at it.
    note = root / "notes" / "deep" / "n24.md"
    note.write_text("# Zebra crossing\n\nMoved here.\n")
    os.utime(note, (past + 1, past + 1))
    calls = 1
    while "- Zebra crossing: Moved here." not in looking_block(root, "zebra", 1):
        calls += 1
        # Each looks at a tenth of the 41 notes (five), more than the one asked.
        assert calls <= SWEEP, "a run of ten calls did not look at the edited note"
    assert calls > 1  # the first call did not look at it


def test_a_note_about_to_be_shown_is_looked_at_first(make_workspace: WorkspaceMaker) -> None:
    notes = {**HOME, **{f"n{i}.md": f"# Note {i}\n\nNothing.\n" for i in range(9)}}
    root = make_workspace("", notes)
    past = time.time() - 600
    os.utime(root / "notes", (past, past))
    assert "- Refunds: The queue pauses." in looking_block(root, "refunds", 1)
    # Edited in place: the ranking may still read the index as it was, but the line shown
    # is the note's as it is now.
    note = root / "notes" / "Refunds.md"
    note.write_text("# Refunds\n\nThe queue runs again.\n")
    os.utime(note, (past + 1, past + 1))
    assert "- Refunds: The queue runs again." in looking_block(root, "refunds", 1)


HOME = {"Home.md": "# Home\n\nWelcome.\n", "Refunds.md": "# Refunds\n\nThe queue pauses.\n"}


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(b"not a database at all"),
        lambda p: p.write_bytes(p.read_bytes()[:1500]),
        lambda p: p.write_bytes(b""),
        lambda p: p.unlink(),
    ],
    ids=["garbage", "truncated", "empty", "missing"],
)
def test_a_damaged_index_is_rebuilt_in_silence(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, damage
) -> None:
    root = make_workspace("", HOME)
    first = hippo("context", "--task", "refunds", cwd=root)
    index = root / ".hippo" / "cache" / "notes.sqlite"
    damage(index)
    again = hippo("context", "--task", "refunds", cwd=root)
    assert (again.code, again.out, again.err) == (0, first.out, "")
    assert "- Refunds: The queue pauses." in again.out
    check = sqlite3.connect(index).execute("PRAGMA integrity_check").fetchone()
    assert check == ("ok",)


def test_an_index_of_another_version_or_folder_is_rebuilt(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    root = make_workspace("", HOME)
    hippo("context", cwd=root)
    index = root / ".hippo" / "cache" / "notes.sqlite"
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE meta SET value = '0.0.1' WHERE key = 'hippo'")
        conn.execute("UPDATE notes SET title = 'Stale' WHERE path = 'Refunds.md'")
    assert "- Refunds: The queue pauses." in hippo("context", "--task", "refunds", cwd=root).out
    (root / "other").mkdir()
    (root / "other" / "Refunds.md").write_text("# Refunds\n\nElsewhere.\n")
    (root / "other" / "Home.md").write_text("# Home\n\nWelcome.\n")
    hippo("config", "set", "notes_dir", "other", cwd=root)
    assert "- Refunds: Elsewhere." in hippo("context", "--task", "refunds", cwd=root).out


@pytest.mark.parametrize("old", ["7", "8"])
def test_an_index_of_a_format_before_fields_is_rebuilt_by_the_next_hook(
    make_workspace: WorkspaceMaker, old: str
) -> None:
    # Formats 7 and 8 (the session log left unranked, before fields met it) kept one weighted
    # count per term; a hook finding one ranks by fields at once, with no `hippo ingest
    # --full` or anything else run by hand.
    notes = {
        **HOME,
        "Storage.md": "# Cache\n\nWhat it keeps.\n",
        **{f"n{i}.md": f"# Note {i}\n\nThe cache fills, the cache empties.\n" for i in range(6)},
    }
    root = make_workspace('relevance = "bm25"\n', notes)
    index = root / ".hippo" / "cache" / "notes.sqlite"
    index.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(index) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute(
            "CREATE TABLE terms (term TEXT, path TEXT, tf INTEGER NOT NULL, body INTEGER NOT "
            "NULL, length INTEGER NOT NULL, updated INTEGER NOT NULL, PRIMARY KEY (term, path))"
        )
        wanted = {"format": old, "hippo": hippo_core.__version__, "terms": "kept"}
        wanted["notes_dir"] = str(root / "notes")
        conn.executemany("INSERT INTO meta VALUES (?, ?)", wanted.items())
    payload = json.dumps({"session_id": "s1", "cwd": str(root), "prompt": "the cache"})
    printed = io.StringIO()
    run_hook("prompt", "claude", payload, printed)  # what `hippo hook prompt` runs
    assert "relevant:\n- Cache: What it keeps.\n" in printed.getvalue(), printed.getvalue()
    with sqlite3.connect(index) as conn:  # rebuilt where it is kept, not held in memory
        assert dict(conn.execute("SELECT key, value FROM meta"))["format"] == FORMAT
        columns = {row[1] for row in conn.execute("PRAGMA table_info(terms)")}
        assert {"title", "headings", "body"} <= columns
    assert not Workspace.open(root).notes_index.in_memory
    assert not (Path(os.environ["HIPPO_HOME"]) / "hooks.log").exists()


def test_the_stems_an_index_keeps_are_pinned_with_its_format() -> None:
    # An index with terms keeps every note's stems, and only FORMAT and hippo's version tell
    # an old one from a new one: a stem rule or common word changed without a FORMAT bump
    # would rank the notes read before by stale stems until each note changed.
    from hippo_core.notes.terms import COMMON, stem
    from hippo_core.notes.text import singular

    pinned = {
        "retries": "retry",
        "retried": "retry",
        "addresses": "address",
        "classes": "class",
        "statuses": "status",
        "analysis": "analysis",
        "caching": "cach",
        "caches": "cach",
        "handled": "handl",
        "running": "run",
        "falling": "fall",
        "bus": "bus",
        "v2": "v2",
    }
    # ... and the headings rule's keys, the words table's: a word and its plural meet.
    keys = {
        "complaints": "complaint",
        "entries": "entry",
        "caches": "cach",
        "cache": "cach",
        "classes": "class",
        "status": "status",
        "analysis": "analysis",
        "handled": "handled",
        "uses": "use",
        "box": "box",
        "boxes": "box",
        "v2s": "v2s",
    }
    stems = {word: stem(word) for word in pinned}
    singulars = {word: singular(word) for word in keys}
    assert (FORMAT, len(COMMON), stems, singulars) == ("9", 121, pinned, keys), (
        "the stems changed: bump FORMAT in hippo_core/notes/index.py, then pin both here"
    )


def test_a_note_changed_within_its_mtime_tick_is_never_served_stale(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    root = make_workspace("", HOME)
    note = root / "notes" / "Refunds.md"
    note.write_text("# Refunds\n\nversion one.\n")
    stat = note.stat()
    assert "- Refunds: version one." in hippo("context", "--task", "refunds", cwd=root).out
    # Same size, same inode, same mtime to the nanosecond: only the racy rule can tell.
    with note.open("r+") as handle:
        handle.write("# Refunds\n\nversion two.\n")
    os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert note.stat().st_size == stat.st_size and note.stat().st_ino == stat.st_ino
    assert "- Refunds: version two." in hippo("context", "--task", "refunds", cwd=root).out


def test_an_edit_in_place_is_seen_though_its_folder_did_not_change(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    root = make_workspace("", {**HOME, "deep/Cache.md": "# Cache\n\nOne.\n"})
    folder = root / "notes" / "deep"
    past = time.time() - 600
    os.utime(folder, (past, past))
    assert "- Cache: One." in hippo("context", "--task", "cache", cwd=root).out
    folder_time = folder.stat().st_mtime_ns
    (folder / "Cache.md").write_text("# Cache\n\nTwo, longer.\n")  # written in place
    os.utime(folder / "Cache.md", (past + 1, past + 1))
    assert folder.stat().st_mtime_ns == folder_time
    assert "- Cache: Two, longer." in hippo("context", "--task", "cache", cwd=root).out


def test_a_note_given_back_its_old_time_is_seen_by_size_or_inode(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """As after ``touch -r``, an archive's restore or ``rsync -t``: the time alone would lie."""
    root = make_workspace("", HOME)
    note = root / "notes" / "Refunds.md"
    past = time.time() - 600
    for entry in (note, note.parent):  # out of the racy window: the stamps decide
        os.utime(entry, (past, past))
    assert "- Refunds: The queue pauses." in hippo("context", "--task", "refunds", cwd=root).out
    old = note.stat()
    note.write_text("# Refunds\n\nThe queue pauses at night.\n")  # in place, longer
    os.utime(note, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert "- Refunds: The queue pauses at night." in (
        hippo("context", "--task", "refunds", cwd=root).out
    )
    # Another file of the same size put in its place, dated like the note it replaced.
    stamp = note.stat()
    other = root / "notes" / ".Refunds.md.new"
    other.write_text("# Refunds\n\nThe queue resumes at dawn.\n")
    assert other.stat().st_size == stamp.st_size
    os.utime(other, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    other.replace(note)
    os.utime(note.parent, (past, past))  # and the folder as it was: only the inode tells
    assert note.stat().st_ino != stamp.st_ino
    assert "- Refunds: The queue resumes at dawn." in (
        hippo("context", "--task", "refunds", cwd=root).out
    )


def test_dangling_links_follow_the_notes_they_name(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    notes = {**HOME, "Links.md": "# Links\n\n[[Ledger]] [[deep/Ledger]] [[Gone]]\n"}
    root = make_workspace("", notes)

    def counts() -> str:
        return hippo("context", cwd=root).out.splitlines()[-1]

    assert counts() == "linter: overdue=0 dangling=3"
    write_notes(root, {"deep/Ledger.md": "# Ledger\n"})
    assert counts() == "linter: overdue=0 dangling=1"  # by name, and by path
    write_notes(root, {"other/Ledger.md": "# Ledger\n"})
    assert counts() == "linter: overdue=0 dangling=2"  # two notes named Ledger: ambiguous
    (root / "notes" / "deep" / "Ledger.md").rename(root / "notes" / "Gone.md")
    assert counts() == "linter: overdue=0 dangling=1"  # one Ledger again; Gone came; deep/ left


def test_a_workspace_that_cannot_keep_an_index_still_gets_its_block(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    root = make_workspace("", HOME)
    expected = hippo("context", "--task", "refunds", cwd=root).out
    cache = root / ".hippo" / "cache"
    for child in cache.iterdir():
        child.unlink()
    cache.rmdir()
    cache.write_text("a file where the cache folder would be")  # nothing can be written
    run = hippo("context", "--task", "refunds", cwd=root)
    assert (run.code, run.out) == (0, expected)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its permissions")
def test_a_read_only_workspace_gets_its_block(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    root = make_workspace("", HOME)
    expected = hippo("context", "--task", "refunds", cwd=root).out
    for folder in (root / ".hippo" / "cache", root / ".hippo", root / "notes"):
        folder.chmod(0o555)
    try:
        run = hippo("context", "--task", "refunds", cwd=root)
    finally:
        for folder in (root / ".hippo" / "cache", root / ".hippo", root / "notes"):
            folder.chmod(0o755)
    assert (run.code, run.out) == (0, expected)


def test_two_hippos_at_once_leave_a_sound_index(make_workspace: WorkspaceMaker) -> None:
    notes = {
        **HOME,
        **{f"n{i}/Topic {i}.md": f"# Topic {i} refund\n\nNote {i}.\n" for i in range(40)},
    }
    root = make_workspace("", notes)
    env = {**os.environ}
    command = [sys.executable, "-m", "hippo_core", "context", "--task", "refund topic"]
    runs = [
        subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(6)
    ]
    # Notes change while they read.
    for i in range(0, 40, 4):
        (root / "notes" / f"n{i}" / f"Topic {i}.md").write_text(f"# Topic {i} refund\n\nNew {i}.\n")
    outputs = [run.communicate() for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    assert all(err == b"" for _, err in outputs)
    index = root / ".hippo" / "cache" / "notes.sqlite"
    assert sqlite3.connect(index).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    final = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=True)
    assert final.stdout.split("Welcome.\n", 1)[1] == reference_block(root, "refund topic")
