"""Long-term cores: ordinary notes under ``<notes_dir>/<cores_dir>/``.

A core is a note whose frontmatter says ``type: core``; its id is its file name without
``.md``. The body is the core's text under its title, then its satellites, the dated
episodes that are its evidence, under ``## Evidence``::

    ---
    type: core
    status: current
    topic: "deploy"
    evidence_count: 4
    updated: 2026-12-01
    created: 2026-11-20
    supersedes: "deploys-run-from-the-release-branch"
    ---
    # Deploys run from main

    Deploys run from main, after the tests pass on CI.

    ## Evidence

    - 2026-11-20: deploys go out from main now, not release/*
    - 2026-12-01: shipped from main again; the release branch is gone

A superseded core keeps its text and gains ``superseded_by``; ``hippo context`` and
``hippo search`` find cores like any note. Edits change only the lines they name, so a
person's own frontmatter keys and words stay as they were. What a core is written with
(its file name, title, text, rewording and episodes) is redacted first: it is committed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core import redact_text, split_frontmatter

if TYPE_CHECKING:
    from hippo_core import Workspace

EVIDENCE = "## Evidence"
_WORD = re.compile(r"[a-z0-9']+")
_SLUG = re.compile(r"[a-z0-9]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass
class Core:
    id: str
    path: str
    """Relative to ``notes_dir``."""
    meta: dict[str, Any]
    title: str
    text: str
    satellites: list[str] = field(default_factory=list)
    raw: bytes = b""

    @property
    def superseded_by(self) -> str:
        value = self.meta.get("superseded_by")
        return str(value) if value else ""

    @property
    def topic(self) -> str:
        value = self.meta.get("topic")
        return str(value) if value else ""

    @property
    def evidence_count(self) -> int:
        value = self.meta.get("evidence_count")
        return value if isinstance(value, int) and not isinstance(value, bool) else 1


def cores_root(workspace: Workspace, cores_dir: str) -> Path:
    return workspace.notes_dir / cores_dir


def all_cores(workspace: Workspace, cores_dir: str) -> list[Core]:
    """Every readable core, by path; notes in the folder that are not cores are skipped."""
    root = cores_root(workspace, cores_dir)
    found = []
    for path in sorted(root.rglob("*.md")) if root.is_dir() else []:
        relative = path.relative_to(workspace.notes_dir)
        if any(part.startswith(".") for part in relative.parts) or path.is_symlink():
            continue
        core = read_core(path, relative.as_posix())
        if core is not None:
            found.append(core)
    return found


def find_core(workspace: Workspace, cores_dir: str, given: str) -> Core | None:
    """A core by id (its file name without ``.md``) or by its path."""
    for core in all_cores(workspace, cores_dir):
        if given in (core.id, core.path, f"{workspace.settings.notes_dir}/{core.path}"):
            return core
    return None


def read_core(path: Path, relative: str) -> Core | None:
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    return parse_core(relative, raw)


def parse_core(relative: str, raw: bytes) -> Core | None:
    import yaml

    try:
        text = raw.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None
    split = split_frontmatter(text)
    try:
        meta = yaml.safe_load(split.block) if split.block is not None else None
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict) or meta.get("type") != "core":
        return None
    title, words, satellites = "", [], []
    section = "text"
    for line in text[split.body_start :].split("\n"):
        if not title and line.startswith("# "):
            title = line[2:].strip()
            continue
        if line.strip() == EVIDENCE:
            section = "evidence"
            continue
        if section == "evidence":
            if line.startswith("- "):
                satellites.append(line[2:].strip())
            elif line.startswith("## "):
                section = "after"
        elif section == "text":
            words.append(line)
    stem = relative.rsplit("/", 1)[-1].removesuffix(".md")
    body = "\n".join(words).strip()
    return Core(stem, relative, meta, title or stem, body, satellites, raw)


def title_of(content: str) -> str:
    """A core's title: its text's first line, at most 80 characters, cut at a word."""
    first = " ".join(content.strip().split("\n", 1)[0].split())
    if len(first) <= 80:
        return first.rstrip(".")
    return first[:80].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def new_path(workspace: Workspace, cores_dir: str, content: str, taken: set[str]) -> str:
    """A free path (relative to ``notes_dir``) for a new core named by its words."""
    words = _SLUG.findall(redact_text(content).lower())[:8]
    stem = "-".join(words)[:60].strip("-") or "core"
    root = cores_root(workspace, cores_dir)
    candidate, number = stem, 1
    while (root / f"{candidate}.md").exists() or candidate in taken:
        number += 1
        candidate = f"{stem}-{number}"
    return f"{cores_dir}/{candidate}.md"


def render_core(content: str, *, topic: str, date: str, meta: dict[str, Any]) -> str:
    """The whole note of a new core."""
    content, topic = redact_text(content), redact_text(topic)
    lines = ["---", "type: core", "status: current", f"topic: {json.dumps(topic)}"]
    lines += [f"{key}: {_value(value)}" for key, value in meta.items() if value is not None]
    lines += [f"updated: {date}", f"created: {date}", "---", f"# {title_of(content)}", ""]
    lines.append(content.strip())
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) or _DATE.fullmatch(str(value)):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def set_meta(raw: bytes, updates: dict[str, Any]) -> bytes:
    """The note with the frontmatter keys ``updates`` set (a line each, added or changed)."""
    text, crlf = _text(raw)
    split = split_frontmatter(text)
    if split.block is None:
        raise ValueError("the core has no frontmatter block")
    head, block, rest = _parts(text)
    lines = block.split("\n")
    for key, value in updates.items():
        line = f"{key}: {_value(value)}"
        at = next((n for n, old in enumerate(lines) if old.startswith(f"{key}:")), None)
        if at is None:
            lines.append(line)
        else:
            lines[at] = line
    return _bytes(head + "\n".join(lines) + rest, crlf)


def restate(raw: bytes, content: str) -> bytes:
    """The note with the core's text (between its title and ``## Evidence``) replaced."""
    text, crlf = _text(raw)
    content = redact_text(content)
    head, block, rest = _parts(text)
    body = rest
    title = re.search(r"^# .*$", body, re.M)
    start = title.end() + 1 if title else len("\n---\n")
    evidence = body.find(f"\n{EVIDENCE}\n", start - 1)
    end = evidence + 1 if evidence >= 0 else len(body)
    body = body[:start] + "\n" + content.strip() + "\n\n" + body[end:]
    return _bytes(head + block + body, crlf)


def add_satellite(raw: bytes, date: str, episode: str) -> bytes:
    """The note with ``- <date>: <episode>`` added at the end of its Evidence section."""
    text, crlf = _text(raw)
    line = f"- {date}: {' '.join(redact_text(episode).split())}"
    at = text.find(f"\n{EVIDENCE}\n")
    if at < 0:
        text = text.rstrip("\n") + f"\n\n{EVIDENCE}\n\n{line}\n"
        return _bytes(text, crlf)
    start = at + len(EVIDENCE) + 2
    following = re.search(r"^## ", text[start:], re.M)
    end = start + following.start() if following else len(text)
    section = text[start:end].rstrip("\n")
    joined = (section + "\n" if section.strip() else "\n") + line + "\n"
    tail = text[end:]
    return _bytes(text[:start] + joined + ("\n" + tail if tail else ""), crlf)


def _text(raw: bytes) -> tuple[str, bool]:
    text = raw.decode("utf-8")
    return text.replace("\r\n", "\n"), "\r\n" in text


def _bytes(text: str, crlf: bool) -> bytes:
    return (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")


def _parts(text: str) -> tuple[str, str, str]:
    """``(opening fence line, the block, the closing fence and everything after)``."""
    split = split_frontmatter(text)
    first = text.index("\n") + 1
    block = split.block or ""
    return text[:first], block.rstrip("\n"), text[first + len(block.rstrip("\n")) :]


def words(text: str) -> set[str]:
    """The words that count for closeness: four letters or more, lower case."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4}


def nearest(cores: list[Core], text: str, limit: int) -> list[Core]:
    """The live cores closest to ``text`` by shared words, at most ``limit``."""
    wanted = words(text)
    scored = []
    for core in cores:
        if core.superseded_by:
            continue
        shared = len(wanted & words(f"{core.topic} {core.title} {core.text}"))
        if shared:
            scored.append((-shared, core.path, core))
    return [core for _s, _p, core in sorted(scored, key=lambda t: t[:2])][:limit]
