"""The context block's relevant notes on the public sets replayed in date order, for
bench/retrieval.py: the rows `../shared/evals/retrieval/history.py` prints, in-process.

Each data set's commits are sessions of one Claude Code transcript each (the prompt is the
commit's subject and body, an Edit call per note it changed, at the commit's own time),
ingested once by the real `hippo ingest`. The commits in date order are cut at 50, 60, 70,
80 and 90% of the history; the tasks whose commits fall between a cut and the next are
ranked with only the sessions before the cut (`before`), their recency reckoned from an hour
after the last of them (`now`), as history.py's fresh workspaces see them. So no task sees
its own commit or a later one.

Beside each `relevance` setting, history.py's three baselines, computed here the same way
from the same commits: plain BM25 (SQLite FTS5 over each note's title and headings, and its
body), history only (FTS5 BM25 over the past sessions' prompts: the 20 best that touched a
note each add their score to every note they touched) and their reciprocal rank fusion
(k = 60). And `bm25` and `history` as hippo ranked before its notes had fields (issue 39):
one bag of each note's terms, a title or file name word counting three times and a heading
word twice (:class:`OneBag`), fused with the same history, so that each task's figures
before and after are paired.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import sqlite3
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

CUTS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
K = 5
TOP = 20
RRF_K = 60
BASELINES = ("plain BM25", "history only", "fusion (RRF)")
#: The rows of each setting as hippo ranked before fields (:class:`OneBag`).
BEFORE = {setting: f"relevance = {setting}, one bag" for setting in ("bm25", "history")}
_WORD = re.compile(r"[^\W_]+")


def when(row: dict) -> datetime:
    return datetime.fromisoformat(row["date"].replace("Z", "+00:00")).astimezone(UTC)


def _fts_query(task: str) -> str | None:
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(task)))
    return " OR ".join(f'"{w}"' for w in words) if words else None


def _body(text: str) -> str:
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            return text[end + 4 :]
    return text


class _PlainBM25:
    def __init__(self, notes: dict[str, tuple[str, list[str]]], texts: dict[str, str]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE f USING fts5(path UNINDEXED, head, body, "
            "tokenize='unicode61 remove_diacritics 2')"
        )
        self.db.executemany(
            "INSERT INTO f VALUES (?, ?, ?)",
            [
                (path, "\n".join([title, *headings]), _body(texts[path]))
                for path, (title, headings) in notes.items()
            ],
        )

    def rank(self, task: str) -> list[str]:
        query = _fts_query(task)
        if not query:
            return []
        sql = "SELECT path FROM f WHERE f MATCH ? ORDER BY bm25(f), path"
        return [row[0] for row in self.db.execute(sql, (f"{{head body}} : ({query})",))]


class _PastSessions:
    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE s USING fts5(prompt, tokenize='unicode61 remove_diacritics 2')"
        )
        self.touched: dict[int, list[str]] = {}

    def add(self, prompt: str, notes: list[str]) -> None:
        rowid = len(self.touched) + 1
        self.db.execute("INSERT INTO s (rowid, prompt) VALUES (?, ?)", (rowid, prompt))
        self.touched[rowid] = list(dict.fromkeys(notes))

    def rank(self, task: str) -> list[str]:
        query = _fts_query(task)
        if not query:
            return []
        score: Counter[str] = Counter()
        taken = 0
        sql = "SELECT rowid, bm25(s) FROM s WHERE s MATCH ? ORDER BY bm25(s), rowid DESC"
        for rowid, found in self.db.execute(sql, (query,)):
            notes = self.touched[rowid]
            if not notes:
                continue
            for path in notes:
                score[path] += -found
            taken += 1
            if taken == TOP:
                break
        return sorted(score, key=lambda p: (-score[p], p))


def _rrf(*lists: list[str]) -> list[str]:
    score: Counter[str] = Counter()
    for ranked in lists:
        for i, path in enumerate(ranked):
            score[path] += 1 / (RRF_K + i + 1)
    return sorted(score, key=lambda p: (-score[p], p))


def _rates(ranked: list[str], truth: set[str]) -> tuple[float, float]:
    top = ranked[:K]
    recall = len(truth & set(top)) / len(truth)
    return recall, next((1 / (i + 1) for i, p in enumerate(top) if p in truth), 0.0)


class OneBag:
    """BM25 as hippo ranked before fields: one bag of each note's stemmed terms (the body,
    plus each heading word once more, each title word once more and each file name word
    three times more), k1 1.6 and b 0.3; ties to the body's own score, then updated, then
    the path. Measured with it, the public sets give the figures docs/limits.md has for
    before (recall@5 0.729 and 0.746 over all tasks)."""

    K1, B = 1.6, 0.3

    def __init__(self, workspace: object) -> None:
        from hippo_core.notes.terms import clean, terms
        from hippo_core.notes.text import decode_note, split_frontmatter

        index = workspace.notes_index  # type: ignore[attr-defined]
        self.bags: dict[str, tuple[Counter[str], Counter[str], int]] = {}
        self.updated: dict[str, int] = {}
        for path, note in index.notes().items():
            raw = (workspace.notes_dir / path).read_bytes()  # type: ignore[attr-defined]
            text, _ = decode_note(raw)
            body = Counter(terms(text[split_frontmatter(text).body_start :])) if text else Counter()
            bag = Counter(body)
            for heading in note.headings:
                bag.update(terms(clean(heading)))
            bag.update(terms(clean(note.title)))
            parts = path.removesuffix(".md").split("/")
            folder_note = parts[-1].lower() in ("index", "readme", "_index") and len(parts) > 1
            for term in terms(parts[-2] if folder_note else parts[-1]):
                bag[term] += 3
            self.bags[path] = (bag, body, sum(bag.values()))
            self.updated[path] = note.meta.updated.toordinal() if note.meta.updated else 0
        self.holders = Counter(term for bag, _, _ in self.bags.values() for term in bag)
        self.mean = max(sum(n for _, _, n in self.bags.values()) / max(len(self.bags), 1), 1.0)

    def scored(self, wanted: list[str]) -> dict[str, tuple[float, float]]:
        """Each note that holds a term of ``wanted``: its score and its body's, rounded."""
        import math

        count = len(self.bags)
        found: dict[str, tuple[float, float]] = {}
        for path, (bag, body, length) in self.bags.items():
            score = own = 0.0
            norm = self.K1 * (1 - self.B + self.B * length / self.mean)
            for term in sorted(set(wanted)):
                if bag[term]:
                    df = self.holders[term]
                    idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
                    score += idf * bag[term] / (bag[term] + norm)
                    own += idf * body[term] / (body[term] + norm)
            if score:
                found[path] = (round(score, 9), round(own, 9))
        return found

    def rank(self, task: str, history: dict[str, float] | None) -> list[str]:
        """``bm25`` (``history`` None) or ``history`` as relevance.rank fused them."""
        from hippo_core.context.relevance import MAX_RELEVANT, fuse
        from hippo_core.notes.terms import terms

        scores = self.scored(terms(task))
        order = sorted(scores, key=lambda p: (-scores[p][0], -scores[p][1], -self.updated[p], p))
        best = [(path, scores[path][0]) for path in order[:MAX_RELEVANT]]
        if not history:
            return [path for path, _ in best]
        more = [(path, scores[path][0]) for path in history if path in scores]
        return fuse(best, history, more)[:MAX_RELEVANT]


class Case(NamedTuple):
    """A task of the replay: its text, the notes its commit changed, the sessions it may
    see (the first ``upto`` commits in date order, those that started before ``before``)
    and the clock its recency is reckoned by."""

    task: str
    truth: set[str]
    upto: int
    before: float
    now: float


def workspace_of(data: Path, work: Path) -> tuple[Workspace, list[dict], list[Case]]:
    """A workspace of ``data``'s notes in ``work`` (``HIPPO_HOME`` there too) with a session
    per commit ingested; the commits in date order and the tasks of the replay."""
    from hippo_core.index.ingest import ingest
    from hippo_core.workspace.folder import Workspace
    from tests.claude_factory import ClaudeSession

    rows = lambda name: [  # noqa: E731
        json.loads(line) for line in (data / name).read_text().splitlines() if line.strip()
    ]
    commits, tasks = rows("commits.jsonl"), {t["sha"]: t for t in rows("tasks.jsonl")}
    order = sorted(commits, key=when)
    os.environ["HIPPO_HOME"] = str(work / "home")
    os.environ["HIPPO_LOAD_PLUGINS"] = ""
    root = work / "ws"
    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text('relevance = "history"\n')
    shutil.copytree(data / "notes", root / "notes")
    for commit in order:
        # The session's first record is a second after its start: start it a second early.
        session = ClaudeSession(
            work / "claude", str(root), start=when(commit) - timedelta(seconds=1)
        )
        session.prompt(message(commit))
        for path in commit["files"]:
            session.tool(
                "Edit", file_path=str(root / "notes" / path), old_string="a", new_string="b"
            )
        session.answer("done").write()
    ingest(extra_dirs={"claude-code": (str(work / "claude"),)}, defaults=False)
    workspace = Workspace.open(root)
    have = set(workspace.notes_index.notes())
    cases = []
    for low, high in itertools.pairwise(CUTS):
        upto, end = int(len(order) * low), int(len(order) * high)
        last = when(order[upto - 1])
        before = last.timestamp() + 0.5  # the cut's sessions started at or before it
        now = (last + timedelta(hours=1)).timestamp()
        for commit in order[upto:end]:
            task = tasks.get(commit["sha"])
            truth = set(task["truth"]) & have if task else set()
            if truth:
                cases.append(Case(task["task"], truth, upto, before, now))
    return workspace, order, cases


def message(commit: dict) -> str:
    return f"{commit['subject']}\n\n{commit['body']}".strip()


def replay(data: Path) -> dict[str, list[tuple[float, float]]]:
    """recall@5 and MRR@5 of each ranking, task by task, on ``data`` replayed in date order."""
    from hippo_core.context.relevance import SETTINGS, history_scores, relevant_paths
    from hippo_core.notes.terms import terms

    found: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workspace, order, cases = workspace_of(data, Path(tmp))
        index = workspace.notes_index
        have = set(index.notes())
        texts = {path: (workspace.notes_dir / path).read_text(encoding="utf-8") for path in have}
        plain = _PlainBM25(
            {p: (n.title, list(n.headings)) for p, n in index.notes().items()}, texts
        )
        past = _PastSessions()
        before_fields = OneBag(workspace)
        written = 0
        for case in cases:
            for commit in order[written : case.upto]:  # the sessions before the case's cut
                past.add(message(commit), [f for f in commit["files"] if f in have])
            written = max(written, case.upto)
            text, before, now = case.task, case.before, case.now
            ranked = {
                f"relevance = {setting}": relevant_paths(
                    workspace, text, setting, before=before, now=now
                )
                for setting in SETTINGS
            }
            base, history = plain.rank(text), past.rank(text)
            opened = history_scores(workspace, terms(text), before=before, now=now)
            ranked.update(
                {
                    "plain BM25": base,
                    "history only": history,
                    "fusion (RRF)": _rrf(base, history),
                    BEFORE["bm25"]: before_fields.rank(text, None),
                    BEFORE["history"]: before_fields.rank(text, opened),
                }
            )
            for name, paths in ranked.items():
                found.setdefault(name, []).append(_rates(paths, case.truth))
    return found


def mean(rows: list[tuple[float, float]]) -> tuple[float, float]:
    return sum(r for r, _ in rows) / len(rows), sum(m for _, m in rows) / len(rows)
