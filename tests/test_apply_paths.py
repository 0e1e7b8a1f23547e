"""The applier writes only below ``notes_dir``, whatever checked the proposal before it.

A dream's validators refuse a note outside the notes folder before a reviewer sees it; the
applier (``settle``, which ``hippo review`` and plugins call too) checks again, so that a
plugin's proposal, a proposal edited by hand while it waited, or a folder swapped for a
link meanwhile cannot send a write out of the notes.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace as replace_field
from pathlib import Path

import pytest

from hippo_core import Evidence, Proposal, TurnText, Verdict, Workspace, load_plugins
from hippo_core.dream.apply import Lineage, Settled, settle
from hippo_core.notes.edit import note_digest
from tests.conftest import WorkspaceMaker
from tests.dream_scene import TESTING, Scene, replace

OLD = "Run the tests with `make test` from the repository root."
NEW = "Run the tests with `uv run pytest -q` from the repository root."
CREATED = "---\ntype: decision\n---\n# Run the tests with uv\n\nThe Makefile is gone.\n"
CHANGES = {"replace": (OLD, NEW), "append": ("", "\nUse uv.\n"), "create": ("", CREATED)}


def files(top: Path) -> dict[Path, bytes]:
    """Every file below ``top``, with its bytes (links followed nowhere)."""
    found = {}
    for folder, _, names in os.walk(top):
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink():
                found[path] = path.read_bytes()
    return found


def proposal(note: str, kind: str) -> Proposal:
    old, new = CHANGES[kind]
    return Proposal(
        id=f"20261130T061502123456Z-{kind[:4]}",
        pass_key="core/verify",
        note=note,
        kind=kind,
        old=old,
        new=new,
        reason="The Makefile is gone.",
        evidence=(Evidence("s-1", 0),),
    )


@pytest.mark.parametrize("kind", ["replace", "append", "create"])
@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("../outside.md", "note '../outside.md' is outside the notes folder"),
        ("Runbooks/../../outside.md", "note 'Runbooks/../../outside.md' is outside the notes"),
        ("ABSOLUTE", "is outside the notes folder"),
        ("linked/outside.md", "note 'linked/outside.md' leads outside the notes folder through"),
    ],
)
def test_settle_refuses_a_note_outside_the_notes_folder(
    make_workspace: WorkspaceMaker, tmp_path: Path, kind: str, where: str, expected: str
):
    root = make_workspace("", {"Home.md": "# Home\n\nWelcome.\n", "Testing.md": TESTING})
    away = tmp_path / "away"
    away.mkdir()
    (root / "notes" / "Runbooks").mkdir()
    (root / "notes" / "linked").symlink_to(away)
    note = str(away / "outside.md") if where == "ABSOLUTE" else where
    target = (root / "notes" / note) if where != "linked/outside.md" else away / "outside.md"
    if kind != "create":  # a note that the change would apply to, as the prompt saw it
        target.write_text(TESTING)
    workspace, plugins = Workspace.open(root), load_plugins()
    before = files(tmp_path)

    settled = settle(
        workspace,
        plugins,
        proposal(note, kind),
        Verdict("model", "confirm", "The turn shows uv runs the tests."),
        prompt_digest=note_digest(TESTING.encode()),
        persona="",
        invocation={"command": "a test"},
    )

    assert settled.state == "not applied"
    assert expected in settled.detail and "\n" not in settled.detail
    receipt = root / ".hippo" / "receipts" / f"{settled.proposal.id}.json"
    assert settled.receipt == receipt
    record = json.loads(receipt.read_text())
    assert (record["state"], record["detail"], record["note"]) == (
        "not applied",
        settled.detail,
        note,
    )
    assert (record["before"], record["after"], record["snapshot"]) == (None, None, "")
    # The receipt is the one file written, the note outside is as it was.
    assert files(tmp_path) == before | {receipt: receipt.read_bytes()}
    assert target.read_text() == TESTING if kind != "create" else not target.exists()


def test_a_rejected_note_outside_is_recorded_and_never_read(
    make_workspace: WorkspaceMaker, tmp_path: Path
):
    root = make_workspace()
    (root / "outside.md").write_text(TESTING)
    settled = settle(
        Workspace.open(root),
        load_plugins(),
        proposal("../outside.md", "replace"),
        Verdict("model", "reject", "The turn only plans the switch."),
        prompt_digest=note_digest(TESTING.encode()),
        persona="",
        invocation={"command": "a test"},
    )
    assert (settled.state, settled.record["before"]) == ("rejected", None)
    assert (root / "outside.md").read_text() == TESTING


def queued(scene: Scene, note: str = "Testing.md") -> str:
    """A dream that leaves its one proposal, a replace in ``note``, waiting for a person."""
    verify = scene.root / ".hippo/packs/core/passes/verify.toml"
    verify.write_text(verify.read_text() + 'review = "queue"\n')
    scene.transcript()
    scene.proposer_replies(replace(note=note))
    assert scene.dream().code == 0
    [proposal] = [path.stem for path in scene.files("proposals")]
    assert not scene.files("receipts")
    return proposal


def test_a_folder_made_a_link_out_while_the_proposal_waited_is_not_written_through(
    scene: Scene, tmp_path: Path
):
    runbooks = scene.root / "notes" / "Runbooks"
    runbooks.mkdir()
    scene.note.rename(runbooks / "Testing.md")
    waiting = queued(scene, "Runbooks/Testing.md")
    # The folder moves out of the notes, and a link to it takes its place.
    away = tmp_path / "away"
    runbooks.rename(away)
    runbooks.symlink_to(away)

    run = scene.hippo("review", waiting, "--confirm", cwd=scene.root)

    assert (run.code, run.err) == (0, "")
    assert run.out.startswith("not applied: Runbooks/Testing.md; receipt .hippo/receipts/")
    detail = "note 'Runbooks/Testing.md' leads outside the notes folder through a symbolic link"
    assert (away / "Testing.md").read_text() == TESTING
    receipt = json.loads((scene.root / ".hippo/receipts" / f"{waiting}.json").read_text())
    assert (receipt["state"], receipt["detail"]) == ("not applied", detail)
    assert not (scene.root / ".hippo/snapshots").exists()


def test_a_proposal_edited_by_hand_to_name_a_file_outside_is_not_applied(scene: Scene):
    waiting = queued(scene)
    (scene.root / "README.md").write_text(TESTING)  # what the prompt's digest says
    path = scene.root / ".hippo/proposals" / f"{waiting}.json"
    path.write_text(path.read_text().replace('"note": "Testing.md"', '"note": "../README.md"'))

    run = scene.hippo("review", waiting, "--confirm", cwd=scene.root)

    assert (run.code, run.err) == (0, "")
    assert run.out.startswith("not applied: ../README.md; receipt .hippo/receipts/")
    assert (scene.root / "README.md").read_text() == TESTING
    assert scene.note.read_text() == TESTING
    receipt = json.loads((scene.root / ".hippo/receipts" / f"{waiting}.json").read_text())
    assert (receipt["state"], receipt["detail"], receipt["before"]) == (
        "not applied",
        "note '../README.md' is outside the notes folder",
        None,
    )


@pytest.mark.parametrize(
    "bad_id", ["../../x", "../receipts/y", "/tmp/z", ".hidden", "a/b", "a..b", "", "é"]
)
def test_settle_refuses_a_proposal_whose_id_is_not_a_record_id(
    make_workspace: WorkspaceMaker, tmp_path: Path, bad_id: str
):
    """The id names the receipt's file (and the snapshot's folder): ``../../x`` placed a
    receipt outside .hippo/receipts/."""
    from dataclasses import replace as changed

    from hippo_core import HippoError

    root = make_workspace("", {"Testing.md": TESTING})
    workspace, plugins = Workspace.open(root), load_plugins()
    before = files(tmp_path)
    with pytest.raises(HippoError, match="is not a record id"):
        settle(
            workspace,
            plugins,
            changed(proposal("Testing.md", "replace"), id=bad_id),
            Verdict("model", "confirm", ""),
            prompt_digest=note_digest(TESTING.encode()),
            persona="",
            invocation={"command": "a test"},
        )
    assert files(tmp_path) == before  # nothing written, anywhere


@pytest.mark.parametrize("good_id", ["20261130T061502123456Z-a1b2", "d20261130T0615Z-a1b2-op0"])
def test_kernel_and_sleep_pack_ids_are_record_ids(good_id: str):
    from hippo_core.dream.receipts import is_record_id

    assert is_record_id(good_id)


def test_a_proposal_whose_id_was_edited_by_hand_is_refused_and_nothing_written(scene: Scene):
    waiting = queued(scene)
    path = scene.root / ".hippo/proposals" / f"{waiting}.json"
    record = json.loads(path.read_text())
    for edited in ("../../x", "20261130T061502123456Z-beef"):
        path.write_text(json.dumps({**record, "id": edited}))
        before = files(scene.root.parent)

        run = scene.hippo("review", waiting, "--confirm", cwd=scene.root)

        assert run.code == 1 and run.out == ""
        shown = f".hippo/proposals/{waiting}.json"
        if edited.startswith(".."):
            assert run.err == (
                f"error: {shown}: id '../../x' is not a record id (a letter or digit, then "
                "letters, digits, '_', '.' or '-', no '..')\n"
            )
        else:
            assert run.err == f"error: {shown}: its id {edited!r} is not its file's name\n"
        assert files(scene.root.parent) == before  # no receipt, no review, no note change
        assert not (scene.root / "x.json").exists() and not (scene.root.parent / "x.json").exists()


def test_review_of_an_id_that_is_a_path_is_no_proposal(scene: Scene):
    queued(scene)
    (scene.root / ".hippo" / "elsewhere.json").write_text('{"id": "x"}')
    run = scene.hippo("review", "../elsewhere", cwd=scene.root)
    assert run.code == 1
    assert run.err.startswith("error: no proposal '../elsewhere' in .hippo/proposals/")


class Listener:
    """A ``hippo_event`` plugin noting each event with the receipt's state and the note's
    text at that moment, as a plugin listening to the applier sees them."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, dict, str | None, str | None]] = []

    from hippo_core import hookimpl

    @hookimpl
    def hippo_event(self, workspace, event) -> None:  # type: ignore[no-untyped-def]
        receipt = Path(event.data["receipt"])
        state = json.loads(receipt.read_text())["state"] if receipt.exists() else None
        note = workspace.notes_dir / event.data["note"]
        text = note.read_text() if note.is_file() else None
        self.heard.append((event.name, event.data, state, text))


@pytest.mark.parametrize("kind", ["replace", "append", "create"])
def test_the_receipt_says_applying_before_the_note_is_written(
    make_workspace: WorkspaceMaker, kind: str
):
    """The receipt says ``applying`` before the note changes, so that a crash there leaves a
    receipt the next run settles; the listeners hear ``applying`` then ``applied``, each
    with the proposal, the note and the receipt."""
    root = make_workspace("", {"Home.md": "# Home\n\nWelcome.\n", "Testing.md": TESTING})
    note = "Decisions/uv.md" if kind == "create" else "Testing.md"
    workspace, plugins = Workspace.open(root), load_plugins()
    listener = Listener()
    plugins.pm.register(listener, name="listener")
    settled = settle(
        workspace,
        plugins,
        proposal(note, kind),
        Verdict("model", "confirm", "The turn shows uv runs the tests."),
        prompt_digest=note_digest(TESTING.encode()),
        persona="",
        invocation={"command": "a test"},
    )
    assert settled.state == "applied"
    before = None if kind == "create" else TESTING
    after = (root / "notes" / note).read_text()
    data = {"proposal": settled.proposal.id, "note": note, "receipt": str(settled.receipt)}
    assert listener.heard == [
        ("applying", data, "applying", before),
        ("applied", data, "applied", after),
    ]
    assert after != before


def test_a_change_not_applied_is_heard(scene: Scene):
    """A confirmed change the note no longer takes: ``not-applied``, before its receipt."""
    scene.note.write_text(TESTING.replace("make test", "tox"))
    listener = Listener()
    plugins = load_plugins()
    plugins.pm.register(listener, name="listener")
    settled = settle(
        Workspace.open(scene.root),
        plugins,
        proposal("Testing.md", "replace"),
        Verdict("model", "confirm", "The turn shows uv runs the tests."),
        prompt_digest=note_digest(TESTING.encode()),
        persona="",
        invocation={"command": "a test"},
    )
    assert settled.state == "note changed"
    [(name, data, state, _)] = listener.heard
    assert (name, data["note"], state) == ("not-applied", "Testing.md", None)


class Intruder(Listener):
    """A listener that writes ``text`` at the note's path when it hears ``applying``: the
    note a person or another process creates while a new one is being written."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    from hippo_core import hookimpl

    @hookimpl
    def hippo_event(self, workspace, event) -> None:  # type: ignore[no-untyped-def]
        super().hippo_event(workspace, event)
        if event.name == "applying":
            path = workspace.notes_dir / event.data["note"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.text)


def settled_with(
    root: Path,
    listener: Listener,
    change: Proposal,
    verdict: Verdict | None = None,
    lineage: Lineage | None = None,
    evidence: tuple[TurnText, ...] = (),
) -> Settled:
    plugins = load_plugins()
    plugins.pm.register(listener, name="listener")
    try:
        return settle(
            Workspace.open(root),
            plugins,
            change,
            verdict or Verdict("model", "confirm", "The turn shows uv runs the tests."),
            prompt_digest=note_digest(TESTING.encode()),
            persona="",
            invocation={"command": "a test"},
            lineage=lineage,
            evidence=evidence,
        )
    finally:
        plugins.pm.unregister(name="listener")


EDITED = TESTING.replace(OLD, "Run the tests with `tox`.")


@pytest.mark.parametrize(
    ("case", "note", "kind", "state", "detail"),
    [
        ("outside", "../Testing.md", "replace", "not applied", "note '../Testing.md' is outside"),
        ("deleted", "Testing.md", "replace", "note changed", "the note was deleted after"),
        ("edited", "Testing.md", "replace", "note changed", "the note was edited after the"),
        ("lineage", "Testing.md", "replace", "note changed", "the note was edited after the"),
        (
            "rebased",
            "Testing.md",
            "replace",
            "carried",
            "an earlier change of this run to the note left it where this one no longer applies "
            "(old text not found; new quotes no evidence turn word for word",
        ),
        ("no old", "Testing.md", "replace", "not applied", "the change no longer applies: old"),
        ("exists", "Decisions/uv.md", "create", "note changed", "a note was created at this "),
        ("link", "Decisions/Sub/uv.md", "create", "not applied", "the change no longer applies:"),
        ("file", "Decisions/Sub/uv.md", "create", "not applied", "the change no longer applies:"),
    ],
)
def test_each_confirmed_change_that_does_not_land_is_heard_once_before_its_receipt(
    make_workspace: WorkspaceMaker, case: str, note: str, kind: str, state: str, detail: str
):
    """``not-applied``, with the proposal, the note and the receipt, whatever stopped the
    change: the plugins listening (the dream log, triggers) hear every one."""
    root = make_workspace("", {"Testing.md": TESTING, "Decisions/Other.md": "# Other\n"})
    notes, lineage = root / "notes", Lineage()
    if case == "outside":
        (root / "Testing.md").write_text(TESTING)
    elif case == "deleted":
        (notes / "Testing.md").unlink()
    elif case in ("edited", "lineage", "rebased"):
        (notes / "Testing.md").write_text(EDITED)
        if case == "rebased":  # the run's own earlier change took the text this one replaces
            lineage.wrote("Testing.md", note_digest(TESTING.encode()), note_digest(EDITED.encode()))
    elif case == "exists":
        (notes / note).write_text("# Someone else's\n")
    elif case == "link":  # a folder on the way, made a link (inside the notes) after the checks
        (notes / "Decisions" / "Sub").symlink_to(notes / "Decisions")
    elif case == "file":
        (notes / "Decisions" / "Sub").write_text("a file\n")
    change = proposal(note, kind)
    if case == "no old":
        change = replace_field(change, old="Run the tests with `nmake`.")
    listener = Listener()
    before = files(root / "notes")

    settled = settled_with(root, listener, change, lineage=None if case == "edited" else lineage)

    assert (settled.state, settled.detail[: len(detail)]) == (state, detail)
    assert settled.carried is (case in ("lineage", "rebased"))
    data = {"proposal": change.id, "note": note, "receipt": str(settled.receipt)}
    [(name, heard, receipt_state, _)] = listener.heard
    assert (name, heard, receipt_state) == ("not-applied", data, None)
    assert files(root / "notes") == before


@pytest.mark.parametrize(("case", "why"), [("link", "a symbolic link"), ("file", "a file")])
def test_a_folder_deep_on_the_way_to_a_new_note_that_changed_is_named(
    make_workspace: WorkspaceMaker, case: str, why: str
):
    """The applier checks every folder on the way to a new note again, the last one too."""
    root = make_workspace("", {"Decisions/Other.md": "# Other\n"})
    sub = root / "notes" / "Decisions" / "Sub"
    if case == "link":
        sub.symlink_to(root / "notes" / "Decisions")
    else:
        sub.write_text("a file\n")
    settled = settled_with(root, Listener(), proposal("Decisions/Sub/uv.md", "create"))
    assert (
        settled.detail == f"the change no longer applies: 'Sub' on the way to the note is now {why}"
    )


def test_a_note_that_appears_while_a_new_one_is_written_is_kept_and_not_called_applied(
    make_workspace: WorkspaceMaker,
):
    """A new note never replaces one: when the path is taken between the receipt's
    ``applying`` and the write, the receipt says ``note changed`` and the note is the
    other one, untouched."""
    root = make_workspace("", {"Home.md": "# Home\n"})
    intruder = Intruder("# Someone else's uv note\n")
    settled = settled_with(root, intruder, proposal("Decisions/uv.md", "create"))
    assert (settled.state, settled.detail) == (
        "note changed",
        "a note was created at this path while the change was applied",
    )
    assert (root / "notes" / "Decisions" / "uv.md").read_text() == "# Someone else's uv note\n"
    record = json.loads(settled.receipt.read_text())
    assert (record["state"], record["after"], record["applied"]) == ("note changed", None, "")
    # hippo's own step wrote nothing, and says why: the run did not stop.
    assert record["appliers"][0] == {
        "name": "note",
        "state": "not run",
        "detail": "a note was created at this path while the change was applied",
    }
    assert [(name, state) for name, _, state, _ in intruder.heard] == [
        ("applying", "applying"),
        ("not-applied", "applying"),
    ]
    assert [p.name for p in (root / "notes" / "Decisions").iterdir()] == ["uv.md"]


@pytest.mark.parametrize(
    ("verdict", "detail"),
    [
        (Verdict("model", "reject", "The turn only plans the switch."), "The turn only plans"),
        (Verdict("model", "reject", "", problem="the reply is not JSON"), "the reply is not JSON"),
    ],
)
def test_a_receipt_names_its_reviewer_its_persona_hippo_and_why(
    make_workspace: WorkspaceMaker, verdict: Verdict, detail: str
):
    """The trail's own fields: who reviewed, as whom, with which hippo, and the reason a
    rejection gives (the reviewer's notes, or what was wrong with its reply)."""
    from hippo_core.version import __version__

    root = make_workspace("", {"Testing.md": TESTING})
    plugins = load_plugins()
    settled = settle(
        Workspace.open(root),
        plugins,
        proposal("Testing.md", "replace"),
        verdict,
        prompt_digest=note_digest(TESTING.encode()),
        persona="a careful maintainer",
        invocation={"command": "hippo review"},
    )
    record = json.loads(settled.receipt.read_text())
    assert settled.verdict is verdict
    assert (record["pass"], record["kind"], record["verdict"]) == (
        "core/verify",
        "replace",
        "reject",
    )
    [review] = record["reviews"]
    assert (review["reviewer"], review["verdict"], review["notes"]) == (
        "model",
        "reject",
        verdict.notes,
    )
    assert record["reviewer"] == {"name": "model", "persona": "a careful maintainer"}
    assert record["invocation"] == {"hippo": __version__, "command": "hippo review"}
    assert (record["state"], record["detail"]) == ("rejected", settled.detail)
    assert settled.detail.startswith(detail)


def test_a_run_s_second_change_to_a_note_lands_on_its_first(make_workspace: WorkspaceMaker):
    """Both proposals were built from the note as the prompt showed it; the second lands on
    the note as the first left it, through the run's lineage, and says so."""
    root = make_workspace("", {"Testing.md": TESTING})
    lineage = Lineage()
    first = proposal("Testing.md", "replace")
    second = replace_field(
        first,
        id="20261130T061502123456Z-next",
        old="with the `flaky` marker",
        new="with the `quarantine` marker",
    )
    turn = TurnText("s-1", 0, None, "Tag them with the quarantine marker instead.", "Done.")
    settled = [
        settled_with(root, Listener(), change, lineage=lineage, evidence=(turn,))
        for change in (first, second)
    ]
    assert [(s.state, s.detail) for s in settled] == [
        ("applied", ""),
        ("applied", "applied onto the note as this run's earlier changes left it"),
    ]
    text = (root / "notes" / "Testing.md").read_text()
    assert NEW in text and "with the `quarantine` marker" in text


def test_the_next_run_settles_each_receipt_a_killed_run_left_unfinished(
    make_workspace: WorkspaceMaker,
):
    """What a kill leaves, one receipt each, settled in one pass by what the note holds: a
    plugin's step that was running, a note written (``applied``), a note not yet written, a
    note somebody changed since (``interrupted``), a plugin's step that never started."""
    from hippo_core.dream.apply import reconcile

    notes = {f"{name}.md": TESTING for name in "ABCDE"}
    root = make_workspace("", notes)
    ids = {}
    for name in "ABCDE":
        change = replace_field(proposal(f"{name}.md", "replace"), id=f"20261130T0615Z-{name}0")
        ids[name] = change.id
        assert settled_with(root, Listener(), change).applied
    receipts = root / ".hippo" / "receipts"

    def edit(name: str, **fields: object) -> None:
        path = receipts / f"{ids[name]}.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))

    step = {"name": "changelog", "state": "running", "detail": ""}
    edit("A", appliers=[{"name": "note", "state": "done", "detail": ""}, step])
    edit(
        "E",
        appliers=[{"name": "note", "state": "done", "detail": ""}, {**step, "state": "pending"}],
    )
    for name in "BCD":
        edit(name, state="applying")
    (root / "notes" / "C.md").write_text(TESTING)
    (root / "notes" / "D.md").write_text(TESTING + "\nA line of somebody's.\n")

    assert reconcile(Workspace.open(root)) == [
        (ids["A"], "applied (the applier changelog was interrupted)"),
        (ids["B"], "applied"),
        (ids["C"], "interrupted"),
        (ids["D"], "interrupted"),
        (ids["E"], "applied"),  # a step that never started was not interrupted
    ]
    records = {name: json.loads((receipts / f"{ids[name]}.json").read_text()) for name in "ABCDE"}
    assert [(r["state"], r["detail"]) for r in records.values()] == [
        ("applied", "the run stopped while the applier changelog ran"),
        ("applied", "recovered after a crash"),
        ("interrupted", "the run stopped before the note was written"),
        ("interrupted", "the run stopped; the note changed since"),
        ("applied", ""),
    ]
    assert [records[name]["appliers"][1]["state"] for name in "AE"] == ["interrupted", "not run"]
    assert reconcile(Workspace.open(root)) == []  # settled once
