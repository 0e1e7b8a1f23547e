"""A night's cost follows the night's work (issue 35, F3).

In a month of a team's sessions verify prompted a note whenever a turn of the window shared
a word with it: 19 notes on the first night, 97 on the thirtieth, at the same 15 sessions a
night, and 0.44 % of those calls proposed anything. verify now prompts a note only on
evidence stronger than shared words: a turn touched its file or a source, said its title,
a heading or a source, or ranks it among the notes its words fit best. The report counts
the notes passed over.
"""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.claude_factory import ClaudeSession
from tests.conftest import HippoRunner, WorkspaceMaker, write_notes
from tests.dream_scene import PROPOSER, VERIFY_REVIEWER
from tests.models import calls, scripted_model

#: Words every note of the service and every turn use.
SHARED = [
    "relay",
    "worker",
    "service",
    "queue",
    "message",
    "vendor",
    "deploy",
    "config",
    "tests",
    "api",
    "port",
    "database",
    "staging",
    "production",
    "retry",
    "backoff",
    "outbox",
    "stream",
    "token",
    "secret",
    "health",
    "check",
]
TOPICS = (
    "billing invoices", "email templates", "sms gateway", "webhook signing", "rate limits",
    "tenant isolation", "audit trail", "feature flags", "load shedding", "dead letters",
    "schema migrations", "backup restore", "cost reports", "incident review", "access reviews",
    "release train", "canary checks", "error budgets", "log retention", "trace sampling",
    "cache warming", "timezone handling", "currency rounding", "pdf rendering", "bulk imports",
    "search indexing", "quota alerts", "key rotation", "session expiry", "locale fallbacks",
)  # fmt: skip


def notes(rng: random.Random) -> dict[str, str]:
    """Thirty notes of one service: each has its topic, and the service's words."""
    found = {"Home.md": "# Home\n\nThe relay service.\n"}
    for topic in TOPICS:
        shared = " ".join(rng.sample(SHARED, 8))
        title = topic.title()
        found[f"{title}.md"] = (
            f"# {title}\n\nHow the relay service handles {topic}: {shared}.\n\n"
            f"## Notes\n\nThe {topic} part uses the {' and the '.join(rng.sample(SHARED, 3))}.\n"
        )
    return found


def turn(home: Path, root: Path, hours_ago: float, prompt: str, answer: str, read: str = "") -> str:
    made = ClaudeSession(home, str(root), start=datetime.now(UTC) - timedelta(hours=hours_ago))
    made.prompt(prompt)
    if read:
        made.tool("Read", file_path=str(root / "notes" / read))
    made.answer(answer).write()
    return made.session


def prompted(script: Path) -> list[str]:
    """The notes verify's proposer was asked about, in order."""
    found = []
    for call in calls(script):
        if PROPOSER in call["prompt"]:
            found += re.findall(r"### Note `([^`]+)`", call["prompt"])
    return found


def test_verify_prompts_the_notes_the_nights_turns_are_about(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path, tmp_path: Path
) -> None:
    rng = random.Random(35)
    root = make_workspace()
    assert hippo("init", cwd=root).code == 0
    write_notes(root, notes(rng))
    # Three sessions of a night, each in the service's words: one reads a note, one names a
    # note's title, one talks about a note's subject without naming it.
    turn(
        claude_home, root, 5, "check the billing invoices page", "Read it; the worker is fine.",
        read="Billing Invoices.md",
    )  # fmt: skip
    turn(
        claude_home, root, 4, "the webhook signing secret rotates now",
        "Webhook signing uses the new token from the vault; deploy to staging passed.",
    )  # fmt: skip
    turn(
        claude_home, root, 3, "retry the dead letter messages of the sms vendor",
        "Replayed 14 dead letters through the queue; the sms gateway answered each.",
    )  # fmt: skip
    argv, script = scripted_model(
        tmp_path, [{"when": [PROPOSER], "reply": "[]"}, {"when": [VERIFY_REVIEWER], "reply": "{}"}]
    )
    (root / ".hippo" / "settings.toml").write_text(f"model_command = {json.dumps(argv)}\n")
    assert hippo("dream", "--pass", "verify", cwd=root).code == 0

    asked = prompted(script)
    # What the turns are about is prompted: the file read, the title said, the subject.
    assert {"Billing Invoices.md", "Webhook Signing.md", "Sms Gateway.md"} <= set(asked)
    assert "Dead Letters.md" in asked
    # Every note shares the service's words with every turn; at most the notes each of the
    # three turns fits best are prompted besides the two found by file and title.
    assert len(asked) <= 2 + 3 * 5, asked
    report = (sorted((root / ".hippo" / "reports").glob("*.md"))[-1]).read_text()
    passed = re.search(r"core/verify: (\d+) notes with only turns that share their words", report)
    assert passed, report
    # Each note is prompted, passed over or found by no turn at all, and the report says so.
    idle = sum(int(n) for n in re.findall(r"core/verify: (\d+) notes? with ", report))
    assert len(asked) + idle == len(TOPICS) + 1, report
    assert int(passed.group(1)) >= len(TOPICS) - len(asked)
    window = [line for line in report.splitlines() if line.startswith("- chunk ")]
    assert window == [window[0]] and f"{len(asked)} model calls" in window[0]


def test_a_note_sessions_touch_is_prompted_whatever_its_words(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, claude_home: Path, tmp_path: Path
) -> None:
    # A turn that edited the note is evidence enough, even when it says none of its words.
    root = make_workspace()
    assert hippo("init", cwd=root).code == 0
    write_notes(root, notes(random.Random(1)))
    turn(claude_home, root, 2, "tidy", "done", read="Audit Trail.md")
    argv, script = scripted_model(tmp_path, [{"when": [PROPOSER], "reply": "[]"}])
    (root / ".hippo" / "settings.toml").write_text(f"model_command = {json.dumps(argv)}\n")
    assert hippo("dream", "--pass", "verify", cwd=root).code == 0
    assert prompted(script) == ["Audit Trail.md"]
