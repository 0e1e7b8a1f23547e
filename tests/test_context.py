"""`hippo context`: the parts, their order and exact lines, ranking, and the budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hippo_core import Workspace
from hippo_core.builtins.context_parts import task_words
from hippo_core.context.build import build_context

from .conftest import HippoRunner, WorkspaceMaker

HOME = """---
type: topic
---
# Home

We run ledger. Read [[Deploy]] first.

## Index

- [[Deploy]]
"""

NOTES = {
    "Home.md": HOME,
    "Deploy.md": "---\nupdated: 2026-01-02\n---\n# Deploy\n\nShip with `make deploy`.\n",
    "Runbooks/Database migrations.md": (
        "---\nupdated: 2026-03-01\n---\n# Database migrations\n\n## Flaky test\n\n"
        "Migrations run once per release.\n"
    ),
    "Testing.md": "---\nupdated: 2026-02-01\n---\n# Testing\n\n## Flaky tests\n\nRetry nothing.\n",
}


def test_parts_come_in_order_with_exact_lines(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace('required_notes = ["Deploy.md", "Testing.md"]\n', NOTES)
    sessions = root / ".hippo" / "sessions"
    sessions.mkdir()
    record = {"id": "abc-1", "tool": "claude-code", "started": "2026-11-30T09:00:00Z"}
    (sessions / "abc-1.json").write_text(json.dumps(record))

    run = hippo("context", "--task", "fix the flaky migration test", "--session", "abc-1", cwd=root)

    assert run.code == 0, run.err
    assert run.out == (
        "# Home\n\nWe run ledger. Read [[Deploy]] first.\n"
        "required: Deploy.md\n"
        "required: Testing.md\n"
        "session: abc-1 claude-code 2026-11-30T09:00:00Z\n"
        "relevant:\n"
        "- Database migrations: Migrations run once per release.\n"
        "linter: overdue=0 dangling=0\n"
    )
    assert run.err == ""


def test_a_note_the_block_gives_already_is_not_listed_as_relevant(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    """The entry note and the required ones are in the block already: an agent that got
    the entry text twice (issue 36) gets it once, and the five relevant lines go to other
    notes."""
    notes = {
        "Home.md": "# Home\n\nThe deploy notes are below.\n\n## Deploy\n\nSee [[Deploy]].\n",
        "Deploy.md": "# Deploy\n\nDeploy with make deploy.\n",
        "Deploy checklist.md": "# Deploy checklist\n\nTag, then deploy.\n",
    }
    for relevance in ("headings", "bm25", "history"):
        root = make_workspace(f'relevance = "{relevance}"\nrequired_notes = ["Deploy.md"]\n', notes)
        out = hippo("context", "--task", "deploy home", cwd=root).out
        assert out.count("The deploy notes are below.") == 1, (relevance, out)
        assert "- Home:" not in out and "- Deploy:" not in out, (relevance, out)
        assert "- Deploy checklist: Tag, then deploy." in out, (relevance, out)


def test_without_task_or_session_there_is_no_relevant_part_or_session_line(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    run = hippo("context", cwd=make_workspace("", NOTES))
    assert run.out.splitlines()[-1] == "linter: overdue=0 dangling=0"
    assert "relevant:" not in run.out
    assert "session:" not in run.out


def test_task_words_are_runs_of_three_or_more_letters_or_digits():
    assert task_words("fix a db bug") == ["fix", "bug"]
    assert task_words("Fix FIX fix 42 420 schön_über") == ["fix", "420", "schön", "über"]


def test_ranking_scores_title_and_heading_words_then_updated_then_path(
    make_workspace: WorkspaceMaker,
):
    notes = {
        "Home.md": HOME,
        "b.md": "---\nupdated: 2026-05-01\n---\n# Deploy\n\nb\n",
        "a.md": "---\nupdated: 2026-05-01\n---\n# Deploy\n\na\n",
        "newer.md": "---\nupdated: 2026-06-01\n---\n# Deploy\n\nnewer\n",
        "undated.md": "# Deploy\n\nundated\n",
        "bad-date.md": "---\nupdated: soon\n---\n# Deploy\n\nbad date\n",
        "two.md": "---\nupdated: 2020-01-01\n---\n# Deploy\n## Rollback\n\ntwo words\n",
        "body-only.md": "# Other\n\ndeploy rollback in the body does not count\n",
    }
    block = build_context(Workspace.open(make_workspace("", notes)), task="deploy rollback")
    relevant = block.text.split("relevant:\n")[1].splitlines()[:5]
    assert relevant == [
        "- Deploy: two words",
        "- Deploy: newer",
        "- Deploy: a",
        "- Deploy: b",
        "- Deploy: bad date",
    ]


def test_a_task_word_matches_a_heading_word_in_its_plural_or_singular(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    # The spec's rule gives a point for each task word "found in" a title or heading: a
    # word's plural is the same word found, so "complaint" finds "Complaints"; other forms
    # are other words ("handled" is not "handling"), and a word and its plural count once.
    notes = {
        "Home.md": HOME,
        "Complaints.md": "# Complaints\n\nHow we answer them.\n",
        "Policy.md": "# Policy\n\n## Refund entries\n\nOne a day.\n",
        "Handling.md": "# Handling\n\nNot a plural.\n",
        "Both.md": "# Refund\n\n## Complaint\n\nBoth words.\n",
    }
    root = make_workspace("", notes)

    def shown(task: str) -> list[str]:
        out = hippo("context", "--task", task, cwd=root).out
        return (
            out.split("relevant:\n")[1].split("linter:")[0].splitlines()
            if "relevant:" in out
            else []
        )

    assert shown("a complaint") == ["- Refund: Both words.", "- Complaints: How we answer them."]
    assert shown("complaints") == shown("a complaint")
    assert shown("the refund entry") == ["- Policy: One a day.", "- Refund: Both words."]
    assert shown("handled") == []
    # "refund" and "refunds" are one word: Both scores 2 (refund, complaint), Policy 1.
    assert shown("refund refunds complaint") == [
        "- Refund: Both words.",
        "- Complaints: How we answer them.",
        "- Policy: One a day.",
    ]


def test_bm25_ranks_by_the_whole_note_in_any_form_of_its_words(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    notes = {
        "Home.md": HOME,
        "Payments.md": "# Payments\n\nRefunds are retried nightly by the worker.\n",
        "Retry policy.md": "# Retry policy\n\nA retry waits a minute.\n",
        "Other.md": "# Other\n\nThe rest of the refund story is elsewhere.\n",
    }
    root = make_workspace("", notes)
    task = ("context", "--task", "why was the refund retried nightly")
    assert "relevant:" not in hippo(*task, cwd=root).out  # no title or heading says so
    assert hippo("config", "set", "relevance", "bm25", cwd=root).code == 0
    relevant = hippo(*task, cwd=root).out.split("relevant:\n")[1].splitlines()[:3]
    assert relevant == [
        "- Payments: Refunds are retried nightly by the worker.",  # all three words
        "- Retry policy: A retry waits a minute.",  # retry, in its title and file name
        "- Other: The rest of the refund story is elsewhere.",
    ]
    (root / "notes" / "Other.md").write_text("# Other\n\nNothing here.\n")
    assert "- Other:" not in hippo(*task, cwd=root).out  # the index follows the edit
    assert hippo("config", "set", "relevance", "headings", cwd=root).code == 0
    assert "relevant:" not in hippo(*task, cwd=root).out


def test_bm25_ties_go_to_updated_then_path(make_workspace: WorkspaceMaker):
    notes = {
        "Home.md": HOME,
        # Alike but for their dates and paths: the same score, the same body.
        "y/a.md": "---\nupdated: 2026-01-01\n---\n# Zebra\n\nA zebra.\n",
        "x/a.md": "---\nupdated: 2026-01-01\n---\n# Zebra\n\nA zebra.\n",
        "n/a.md": "---\nupdated: 2026-06-01\n---\n# Zebra\n\nA zebra.\n",
        "u/a.md": "# Zebra\n\nA zebra.\n",
    }
    root = make_workspace('relevance = "bm25"\n', notes)
    workspace = Workspace.open(root)
    assert workspace.notes_index.bm25_paths(["zebra"], 5) == [
        "n/a.md",
        "x/a.md",
        "y/a.md",
        "u/a.md",
    ]


def test_bm25_notes_tied_across_the_cut_are_all_in_the_running(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    # Twelve notes BM25 scores alike, so the fifth place's score is shared by all twelve: the
    # five shown are the most recently updated, though their paths come last.
    notes = {"Home.md": HOME} | {
        f"n{i:02}.md": f"---\nupdated: 2026-01-{i + 1:02}\n---\n# Zebra\n\nLine {i:02}.\n"
        for i in range(12)
    }
    root = make_workspace('relevance = "bm25"\n', notes)
    run = hippo("context", "--task", "zebra", cwd=root)
    assert run.code == 0, run.err
    assert run.out.split("relevant:\n")[1].splitlines()[:5] == [
        f"- Zebra: Line {i:02}." for i in (11, 10, 9, 8, 7)
    ]
    assert Workspace.open(root).notes_index.bm25_paths(["zebra"], 5) == [
        f"n{i:02}.md" for i in (11, 10, 9, 8, 7)
    ]


def test_at_most_five_relevant_notes(make_workspace: WorkspaceMaker):
    notes = {"Home.md": HOME} | {f"n{i}.md": f"# Deploy {i}\n\nline {i}\n" for i in range(8)}
    block = build_context(Workspace.open(make_workspace("", notes)), task="deploy")
    assert block.text.count("\n- Deploy") == 5


def test_optional_parts_are_left_out_whole_and_named_on_stderr(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace("", NOTES)
    full = hippo("context", "--task", "flaky", cwd=root).out
    relevant = (
        "relevant:\n- Database migrations: Migrations run once per release.\n"
        "- Testing: Retry nothing.\n"
    )
    assert relevant in full
    linter = len(b"linter: overdue=0 dangling=0\n")
    budget = len(full.encode()) - linter - 1  # the relevant part no longer fits, the linter does
    run = hippo("context", "--task", "flaky", "--budget", str(budget), cwd=root)
    assert run.code == 0
    assert run.err == f"omitted: relevant notes ({len(relevant.encode())})\n"
    assert run.out == full.replace(relevant, "")
    tight = len(full.encode()) - len(relevant.encode()) - 1  # neither fits
    run = hippo("context", "--task", "flaky", "--budget", str(tight), cwd=root)
    assert run.err.splitlines() == [
        f"omitted: relevant notes ({len(relevant.encode())})",
        f"omitted: linter counts ({linter})",
    ]


def test_a_part_that_fits_the_budget_exactly_goes_in(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace("", NOTES)
    full = hippo("context", "--task", "flaky", cwd=root).out
    linter = "linter: overdue=0 dangling=0\n"
    assert full.endswith(linter)
    size = len(full.encode())

    exact = hippo("context", "--task", "flaky", "--budget", str(size), cwd=root)
    assert (exact.code, exact.out, exact.err) == (0, full, "")

    short = hippo("context", "--task", "flaky", "--budget", str(size - 1), cwd=root)
    assert short.code == 0
    assert short.out == full.removesuffix(linter)
    assert short.err == f"omitted: linter counts ({len(linter.encode())})\n"

    # The required part alone, to the byte: every optional part is left out, and nothing fails.
    required = len(full.split("relevant:\n")[0].encode())
    alone = hippo("context", "--task", "flaky", "--budget", str(required), cwd=root)
    assert alone.code == 0, alone.err
    assert alone.out == full.split("relevant:\n")[0]
    over = hippo("context", "--task", "flaky", "--budget", str(required - 1), cwd=root)
    assert (over.code, over.out) == (1, "")
    assert over.err == f"error: context over budget: {required} > {required - 1}\n"


def test_required_parts_over_budget_fail_with_the_exact_message(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace("", {"Home.md": "# Home\n\n" + "x" * 60 + "\n"})
    run = hippo("context", "--budget", "10", cwd=root)
    assert run.code == 1
    assert run.out == ""
    assert run.err == "error: context over budget: 69 > 10\n"


def test_budget_comes_from_settings(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace("budget_bytes = 12\n", {"Home.md": "# Home\n\n" + "x" * 60 + "\n"})
    assert hippo("context", cwd=root).err == "error: context over budget: 69 > 12\n"


def test_budget_must_be_positive(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace()
    for budget in ("0", "-5"):
        run = hippo("context", "--budget", budget, cwd=root)
        assert run.code == 2
        assert run.err == f"error: --budget must be a positive number of bytes, not {budget}\n"
    # One byte is a budget: the block does not fit it, which is another error.
    assert hippo("context", "--budget", "1", cwd=root).err.startswith(
        "error: context over budget: "
    )


def test_a_block_says_its_budget_its_parts_and_what_left_it_out(make_workspace: WorkspaceMaker):
    """``ContextBlock`` and ``OverBudget`` are public: a plugin or a script reads their
    fields, not the message."""
    from hippo_core import ContextBlock, OverBudget

    workspace = Workspace.open(make_workspace("", NOTES))
    full = build_context(workspace, task="flaky")
    names = [part.name for part in full.parts]
    assert "relevant notes" in names and "linter counts" in names
    assert "".join(part.text for part in full.parts) == full.text
    block = build_context(workspace, task="flaky", budget=full.size - 1)
    assert isinstance(block, ContextBlock)
    assert (block.budget, block.size) == (
        full.size - 1,
        full.size - len(b"linter: overdue=0 dangling=0\n"),
    )
    assert [part.name for part in block.parts] == names[:-1]
    with pytest.raises(OverBudget) as over:
        build_context(workspace, task="flaky", budget=10)
    required = sum(part.size for part in full.parts if part.required)
    assert (over.value.required, over.value.budget) == (required, 10)


def test_entry_section_is_text_before_the_first_level_two_heading(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    home = (
        "---\na: 1\n---\n# Home\n\n```\n## not a heading in code\n```\n### kept\n## Cut\nhidden\n"
    )
    run = hippo("context", cwd=make_workspace("", {"Home.md": home}))
    assert run.out.startswith("# Home\n\n```\n## not a heading in code\n```\n### kept\nlinter:")


def test_missing_entry_note_is_one_clear_error(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace('entry_note = "Start.md"\n')
    run = hippo("context", cwd=root)
    assert run.code == 1
    assert run.err.count("\n") == 1
    assert "entry note notes/Start.md does not exist" in run.err


def test_unknown_session_is_one_clear_error(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    run = hippo("context", "--session", "nope", cwd=make_workspace())
    assert run.code == 1
    assert run.err == "error: session 'nope' not found: there is no .hippo/sessions/nope.json\n"


def test_linter_counts_overdue_notes_and_dangling_links(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    notes = {
        "Home.md": "# Home\n\n[[Gone]] and [[Also gone]] and [[Here]].\n",
        "Here.md": "---\nreview_after: 2000-01-01\n---\n# Here\n",
    }
    run = hippo("context", cwd=make_workspace("", notes))
    assert run.out.endswith("linter: overdue=1 dangling=2\n")


def test_context_writes_no_file_holding_the_block(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace("", NOTES)
    run = hippo("context", "--task", "flaky migration", cwd=root)
    relevant_line = "- Database migrations: Migrations run once per release."
    assert relevant_line in run.out
    for path in root.rglob("*"):
        if path.is_file():
            assert relevant_line.encode() not in path.read_bytes(), path


def test_not_in_a_workspace(tmp_path: Path, hippo: HippoRunner):
    run = hippo("context", cwd=tmp_path)
    assert run.code == 1
    assert run.err.startswith("error: no hippo workspace at ")
    assert "run `hippo init`" in run.err
