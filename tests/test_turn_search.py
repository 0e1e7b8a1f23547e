"""verify's turn search: the turns that touched the note first, then those that say its
title, a heading or a source word for word, then those that share its uncommon words; the
headings searched without their markup, and each turn's prompt saying how it was found."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hippo_core.dream.readers import turn_block
from hippo_core.dream.turns import TurnIndex
from hippo_core.files.home import index_path
from hippo_core.index.ingest import ingest
from hippo_core.notes.terms import clean, stem, terms
from hippo_core.workspace.folder import Workspace
from tests.claude_factory import ClaudeSession
from tests.conftest import WorkspaceMaker

NOTE = """---
type: guide
---
# Error handling { #errors }

## Handling *retries* in `fetch` { #handling-retries .anchor }

## Timeouts ##
"""


def session(home: Path, cwd: Path, hours: float, prompt: str, edit: str = "") -> str:
    made = ClaudeSession(home, str(cwd), start=datetime.now(UTC) - timedelta(hours=hours))
    made.prompt(prompt)
    if edit:
        made.tool("Edit", file_path=edit, old_string="a", new_string="b")
    made.answer("done").write()
    return made.session


def test_file_hits_come_first_then_phrases_then_words(
    make_workspace: WorkspaceMaker, claude_home: Path
):
    root = make_workspace("", {"Errors.md": NOTE})
    words = session(claude_home, root, 5, "fetch keeps failing on the first try")
    phrase = session(claude_home, root, 4, "read the error handling guide please")
    edited = session(claude_home, root, 3, "tidy up", edit=str(root / "notes" / "Errors.md"))
    session(claude_home, root, 2, "nothing to do with it")
    ingest(extra_dirs={"claude-code": (str(claude_home),)}, defaults=False)
    workspace = Workspace.open(root)
    [note] = [n for n in workspace.notes if n.path == "Errors.md"]
    index = TurnIndex.open(index_path())
    assert index is not None
    found = index.mentioning(
        note,
        workspace.notes_dir / "Errors.md",
        datetime.now(UTC) - timedelta(days=1),
        datetime.now(UTC),
        frozenset({words, phrase, edited}),
    )
    assert [(t.session, t.match) for t in found] == [
        (edited, "file"),
        (phrase, "phrase"),
        (words, "words"),
    ]
    assert "; found by the note's file (read, edited or cited))" in turn_block(found[0])
    assert "found by words of the note's title, headings, file name and body" in turn_block(
        found[2]
    )


def test_words_of_the_body_find_a_turn_in_any_of_their_forms(
    make_workspace: WorkspaceMaker, claude_home: Path
):
    body = "# Fetching\n\nThe client retries a call that timed out, with backoff.\n"
    root = make_workspace("", {"Fetching.md": body, "Other.md": "# Other\n\nDeploys.\n"})
    retried = session(claude_home, root, 3, "the upload retried three times")
    session(claude_home, root, 2, "nothing to do with it")
    ingest(extra_dirs={"claude-code": (str(claude_home),)}, defaults=False)
    workspace = Workspace.open(root)
    [note] = [n for n in workspace.notes if n.path == "Fetching.md"]
    telling = workspace.terms_index.telling("Fetching.md", 20)
    assert "retry" in telling and "the" not in telling  # stemmed, common words out
    index = TurnIndex.open(index_path())
    assert index is not None
    window = (datetime.now(UTC) - timedelta(days=1), datetime.now(UTC))
    everyone = frozenset({retried})
    asked = index.mentioning(note, root / "notes" / "Fetching.md", *window, everyone)
    assert asked == []  # the title and headings alone do not say "retried"
    asked = index.mentioning(
        note, root / "notes" / "Fetching.md", *window, everyone, body_terms=telling
    )
    assert [(t.session, t.match) for t in asked] == [(retried, "words")]


def test_headings_lose_their_markup_before_they_are_searched():
    assert clean("Error handling { #errors }") == "Error handling"
    assert clean("Handling *retries* in `fetch` { #handling-retries .anchor }") == (
        "Handling *retries* in `fetch`"
    )
    assert clean("Timeouts ##") == "Timeouts"
    assert clean('Options <Badge text="new" />') == "Options"
    assert clean("See [the guide](guide.md#intro)") == "See the guide"
    assert clean("{ #only-markup }") == ""


def test_terms_are_stemmed_and_leave_common_words_out():
    forms = [
        ("retry", "retries", "retried"),
        ("handle", "handles", "handled", "handling"),
        ("cache", "cached", "caching", "caches"),
        ("run", "runs", "running"),
        ("test", "tests", "tested", "testing"),
    ]
    for words in forms:
        assert len({stem(word) for word in words}) == 1, words
    assert stem("status") == "status" and stem("class") == "class" and stem("falling") == "fall"
    assert stem("v2") == "v2" and stem("2026") == "2026"
    assert terms("Why were the Refunds retried? It is not in the notes") == [
        "refund",
        "retry",
        "not",  # the stem of "notes"; the word "not" itself is common and left out
    ]


def test_hippo_eval_verify_measures_the_search_on_the_workspaces_sessions(
    make_workspace: WorkspaceMaker, claude_home: Path, hippo
):
    import json

    root = make_workspace("", {"Errors.md": NOTE, "Other.md": "# Other\n\nNothing.\n"})
    assert hippo("eval", "verify", cwd=root).err.startswith("error: no transcript index yet")
    note = str(root / "notes" / "Errors.md")
    session(claude_home, root, 5, "the error handling guide needs retries", edit=note)
    session(claude_home, root, 4, "tidy", edit=note)
    session(claude_home, root, 3, "read the error handling guide please")
    assert hippo("ingest", cwd=root).code == 0
    found = json.loads(hippo("eval", "verify", "--json", cwd=root).out)
    assert (found["notes"], found["notes_touched"], found["truth"]) == (2, 1, 2)
    assert found["recall"] == 1.0
    # The words alone find the first edit (it names the guide) but not "tidy".
    assert found["text_recall"] == 0.5 and found["text_precision"] == 0.5
    assert found["nothing_found"] == 0
    shown = hippo("eval", "verify", cwd=root).out
    assert "recall       1.00" in shown and "text recall  0.50" in shown


def test_hippo_eval_verify_with_no_sessions_says_so(make_workspace: WorkspaceMaker, hippo):
    root = make_workspace()
    assert hippo("ingest", cwd=root).code == 0
    run = hippo("eval", "verify", cwd=root)
    assert run.code == 0 and "nothing to measure yet" in run.out


def test_hippo_eval_context_ranks_the_notes_sessions_touched(
    make_workspace: WorkspaceMaker, claude_home: Path, hippo
):
    import json

    notes = {
        "Errors.md": NOTE,
        "Deploy.md": "# Deploy\n\nShip from main after the retries pass.\n",
        "Other.md": "# Other\n\nNothing.\n",
    }
    root = make_workspace("", notes)
    made = ClaudeSession(claude_home, str(root))
    made.prompt("the deploy keeps failing on retries")
    made.tool("Read", file_path=str(root / "notes" / "Deploy.md"))
    made.answer("ok").write()
    other = ClaudeSession(claude_home, str(root)).prompt("unrelated work").answer("ok")
    other.write()
    assert hippo("ingest", cwd=root).code == 0
    found = json.loads(hippo("eval", "context", "--json", cwd=root).out)
    assert found["tasks"] == 1 and found["notes"] == 3
    rankings = found["rankings"]
    assert list(rankings) == [
        "relevance = headings",
        "relevance = bm25",
        "relevance = history",
        "bm25 (baseline)",
    ]
    # "deploy" titles the note: every ranking puts it first.
    assert all(rates == {"recall_at_5": 1.0, "mrr": 1.0} for rates in rankings.values())
    assert found["relevance"] == "headings"
    shown = hippo("eval", "context", cwd=root).out
    assert "1 tasks (sessions that read or edited notes), 3 notes" in shown
    assert "relevance = headings       1.00   1.00  (this workspace)" in shown
    assert "relevance = bm25           1.00   1.00\n" in shown


def test_hippo_eval_context_tells_the_settings_apart(
    make_workspace: WorkspaceMaker, claude_home: Path, hippo
):
    """A task that says none of the title's words: only bm25 finds the note, by its body."""
    import json

    notes = {
        "Payments.md": "# Payments\n\nRefunds are retried nightly by the ledger worker.\n",
        "Other.md": "# Other\n\nNothing.\n",
    }
    root = make_workspace('relevance = "bm25"\n', notes)
    made = ClaudeSession(claude_home, str(root)).prompt("why was the refund retried twice")
    made.tool("Read", file_path=str(root / "notes" / "Payments.md"))
    made.answer("ok").write()
    assert hippo("ingest", cwd=root).code == 0
    found = json.loads(hippo("eval", "context", "--json", cwd=root).out)
    rankings = found["rankings"]
    assert rankings["relevance = headings"] == {"recall_at_5": 0.0, "mrr": 0.0}
    assert rankings["relevance = bm25"] == {"recall_at_5": 1.0, "mrr": 1.0}
    assert (
        "relevance = bm25           1.00   1.00  (this workspace)"
        in hippo("eval", "context", cwd=root).out
    )


def test_notes_of_common_words_and_bare_markup_still_get_figures(
    make_workspace: WorkspaceMaker, claude_home: Path, hippo
):
    import json

    notes = {"The.md": "# The and of\n\n## { #only-markup }\n\n## `` ** ``\n", "x.md": ""}
    root = make_workspace("", notes)
    for what in ("verify", "context"):
        run = hippo("eval", what, cwd=root)
        assert (run.code, run.err) == (
            1,
            "error: no transcript index yet: run `hippo ingest` first\n",
        )
    session(claude_home, root, 2, "tidy the notes", edit=str(root / "notes" / "The.md"))
    assert hippo("ingest", cwd=root).code == 0
    found = json.loads(hippo("eval", "verify", "--json", cwd=root).out)
    assert found["recall"] == 1.0 and found["text_recall"] == 0.0 and found["nothing_found"] == 1
    context = hippo("eval", "context", cwd=root)
    assert context.code == 0 and "relevance = bm25" in context.out
