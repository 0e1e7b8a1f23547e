"""verify's cost night by night: the notes it prompts, before and after the gate, and the truth
the prompts keep. No model is called; "before" is the same run with the gate taken off
(every note the search finds a turn for is prompted, as before issue 35).

1. A month-shaped workspace: the notes of one service, all in its words (20 on the first day,
   three more each day, as a team's notes and sleep cores grow), and 15 sessions a day of a
   turn each, in the same words, each about one note's subject, a third of them reading that
   note. Each night a dry run of `hippo dream --pass verify` over that day (in this process,
   the real dream): the prompts it builds, before and after, beside the notes the day's
   sessions touched. Target: after, at most the notes touched and 5 a turn, and flat while
   the notes grow; before grows with the notes.
2. The public retrieval sets (../shared/evals/retrieval, held-in; bench/retrieval.py builds
   the workspaces: a commit is a session of one turn on its date, editing the docs it
   changed, or touching nothing: text only). For ``--days`` days drawn among the days with
   commits (seeded), the night's window is that day, and for each note the real search
   (``TurnIndex.mentioning``) and gate (``worth_a_prompt``): the notes prompted before and
   after, and recall: the commits that changed a note that day among the turns its prompt
   shows, over all of them. Target: recall with file hits unchanged (1.000).

Run: python bench/verify_cost.py [--month-days 30] [--days 40] [--only month|public]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
DATA = ROOT.parent / "shared" / "evals" / "retrieval"
START = datetime(2027, 1, 4, tzinfo=UTC)

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
    "tenant",
    "email",
    "sms",
    "webhook",
    "redis",
    "postgres",
    "helm",
    "pod",
    "metrics",
    "alert",
]
SUBJECTS = (
    "billing invoices", "email templates", "sms gateway", "webhook signing", "rate limits",
    "tenant isolation", "audit trail", "feature flags", "load shedding", "dead letters",
    "schema migrations", "backup restore", "cost reports", "incident review", "access reviews",
    "release train", "canary checks", "error budgets", "log retention", "trace sampling",
    "cache warming", "timezone handling", "currency rounding", "pdf rendering", "bulk imports",
    "search indexing", "quota alerts", "key rotation", "session expiry", "locale fallbacks",
    "outbox compaction", "vendor failover", "bounce handling", "unsubscribe links", "ip pools",
    "dkim keys", "spf records", "sender reputation", "link tracking", "open tracking",
    "digest emails", "batch sends", "priority lanes", "quiet hours", "delivery receipts",
    "carrier lookup", "number porting", "short codes", "opt outs", "message templates",
    "render cache", "image proxy", "attachment limits", "spam scoring", "content filters",
    "abuse reports", "fraud signals", "kyc checks", "gdpr exports", "data deletion",
    "retention jobs", "archive storage", "cold start", "autoscaling", "node pools",
    "secret store", "cert renewal", "dns records", "cdn purge", "status page",
    "on call", "paging policy", "runbook index", "postmortems", "chaos drills",
    "load tests", "soak tests", "contract tests", "fixture data", "test sharding",
    "flaky tests", "build cache", "docker images", "base images", "dependency pins",
    "license scan", "sbom export", "code owners", "review rules", "merge queue",
    "branch policy", "tag format", "changelog rules", "version bumps", "api versions",
    "deprecation notes", "client sdks", "rate cards", "usage export", "invoice pdf",
)  # fmt: skip


@contextmanager
def gate(on: bool) -> Iterator[None]:
    """verify's gate as it is (``on``), or taken off: every note with a turn is prompted."""
    from hippo_core.dream.turns import TurnIndex

    kept = TurnIndex.worth_a_prompt
    if not on:
        off = lambda self, found, *rest: bool(found)  # noqa: E731
        TurnIndex.worth_a_prompt = off  # type: ignore[method-assign]
    try:
        yield
    finally:
        TurnIndex.worth_a_prompt = kept  # type: ignore[method-assign]


# -- 1. a month-shaped workspace -----------------------------------------------------------


def note_text(rng: random.Random, subject: str) -> str:
    shared = " ".join(rng.sample(SHARED, 10))
    title = subject.title()
    return (
        f"---\ntype: topic\n---\n# {title}\n\nHow relay handles {subject}: {shared}.\n\n"
        f"## How it works\n\nThe {subject} part uses the {' and the '.join(rng.sample(SHARED, 4))}"
        f", and its {subject.split()[-1]} are checked each night.\n"
    )


def month(days: int) -> None:
    from hippo_core.dream.run import Options, dream
    from hippo_core.workspace.folder import Workspace
    from tests.claude_factory import ClaudeSession

    print(
        f"{'night':<7}{'notes':>6}{'turns':>6}{'touched':>8}{'before':>8}{'after':>7}"
        f"{'passed over':>13}  target: after <= touched + 5 x turns, flat as the notes grow"
    )
    rng = random.Random(35)
    totals = [0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["HIPPO_HOME"] = str(work / "home")
        os.environ["HIPPO_LOAD_PLUGINS"] = ""
        root, claude = work / "relay", work / "claude"
        (root / ".hippo").mkdir(parents=True)
        (root / "notes").mkdir()
        (root / "notes" / "Home.md").write_text("# Home\n\nThe relay service.\n")
        from hippo_core.actions.init import init_workspace

        init_workspace(root)
        made: list[str] = []
        for day in range(days):
            for subject in SUBJECTS[len(made) : 20 + 3 * day]:
                path = f"{subject.title()}.md"
                (root / "notes" / path).write_text(note_text(rng, subject))
                made.append(path)
            night = START + timedelta(days=day)
            touched = set()
            for number in range(15):
                path = rng.choice(made)
                subject = path.removesuffix(".md").lower()
                start = night + timedelta(hours=9, minutes=30 * number)
                session = ClaudeSession(claude, str(root), start=start)
                session.prompt(f"the {subject} {' '.join(rng.sample(SHARED, 5))} is off")
                if number % 3 == 0:
                    session.tool("Read", file_path=str(root / "notes" / path))
                    touched.add(path)
                session.answer(f"Fixed the {' '.join(rng.sample(SHARED, 6))}; tests pass.")
                session.write()
            counts = []
            for on in (False, True):
                with gate(on):
                    options = Options(
                        dry_run=True,
                        since=night,
                        until=night + timedelta(days=1),
                        transcripts={"claude-code": (str(claude),)},
                        passes=frozenset({"core/verify"}),
                    )
                    done = dream(Workspace.open(root), options, lambda line: None)
                report = done.report.read_text()
                counts.append(len(re.findall(r"core/verify, note `.*\(dry run", report)))
                passed = re.search(r"(\d+) notes? with only turns that share", report)
            totals[0] += counts[0]
            totals[1] += counts[1]
            notes = len(made) + 1
            over = passed.group(1) if passed else "0"
            print(
                f"{day + 1:<7}{notes:>6}{15:>6}{len(touched):>8}{counts[0]:>8}{counts[1]:>7}"
                f"{over:>13}"
            )
    print(f"{'all':<7}{'':>6}{'':>6}{'':>8}{totals[0]:>8}{totals[1]:>7}"
          f"  ({totals[1] / totals[0]:.2f} of before)")  # fmt: skip


# -- 2. the public retrieval sets ----------------------------------------------------------


def public(name: str, days: int, edits: bool) -> dict[str, int]:
    from retrieval import build

    from hippo_core.dream.turns import BODY_TERMS, TurnIndex
    from hippo_core.files.home import index_path
    from hippo_core.index.ingest import ingest
    from hippo_core.workspace.folder import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["HIPPO_HOME"] = str(work / "home")
        os.environ["HIPPO_LOAD_PLUGINS"] = ""
        root, commits = build(DATA / name, work, edits=edits)
        ingest(extra_dirs={"claude-code": (str(work / "claude"),)}, defaults=False)
        workspace = Workspace.open(root)
        index = TurnIndex.open(index_path())
        assert index is not None
        by_day: dict[str, list[dict[str, object]]] = {}
        for commit in commits:
            by_day.setdefault(str(commit["date"])[:10], []).append(commit)
        chosen = sorted(random.Random(35).sample(sorted(by_day), min(days, len(by_day))))
        counts = {"before": 0, "after": 0, "truth": 0, "kept before": 0, "kept after": 0}
        terms = workspace.terms_index
        for day in chosen:
            start = datetime.fromisoformat(day + "T00:00:00+00:00")
            end = start + timedelta(days=1)
            sessions = frozenset(str(c["session"]) for c in by_day[day])
            for note in workspace.notes:
                note_file = workspace.notes_dir / note.path
                telling = terms.telling(note.path, BODY_TERMS)
                found = index.mentioning(note, note_file, start, end, sessions, body_terms=telling)
                worth = index.worth_a_prompt(found, note, terms, start, end, sessions)
                changed = [c for c in by_day[day] if note.path in c["files"]]  # type: ignore[operator]
                truth = {str(c["session"]) for c in changed}
                shown = {turn.session for turn in found} & truth
                counts["before"] += bool(found)
                counts["after"] += worth
                counts["truth"] += len(truth)
                counts["kept before"] += len(shown)
                counts["kept after"] += len(shown) if worth else 0
        index.close()
        return counts


def publics(names: list[str], days: int) -> None:
    print(
        f"\n{'data set':<14}{'world':<16}{'days':>5}{'before':>8}{'after':>7}{'ratio':>7}"
        f"{'recall before':>15}{'after':>7}  target"
    )
    for name in names:
        for edits, world in ((True, "with file hits"), (False, "text only")):
            got = public(name, days, edits)
            ratio = got["after"] / got["before"] if got["before"] else 1.0
            recall = [got[f"kept {k}"] / got["truth"] for k in ("before", "after")]
            target = "recall unchanged" if edits else ""
            print(
                f"{name:<14}{world:<16}{days:>5}{got['before']:>8}{got['after']:>7}"
                f"{ratio:>6.2f}x{recall[0]:>15.3f}{recall[1]:>7.3f}  {target}".rstrip()
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--month-days", type=int, default=30)
    parser.add_argument("--days", type=int, default=40, help="days drawn of each public set")
    parser.add_argument("--data", nargs="+", default=["pypa-hatch", "vitejs-vite"])
    parser.add_argument("--only", choices=["month", "public"])
    args = parser.parse_args()
    if args.only != "public":
        month(args.month_days)
    if args.only != "month":
        publics(args.data, args.days)


if __name__ == "__main__":
    main()
