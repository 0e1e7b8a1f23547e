"""The rules a drafted operation meets before a draft is written (checklist B2 23-27, 35-36)."""

from __future__ import annotations

from hippo_packs.sleep.cycle.operations import check_operations, empty_answer, salvage_operations
from hippo_packs.sleep.cycle.review import restate_problem

PILE = [
    {"id": "f1", "content": "Deploys run from main after CI passes"},
    {"id": "f2", "content": "the printer on floor two jams"},
]


def test_salvage_keeps_finished_operations_of_a_cut_off_answer():
    assert salvage_operations("no json here at all") == ([], False)
    assert salvage_operations('{"operations": [{"kind": "new_core", "content": "ab') == ([], True)
    finished = '{"operations": [{"kind": "new_core", "content": "a"}, {"kind": "att'
    assert salvage_operations(finished) == ([{"kind": "new_core", "content": "a"}], True)
    assert salvage_operations("[" * 100_000) == ([], False)
    assert empty_answer('```json\n{"operations": []}\n```') and not empty_answer("nothing")


def test_a_pile_of_n_fragments_yields_at_most_n_plus_one_operations():
    one = [PILE[0]]
    raw = [{"kind": "new_core", "content": f"Deploys run from main {n}"} for n in range(6)]
    kept, dropped = check_operations(raw, one, live={}, topic="deploy")
    assert len(kept) == 2 and [d["why"] for d in dropped] == ["more than 2 operations"] * 4


def test_text_not_drawn_from_the_fragments_is_dropped():
    raw = [{"kind": "new_core", "content": "Kubernetes autoscaling happens on Tuesdays"}]
    kept, dropped = check_operations(raw, PILE, live={}, topic="")
    assert kept == [] and dropped == [{"operation": "0", "why": "not in the fragments"}]


def test_text_is_drawn_from_the_fragments_when_half_its_words_are_theirs():
    """Words of four letters or more: two of four from the pile is drawn; one of three is
    not."""
    half = [{"kind": "new_core", "content": "Deploys main kubernetes autoscaling"}]
    assert [op["content"] for op in check_operations(half, PILE, live={}, topic="")[0]] == [
        "Deploys main kubernetes autoscaling"
    ]
    less = [{"kind": "new_core", "content": "Deploys kubernetes autoscaling"}]
    assert check_operations(less, PILE, live={}, topic="") == (
        [],
        [{"operation": "0", "why": "not in the fragments"}],
    )


def test_an_operation_keeps_only_the_fragments_its_text_came_from():
    raw = [{"kind": "new_core", "content": "Deploys run from main", "source_indexes": [1, 2]}]
    assert check_operations(raw, PILE, live={}, topic="")[0][0]["source_short_ids"] == ["f1"]
    single = [{"kind": "new_core", "content": "Deploys run from main", "source_indexes": [2]}]
    assert check_operations(single, PILE, live={}, topic="")[0][0]["source_short_ids"] == ["f2"]


def test_a_restatement_equal_to_the_episode_is_dropped_and_a_redraft_never_rewords():
    live = {"c": object()}
    same = {
        "kind": "attach",
        "target_core_id": "c",
        "content": "Deploys run from main",
        "restated_content": "Deploys run from main",
    }
    assert "restated_content" not in check_operations([same], PILE, live=live, topic="")[0][0]
    other = {**same, "restated_content": "Deploys run from main after CI"}
    assert check_operations([other], PILE, live=live, topic="")[0][0]["restated_content"]
    assert (
        "restated_content"
        not in check_operations([other], PILE, live=live, topic="", redraft=True)[0][0]
    )


def test_targets_must_exist_or_be_a_new_core_of_the_draft():
    raw = [
        {"kind": "new_core", "content": "Deploys run from main"},
        {"kind": "attach", "target_op": 0, "content": "after CI passes"},
        {"kind": "attach", "target_op": 1, "content": "CI passes"},
        {"kind": "supersede", "content": "main after CI"},
    ]
    kept, dropped = check_operations(raw, PILE, live={}, topic="")
    assert [op["kind"] for op in kept] == ["new_core", "attach"]
    assert [d["why"] for d in dropped] == [
        "target_op 1 is not a new_core of this draft",
        "a supersede needs target_core_id (or target_op)",
    ]


def test_the_restate_check():
    core = "Deploys run from main after the tests pass on CI"
    assert restate_problem(core, "shipped today", "shipped today") == (
        "is the episode's own text, not the core reworded"
    )
    assert restate_problem(core, "Releases are cut weekly from branches", "x").startswith(
        "keeps only "
    )
    assert restate_problem(core, "Deploys from main", "x") == (
        "is less than half the length of the core it replaces"
    )
    assert (
        restate_problem(core, "Deploys run from main after the tests pass on CI, always", "x")
        is None
    )
    assert restate_problem(core, core, "x") is None and restate_problem(core, "", "x") is None
