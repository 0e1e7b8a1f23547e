"""verify's turn search on public documentation and its history (../shared/evals/retrieval).

Each data set's docs are a workspace's notes, and each commit is an agent session of one turn
whose prompt is the commit message, written as a Claude Code transcript and ingested by the
real `hippo ingest`. A note's truth is every commit that changed it. For each note the bench
asks the real turn search (`TurnIndex.mentioning`, the whole history as the window) and
counts the truth it returns (recall: found truth over the truth it could return, at most
MAX_TURNS a note), summed over notes, in two worlds:

- with file hits: each session edits the files its commit changed (what an agent leaves);
- text only: the sessions touch no file, so only the note's words can find them.

Beside each figure, in the same run: the search as it was before (the title, headings and
sources as exact phrases, headings with their markup, no word-level fill) over the same
index. Targets: recall with file hits at least 0.98; text-only recall at least twice the old.

Then the context block's relevant notes on each data set's tasks (commit subjects, the docs
they changed as the truth): recall@5 and MRR of each `relevance` setting, beside a plain
BM25 over the notes' whole text in the same run (`hippo eval context` computes the same on a
workspace's own sessions). Target: `relevance = bm25` at least the baseline.

Last, the same tasks replayed in date order (bench/chronological.py): each task ranked with
only the sessions (commits) before its cut, the rows `../shared/evals/retrieval/history.py`
prints, per data set and pooled. Targets: `relevance = history` at least 0.80 pooled, on no
set more than 0.05 below `relevance = bm25`, and above every baseline row.

Run: python bench/retrieval.py [--data FOLDER ...] [--only chronological]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "evals" / "retrieval"
OLD_WORDS = re.compile(r"[^\W_]+")
MAX_TURNS = 40


def build(data: Path, work: Path, *, edits: bool) -> tuple[Path, list[dict]]:
    """A workspace of the data set's notes and a Claude Code home of its commits."""
    from tests.claude_factory import ClaudeSession

    root = work / "ws"
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text("", encoding="utf-8")
    shutil.copytree(data / "notes", root / "notes")
    home = work / "claude"
    commits = [json.loads(line) for line in (data / "commits.jsonl").read_text().splitlines()]
    for commit in commits:
        when = datetime.fromisoformat(commit["date"].replace("Z", "+00:00"))
        session = ClaudeSession(home, str(root), start=when)
        session.prompt(f"{commit['subject']}\n\n{commit['body']}".strip())
        if edits:
            for path in commit["files"]:
                session.tool(
                    "Edit", file_path=str(root / "notes" / path), old_string="a", new_string="b"
                )
        session.answer("done").write()
        commit["session"] = session.session
    return root, commits


def old_search(index, note, note_file: Path, window: dict[str, str], sessions) -> set[str]:
    """The search as it was: the title, raw headings and sources as exact phrases first,
    then the turns that touched the note, at most 40 of the sessions asked for."""

    def phrase(text: str) -> str | None:
        words = OLD_WORDS.findall(text)
        return '"' + " ".join(words) + '"' if words else None

    phrases = [phrase(t) for t in (note.title, *note.headings, *(note.meta.sources or ()))]
    wanted = [p for p in dict.fromkeys(phrases) if p]
    rows = index._phrase_rows(wanted, window) if wanted else []
    rows += index._rows(
        "SELECT t.* FROM touched x CROSS JOIN turns t ON t.id = x.turn WHERE x.path = :path "
        "AND t.started >= :start AND t.started < :end ORDER BY t.started DESC LIMIT 500",
        {"path": str(note_file), **window},
    )
    found: dict[int, str] = {}
    for row in rows:
        if row.session in sessions:
            found.setdefault(row.id, row.session)
    return set(list(found.values())[:MAX_TURNS])


def measure(data: Path, *, edits: bool) -> dict[str, float]:
    from hippo_core.dream.turns import BODY_TERMS, TurnIndex
    from hippo_core.files.home import index_path
    from hippo_core.index.ingest import ingest
    from hippo_core.workspace.folder import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["HIPPO_HOME"] = str(work / "home")
        os.environ["HIPPO_LOAD_PLUGINS"] = ""
        root, commits = build(data, work, edits=edits)
        ingest(extra_dirs={"claude-code": (str(work / "claude"),)}, defaults=False)
        workspace = Workspace.open(root)
        index = TurnIndex.open(index_path())
        start = datetime(1990, 1, 1, tzinfo=UTC)
        end = datetime.now(UTC) + timedelta(days=1)
        window = {"start": "1990-01-01T00:00:00", "end": end.strftime("%Y-%m-%dT%H:%M:%S")}
        everyone = frozenset(c["session"] for c in commits)
        hits = old_hits = total = empty = old_empty = 0
        for note in workspace.notes:
            truth = {c["session"] for c in commits if note.path in c["files"]}
            if not truth:
                continue
            note_file = workspace.notes_dir / note.path
            telling = workspace.terms_index.telling(note.path, BODY_TERMS)
            asked = index.mentioning(note, note_file, start, end, everyone, body_terms=telling)
            found = {t.session for t in asked}
            old = old_search(index, note, note_file, window, everyone)
            total += min(len(truth), MAX_TURNS)
            hits += len(truth & found)
            old_hits += len(truth & old)
            empty += not found
            old_empty += not old
        index.close()
    return {
        "recall": hits / total,
        "old": old_hits / total,
        "truth": total,
        "empty": empty,
        "old_empty": old_empty,
    }


def context(data: Path) -> dict[str, list[tuple[float, float]]]:
    """recall@5 and MRR@5 of each ranking, task by task, over all the data set's tasks (no
    sessions: ``history`` ranks as ``bm25``)."""
    from chronological import BEFORE, OneBag, _rates

    from hippo_core.dream.measure import Case, bm25_ranker, relevance_rankers
    from hippo_core.workspace.folder import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / ".hippo").mkdir(parents=True)
        (root / ".hippo" / "settings.toml").write_text("", encoding="utf-8")
        shutil.copytree(data / "notes", root / "notes")
        workspace = Workspace.open(root)
        tasks = [json.loads(line) for line in (data / "tasks.jsonl").read_text().splitlines()]
        cases = [Case(t["task"], set(t["truth"])) for t in tasks]
        rankers = {f"relevance = {k}": v for k, v in relevance_rankers(workspace).items()}
        one_bag = OneBag(workspace)
        rankers[BEFORE["bm25"]] = lambda case: one_bag.rank(case.task, None)
        rankers["bm25 (baseline)"] = bm25_ranker(workspace)
        return {
            name: [_rates(rank(case), case.truth) for case in cases]
            for name, rank in rankers.items()
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["pypa-hatch", "vitejs-vite"])
    parser.add_argument(
        "--only",
        choices=["chronological", "ranking"],
        help="run only the replay in date order, or the rankings (all tasks, the replay and "
        "before against after)",
    )
    args = parser.parse_args()
    if args.only is None:
        turn_search(args.data)
    everything = {} if args.only == "chronological" else all_tasks(args.data)
    replayed = chronological(args.data)
    if everything:
        paired({"all tasks": everything, "in date order": replayed})


def turn_search(names: list[str]) -> None:
    """verify's turn search over the whole history."""
    print(
        f"{'data set':<14}{'world':<18}{'recall':>8}{'before':>8}{'ratio':>7}"
        f"{'nothing found':>16}{'truth':>7}  target"
    )
    for name in names:
        for edits, world, target in (
            (True, "with file hits", ">= 0.98"),
            (False, "text only", ">= 2x before"),
        ):
            got = measure(DATA / name, edits=edits)
            ratio = got["recall"] / got["old"] if got["old"] else float("inf")
            empty = f"{got['empty']} (was {got['old_empty']})"
            print(
                f"{name:<14}{world:<18}{got['recall']:>8.3f}{got['old']:>8.3f}{ratio:>6.2f}x"
                f"{empty:>16}{got['truth']:>7}  {target}"
            )


def all_tasks(names: list[str]) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """The context block's ranking with no sessions, over every task of each data set."""
    from chronological import mean

    print(f"\n{'data set':<14}{'context ranking':<28}{'recall@5':>9}{'MRR@5':>7}  target")
    found = {}
    for name in names:
        found[name] = context(DATA / name)
        for ranking, rates in found[name].items():
            recall, mrr = mean(rates)
            target = ">= the baseline's" if ranking == "relevance = bm25" else ""
            print(f"{name:<14}{ranking:<28}{recall:>9.3f}{mrr:>7.3f}  {target}".rstrip())
    return found


def chronological(names: list[str]) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """The context block's ranking on the tasks replayed in date order, as history.py."""
    from chronological import mean, replay

    print(
        "\nin date order (held-in; each task sees only the sessions before its cut): "
        "recall@5 / MRR@5"
    )
    pooled: dict[str, list[tuple[float, float]]] = {}
    found = {name: replay(DATA / name) for name in names}
    for name, rows in [*found.items(), ("pooled", pooled)]:
        if name != "pooled":
            for ranking, rates in rows.items():
                pooled.setdefault(ranking, []).extend(rates)
        for ranking, rates in rows.items():
            recall, mrr = mean(rates)
            print(f"{name:<14}{ranking:<24}{recall:>7.3f} / {mrr:.3f}  ({len(rates)} tasks)")
    history, bm25 = "relevance = history", "relevance = bm25"
    worst = min(mean(rows[history])[0] - mean(rows[bm25])[0] for rows in found.values())
    best_baseline = max(mean(pooled[b])[0] for b in ("plain BM25", "history only", "fusion (RRF)"))
    pooled_history = mean(pooled[history])[0]
    print(
        f"targets: history pooled {pooled_history:.3f} (>= 0.80), worst set minus bm25 "
        f"{worst:+.3f} (>= -0.05), best baseline pooled {best_baseline:.3f} (below history)"
    )
    return found


def paired(protocols: dict[str, dict[str, dict[str, list[tuple[float, float]]]]]) -> None:
    """Before (one bag) and after (fields), task by task: the difference's mean with its
    95% interval (a bootstrap over the tasks, 2,000 draws, seeded), and how many tasks
    ranked better and worse. Targets (issue 39): history in date order gains at least 0.03
    recall@5 pooled, and loses no more than 0.01 on any data set."""
    from chronological import BEFORE, mean

    print(
        "\nbefore (one bag) and after (fields), task by task: recall@5 and MRR@5 before -> "
        "after; the difference with its 95% interval (bootstrap over tasks); tasks better/worse"
    )
    print(
        f"{'protocol':<15}{'data set':<13}{'ranking':<9}{'tasks':>6}  {'recall@5':<15}"
        f"{'difference':<27}{'MRR@5':<15}{'difference':<27}"
    )
    verdict = []
    for protocol, sets in protocols.items():
        settings = ["bm25"] if protocol == "all tasks" else ["bm25", "history"]
        for setting in settings:
            pooled: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
            for name, rows in [*sets.items(), ("pooled", None)]:
                if rows is None:
                    before, after = pooled["before"], pooled["after"]
                else:
                    before, after = rows[BEFORE[setting]], rows[f"relevance = {setting}"]
                    pooled["before"] += before
                    pooled["after"] += after
                cells = []
                for k in (0, 1):
                    old, new = mean(before)[k], mean(after)[k]
                    gain, low, high, better, worse = _difference(before, after, k)
                    cells.append(f"{old:.3f} -> {new:.3f}  ")
                    cells.append(f"{gain:+.3f} ({low:+.3f}..{high:+.3f}) {better}/{worse}  ")
                print(
                    f"{protocol:<15}{name:<13}{setting:<9}{len(after):>6}  "
                    f"{cells[0]:<15}{cells[1]:<27}{cells[2]:<15}{cells[3]:<27}".rstrip()
                )
                if protocol == "in date order" and setting == "history":
                    verdict.append((name, mean(after)[0] - mean(before)[0]))
    if verdict:
        pooled_gain = dict(verdict).get("pooled", 0.0)
        worst = min(gain for name, gain in verdict if name != "pooled")
        print(
            f"targets: history in date order, pooled recall@5 {pooled_gain:+.3f} (>= +0.03), "
            f"worst data set {worst:+.3f} (>= -0.01)"
        )


def _difference(
    before: list[tuple[float, float]], after: list[tuple[float, float]], k: int
) -> tuple[float, float, float, int, int]:
    """The mean of after minus before (measure ``k``) over paired tasks, its 95% bootstrap
    interval, and how many tasks went up and down."""
    import random

    gains = [b[k] - a[k] for a, b in zip(before, after, strict=True)]
    draw = random.Random(39)
    means = sorted(sum(draw.choices(gains, k=len(gains))) / len(gains) for _ in range(2000))
    return (
        sum(gains) / len(gains),
        means[49],
        means[1949],
        sum(1 for gain in gains if gain > 0),
        sum(1 for gain in gains if gain < 0),
    )


if __name__ == "__main__":
    main()
