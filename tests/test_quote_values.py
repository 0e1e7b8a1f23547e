"""verify's quote rule and a value inside a longer word (issue 35, F9).

`Onboarding.md` said ``check it with `curl localhost:8080/health` ``; from the day the API
moved, the turns said "port 8443" and ``http://localhost:8443/health``. The rule compared
whole words, so the correction ``localhost:8443/health`` quoted no turn, and the note stayed
wrong until a session happened to type the same command. The changed part of a word of
`new` (``8443``) now counts when the turn states it; a value no turn states still fails.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from hippo_core.dream.quotes import changed_part, quotes
from tests.claude_factory import ClaudeSession
from tests.conftest import write_notes
from tests.dream_scene import PROPOSER, VERIFY_REVIEWER, Scene

OLD = "2. `make dev` runs the API; check it with `curl localhost:8080/health`."
NEW = "2. `make dev` runs the API; check it with `curl localhost:8443/health`."
TURN = (
    "Done. The API now listens on port 8443: I changed `PORT` in relay/config.py, and "
    "notes/Runbooks/Deploy.md now uses http://localhost:8443/health."
)
ONBOARDING = f"""---
type: guide
---
# Onboarding

Your first day on relay: set up the service locally, run it, and find your way around.

1. Clone the repository and run `make setup`; it installs the tools and the git hooks.
{OLD}
3. Read [[Architecture]] before your first change, and [[Testing]] before your first push.
4. Ask in the team channel for access to the staging cluster and the vault.
"""


@pytest.mark.parametrize(
    ("turn", "passes"),
    [
        (TURN, True),
        ("The API now listens on port 8443.", True),  # the value alone
        ("Use http://localhost:8443/health from now on.", True),  # inside a word of its own
        ("curl localhost:8443/health answers ok", True),  # the whole word, as before
        ("The API now listens on port 8444.", False),  # another value
        ("The API now listens on port 18443.", False),  # inside a longer number
        ("Ticket 8443x is closed.", False),  # inside a longer name
        ("The API listens on 8080 as before.", False),  # only what old says
    ],
)
def test_the_changed_part_of_a_word_counts_when_the_turn_states_it(turn: str, passes: bool):
    assert quotes(NEW, OLD, turn) is passes


def test_a_word_with_no_old_word_behind_it_is_quoted_whole_or_not_at_all():
    # Nothing of old's is kept in the new word: it is a new word, quoted whole as before.
    assert not quotes("See `api.internal:8443/health`.", "See the health check.", TURN)
    # A changed part that is no value (no digit, no / . _ - = : @) never counts alone.
    old, new = "Deploy with `make deploy ENV=staging`.", "Deploy with `make deploy ENV=prod`."
    assert changed_part("ENV=prod", ["ENV=staging"]) == "prod"
    assert not quotes(new, old, "We deploy to prod now.")
    assert quotes(new, old, "Run `make deploy ENV=prod` from now on.")  # the word, whole


def test_the_changed_part_is_whole_runs_of_letters_and_digits():
    assert changed_part("localhost:8443/health", ["curl", "localhost:8080/health"]) == "8443"
    assert changed_part("localhost:844/health", ["localhost:8443/health"]) == "844"
    assert changed_part("localhost:8443/health", ["localhost/health"]) == "8443"
    assert changed_part("v2.4.1", ["v2.3.9"]) == "4.1"
    assert changed_part("nothing-alike", ["other"]) == ""


def month_scene(scene: Scene, answer: str) -> None:
    write_notes(scene.root, {"Onboarding.md": ONBOARDING})
    made = ClaudeSession(
        scene.claude_home, str(scene.root), start=datetime.now(UTC) - timedelta(hours=2)
    )
    made.prompt("We're terminating TLS in the pod now: move the API to its new port.")
    made.answer(answer).write()
    scene.session = made.session
    proposal = {
        "note": "Onboarding.md",
        "kind": "replace",
        "old": OLD,
        "new": NEW,
        "reason": "The newest turn says 8443.",
        "evidence": [{"session": "SESSION", "ordinal": 0}],
    }
    scene.model(
        {"when": [PROPOSER, "Onboarding.md"], "reply": json.dumps([proposal])},
        {"when": [PROPOSER], "reply": "[]"},
        {"when": [VERIFY_REVIEWER], "reply": '{"verdict": "confirm", "notes": "It says 8443."}'},
        {"reply": "[]"},
    )


def test_the_months_correction_lands(scene: Scene):
    month_scene(scene, TURN)
    assert scene.dream().code == 0
    assert NEW in (scene.root / "notes" / "Onboarding.md").read_text()
    assert not [line for line in scene.section("Validation failures") if "Onboarding" in line]


def test_a_value_no_turn_states_still_fails(scene: Scene):
    month_scene(scene, TURN.replace("8443", "8444"))
    assert scene.dream().code == 0
    assert OLD in (scene.root / "notes" / "Onboarding.md").read_text()
    [failure] = [line for line in scene.section("Validation failures") if "Onboarding" in line]
    assert "new quotes no evidence turn word for word" in failure
