"""The sleep pack's records on the workspace: files are the contract.

Under ``.hippo/sleep/``::

    fragments/<id>.json     short-term: what an agent or a person remembered   local
    pruned/<id>.json        fragments consumed by a landed operation, or aged out  local
    intents.json            near-term: open loops shown at session start       local
    state.json              bedtime, misses, the last tend and check           local
    events.jsonl            every event, one JSON object a line                local
    briefs/<id>.json        what the main model said mattered                  committed
    drafts/<id>.json        drafts of operations and their verdicts            committed
    forget/<core id>.json   a core flagged to be purged at the next tick       committed
    tombstones/<id>.json    what a purge removed (never the content)           committed

Long-term cores are notes under ``<notes_dir>/<cores_dir>/`` (:mod:`.cores`), and the
receipts of what landed are hippo's own. Every file is written whole and atomically, and
only its owner reads it (folders 0700, files 0600, whatever the umask: what agents
remembered and said is there); ids sort by time. A fragment is never edited: it is moved
to ``pruned/`` when consumed.

Text is redacted as it comes in (``redact_text``, as transcripts are): a fragment's text
and topic, a brief's summary and hints. What is kept, drafted, landed or sent on is built
from these, so a secret an agent saw never reaches a committed file or the drafting model.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core import (
    HippoError,
    json_objects_in,
    new_id,
    owner_only_append,
    owner_only_write,
    read_json_object,
    redact_text,
)
from hippo_core import now as clock_now

if TYPE_CHECKING:
    from hippo_core import Workspace


def folder(workspace: Workspace, *parts: str) -> Path:
    return workspace.hippo_dir.joinpath("sleep", *parts)


def named(workspace: Workspace, kind: str, record_id: object) -> Path:
    """``.hippo/sleep/<kind>/<record_id>.json``. Ids come from records a person or a
    teammate can edit (a draft, a forget flag, a core's file): one that is not a plain file
    name is refused, so that no id leads out of the store."""
    if not plain(record_id):
        raise HippoError(
            f"{kind}: {record_id!r} is not a record id (a file name: no '/', '\\' or leading '.')"
        )
    return folder(workspace, kind, f"{record_id}.json")


def plain(record_id: object) -> bool:
    """Whether ``record_id`` can name a record's file in its folder."""
    return (
        isinstance(record_id, str)
        and bool(record_id)
        and not record_id.startswith(".")
        and not any(c in record_id for c in "/\\\0")
    )


def _top(path: Path) -> Path:
    """The store's folder (``.hippo/sleep/``) that holds ``path``."""
    for above in path.parents:
        if above.name == "sleep" and above.parent.name == ".hippo":
            return above
    raise ValueError(f"{path} is not in a sleep store")


def now() -> float:
    """The cycle's clock: hippo's own (``HIPPO_NOW`` when set)."""
    return clock_now()


def iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def day(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d")


def dump(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, record: dict[str, Any]) -> None:
    owner_only_write(path, dump(record), top=_top(path))


def read(path: Path, workspace: Workspace, kind: str) -> dict[str, Any]:
    return read_json_object(path, workspace.relative(path), kind=kind)


def records(workspace: Workspace, name: str) -> list[dict[str, Any]]:
    """Every readable record in ``.hippo/sleep/<name>/``, oldest first."""
    return [record for _path, record in json_objects_in(folder(workspace, name))]


def records_one(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when it is gone or unreadable."""
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def record_id(prefix: str) -> str:
    """A new record's id: ``prefix`` and a time-sorted id, so listing a folder lists
    history."""
    return f"{prefix}{new_id()}"


# -- fragments ----------------------------------------------------------------------------


def add_fragment(
    workspace: Workspace,
    content: str,
    *,
    topic: str = "",
    verbatim: bool = False,
    source: str = "agent",
    session: str | None = None,
    created: float | None = None,
) -> dict[str, Any]:
    """Keep a fragment, dated now (or ``created``: an eval's fragments have a date of their
    own, so that the prompt a recording answered is the same on any day)."""
    text = content.strip()
    if not text:
        raise HippoError("a fragment needs text: hippo remember 'what to keep'")
    record = {
        "id": record_id("f"),
        "content": redact_text(text),
        "topic": redact_text(" ".join(topic.split())),
        "source": source,
        "verbatim": verbatim,
        "session": session,
        "created": now() if created is None else created,
    }
    write(named(workspace, "fragments", record["id"]), record)
    note_fate(workspace, str(record["id"]), REMEMBERED)
    return record


#: What becomes of a fragment, as ``fates.jsonl`` keeps it: every fragment is remembered,
#: then pending (in ``fragments/``) until it is in a core, dropped by a review, aged out or
#: purged. ``hippo sleep audit`` reads it, and names a fragment that is in no state.
REMEMBERED, IN_A_CORE, DROPPED, AGED_OUT, PURGED, RESTORED = (
    "remembered",
    "in a core",
    "dropped",
    "aged out",
    "purged",
    "restored",
)


def note_fate(workspace: Workspace, fragment_id: str, fate: str, why: str = "") -> None:
    """Add a line to ``fates.jsonl``: what became of ``fragment_id``, and why (never its
    words: a draft and an operation, or a core's id)."""
    record = {"id": fragment_id, "fate": fate, "at": now()}
    append_record(workspace, "fates.jsonl", {**record, "why": why} if why else record)


def fates(workspace: Workspace) -> dict[str, dict[str, Any]]:
    """Every fragment ever remembered here, with the last thing that became of it."""
    found: dict[str, dict[str, Any]] = {}
    for line in _lines(folder(workspace, "fates.jsonl")):
        if isinstance(line.get("id"), str):
            found[line["id"]] = line
    return found


def fragments(workspace: Workspace) -> list[dict[str, Any]]:
    """Short-term fragments, oldest first (a fragment also in ``pruned/`` was consumed:
    a run stopped between the two writes, and it is settled here)."""
    pruned = {p.stem for p in folder(workspace, "pruned").glob("*.json")}
    found = []
    for record in records(workspace, "fragments"):
        if record.get("id") in pruned:
            named(workspace, "fragments", record["id"]).unlink(missing_ok=True)
            continue
        found.append(record)
    return found


def prune(
    workspace: Workspace, ids: list[str], why: str, fate: str, *, counted_in: str = ""
) -> list[str]:
    """Move the fragments ``ids`` that still exist to ``pruned/``, their ``fate`` noted
    (:data:`IN_A_CORE`, :data:`DROPPED`, :data:`AGED_OUT`); returns those moved.
    ``counted_in`` is the core a repeated fact was counted in (no draft says so: a purge
    of that core finds the fragment by it)."""
    moved = []
    for fragment_id in ids:
        if not plain(fragment_id):  # a hand-edited draft's: no such fragment
            continue
        source = named(workspace, "fragments", fragment_id)
        try:
            record = json.loads(source.read_bytes())
        except (OSError, ValueError):
            continue
        record.update(pruned_at=now(), pruned_because=why)
        if counted_in:
            record["counted_in"] = counted_in
        write(folder(workspace, "pruned", source.name), record)
        source.unlink(missing_ok=True)
        note_fate(workspace, fragment_id, fate, why)
        moved.append(fragment_id)
    return moved


def restore(workspace: Workspace, ids: list[str]) -> list[str]:
    """Move the fragments ``ids`` back from ``pruned/`` to short-term (a purge gives back
    what the forgotten core only held); returns those moved."""
    moved = []
    for fragment_id in ids:
        if not plain(fragment_id):
            continue
        source = named(workspace, "pruned", fragment_id)
        record = records_one(source)
        if record is None:
            continue
        for key in ("pruned_at", "pruned_because", "counted_in"):
            record.pop(key, None)
        write(folder(workspace, "fragments", source.name), record)
        source.unlink(missing_ok=True)
        note_fate(workspace, fragment_id, RESTORED)
        moved.append(fragment_id)
    return moved


def scrub_texts(workspace: Workspace, texts: list[str]) -> int:
    """Take ``texts`` out of the briefs, the drafts and the JSON-lines records (events,
    what the webhook and the ripple kept): a string value holding one becomes
    ``[purged]``. The count of records rewritten."""
    if not texts:
        return 0
    changed = 0
    for name in ("briefs", "drafts"):
        for path in sorted(folder(workspace, name).glob("*.json")):
            record = records_one(path)
            if record is not None and _scrubbed(record, texts):
                write(path, record)
                changed += 1
    for name in ("events.jsonl", "notified.jsonl", "ripples.jsonl"):
        path = folder(workspace, name)
        lines = _lines(path)
        hit = [line for line in lines if _scrubbed(line, texts)]
        if hit:
            body = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
            owner_only_write(path, body, top=folder(workspace))
            changed += len(hit)
    return changed


def _scrubbed(value: Any, texts: list[str]) -> bool:
    """Replace, in place, every string of ``value`` (a dict or list) that holds one of
    ``texts`` with ``[purged]``; whether anything was."""
    found = False
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in list(items):
        if isinstance(item, str) and any(t in item for t in texts):
            value[key] = "[purged]"
            found = True
        elif isinstance(item, dict | list) and _scrubbed(item, texts):
            found = True
    return found


# -- briefs -------------------------------------------------------------------------------


def add_brief(
    workspace: Workspace,
    summary: str,
    *,
    promote: list[str],
    noise: list[str],
    completed: list[str],
    by: str = "the main model",
) -> dict[str, Any]:
    if not summary.strip():
        raise HippoError("a brief needs a summary of what mattered: hippo brief --summary TEXT")
    record = {
        "id": record_id("b"),
        "summary": redact_text(summary.strip()),
        "promote_hints": [redact_text(h.strip()) for h in promote if h.strip()],
        "noise_hints": [redact_text(h.strip()) for h in noise if h.strip()],
        "completed_intents": [redact_text(i.strip()) for i in completed if i.strip()],
        "written_by": by,
        "created_at": now(),
        "consumed_at": None,
        "consumed_by_draft": None,
        "parked": False,
    }
    write(named(workspace, "briefs", record["id"]), record)
    return record


def briefs(workspace: Workspace) -> list[dict[str, Any]]:
    return records(workspace, "briefs")


def open_brief(workspace: Workspace) -> dict[str, Any] | None:
    """The newest brief neither consumed, parked, nor spent by a sleep that failed."""
    waiting = [
        b
        for b in briefs(workspace)
        if not b.get("consumed_at") and not b.get("parked") and not b.get("failed_at")
    ]
    return waiting[-1] if waiting else None


def save_brief(workspace: Workspace, brief: dict[str, Any]) -> None:
    write(named(workspace, "briefs", brief["id"]), brief)


def consume_brief(workspace: Workspace, brief_id: str | None, draft_id: str | None) -> None:
    """Consume ``brief_id`` (by ``draft_id``) and every older open brief it superseded."""
    if not brief_id:
        return
    for brief in briefs(workspace):
        if brief.get("consumed_at"):
            continue
        if brief["id"] == brief_id:
            brief.update(consumed_at=now(), consumed_by_draft=draft_id)
        elif brief["id"] < brief_id:
            brief.update(consumed_at=now(), consumed_by_draft=f"superseded-by-{brief_id}")
        else:
            continue
        save_brief(workspace, brief)


# -- drafts -------------------------------------------------------------------------------


def drafts(workspace: Workspace) -> list[dict[str, Any]]:
    return records(workspace, "drafts")


def draft_path(workspace: Workspace, draft_id: str) -> Path:
    return named(workspace, "drafts", draft_id)


def load_draft(workspace: Workspace, draft_id: str) -> dict[str, Any]:
    if not plain(draft_id) or not draft_path(workspace, draft_id).is_file():
        raise HippoError(f"no draft '{draft_id}'; `hippo review` lists the drafts waiting")
    return read(draft_path(workspace, draft_id), workspace, "draft")


def save_draft(workspace: Workspace, draft: dict[str, Any]) -> None:
    write(draft_path(workspace, draft["id"]), draft)


def chain(workspace: Workspace, cluster_id: str) -> list[dict[str, Any]]:
    """The attempts of one chain, by attempt number."""
    found = [d for d in drafts(workspace) if d.get("cluster_id") == cluster_id]
    return sorted(found, key=lambda d: int(d.get("attempt", 1)))


# -- intents, state, events ----------------------------------------------------------------


def intents(workspace: Workspace) -> list[dict[str, Any]]:
    path = folder(workspace, "intents.json")
    try:
        value = json.loads(path.read_bytes())
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return []  # a damaged file is replaced at the next write
    found = value.get("intents") if isinstance(value, dict) else None
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


def save_intents(workspace: Workspace, found: list[dict[str, Any]]) -> None:
    write(folder(workspace, "intents.json"), {"intents": found})


def set_intent(workspace: Workspace, topic: str, text: str, **extra: Any) -> None:
    """Leave (or replace) the one intent about ``topic``."""
    found = [i for i in intents(workspace) if i.get("topic") != topic]
    found.append({"id": record_id("i"), "topic": topic, "intent": text, "created": now(), **extra})
    save_intents(workspace, found)


def drop_intent(workspace: Workspace, topic: str) -> bool:
    found = intents(workspace)
    kept = [i for i in found if i.get("topic") != topic]
    if len(kept) != len(found):
        save_intents(workspace, kept)
    return len(kept) != len(found)


def state(workspace: Workspace) -> dict[str, Any]:
    path = folder(workspace, "state.json")
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def save_state(workspace: Workspace, value: dict[str, Any]) -> None:
    write(folder(workspace, "state.json"), value)


def append_event(workspace: Workspace, record: dict[str, Any]) -> None:
    """Add one line to ``events.jsonl``; a line is written with one call, whole."""
    append_record(workspace, "events.jsonl", record)


def append_record(workspace: Workspace, name: str, record: dict[str, Any]) -> None:
    """Add one line to the JSON lines file ``name``, written with one call, whole."""
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    owner_only_append(folder(workspace, name), line, top=folder(workspace))


def events(workspace: Workspace) -> list[dict[str, Any]]:
    """Every event, oldest first, with what the webhook made of it (``sent``, from
    ``notified.jsonl``) when it was sent one."""
    found = _lines(folder(workspace, "events.jsonl"))
    sent = {n.get("id"): n for n in _lines(folder(workspace, "notified.jsonl"))}
    for event in found:
        outcome = sent.get(event.get("id"))
        if outcome is not None:
            event["sent"] = {k: v for k, v in outcome.items() if k != "id"}
    return found


def _lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON lines file; a torn last line (a run killed mid-write) is
    skipped."""
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    found = []
    for line in raw.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found
