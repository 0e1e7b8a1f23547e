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
(k = 60).
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

CUTS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
K = 5
TOP = 20
RRF_K = 60
BASELINES = ("plain BM25", "history only", "fusion (RRF)")
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


def replay(data: Path) -> dict[str, list[tuple[float, float]]]:
    """recall@5 and MRR@5 of each ranking, task by task, on ``data`` replayed in date order."""
    from hippo_core.index.ingest import ingest
    from hippo_core.relevance import SETTINGS, relevant_paths
    from hippo_core.workspace import Workspace
    from tests.claude_factory import ClaudeSession

    rows = lambda name: [  # noqa: E731
        json.loads(line) for line in (data / name).read_text().splitlines() if line.strip()
    ]
    commits, tasks = rows("commits.jsonl"), {t["sha"]: t for t in rows("tasks.jsonl")}
    order = sorted(commits, key=when)
    found: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["HIPPO_HOME"] = str(work / "home")
        os.environ["HIPPO_LOAD_PLUGINS"] = ""
        root = work / "ws"
        (root / ".hippo").mkdir(parents=True)
        (root / ".hippo" / "settings.toml").write_text('relevance = "history"\n')
        shutil.copytree(data / "notes", root / "notes")
        for commit in order:
            message = f"{commit['subject']}\n\n{commit['body']}".strip()
            # The session's first record is a second after its start: start it a second early.
            session = ClaudeSession(
                work / "claude", str(root), start=when(commit) - timedelta(seconds=1)
            )
            session.prompt(message)
            for path in commit["files"]:
                session.tool(
                    "Edit", file_path=str(root / "notes" / path), old_string="a", new_string="b"
                )
            session.answer("done").write()
        ingest(extra_dirs={"claude-code": (str(work / "claude"),)}, defaults=False)
        workspace = Workspace.open(root)
        index = workspace.notes_index
        have = set(index.notes())
        texts = {path: (root / "notes" / path).read_text(encoding="utf-8") for path in have}
        plain = _PlainBM25(
            {p: (n.title, list(n.headings)) for p, n in workspace.notes_index.notes().items()},
            texts,
        )
        past = _PastSessions()
        written = 0
        for low, high in itertools.pairwise(CUTS):
            upto, end = int(len(order) * low), int(len(order) * high)
            for commit in order[written:upto]:
                message = f"{commit['subject']}\n\n{commit['body']}".strip()
                past.add(message, [f for f in commit["files"] if f in have])
            written = upto
            last = when(order[upto - 1])
            before = last.timestamp() + 0.5  # the cut's sessions started at or before it
            now = (last + timedelta(hours=1)).timestamp()
            for commit in order[upto:end]:
                task = tasks.get(commit["sha"])
                truth = set(task["truth"]) & have if task else set()
                if not truth:
                    continue
                text = task["task"]
                ranked = {
                    f"relevance = {setting}": relevant_paths(
                        workspace, text, setting, before=before, now=now
                    )
                    for setting in SETTINGS
                }
                base, history = plain.rank(text), past.rank(text)
                ranked.update(
                    {
                        "plain BM25": base,
                        "history only": history,
                        "fusion (RRF)": _rrf(base, history),
                    }
                )
                for name, paths in ranked.items():
                    found.setdefault(name, []).append(_rates(paths, truth))
    return found


def mean(rows: list[tuple[float, float]]) -> tuple[float, float]:
    return sum(r for r, _ in rows) / len(rows), sum(m for _, m in rows) / len(rows)
