"""The month's scripted model (bench/month.py): ``month_model.py --system-file PATH``, the
prompt on stdin, the reply on stdout. It plays the three parts a dream asks for, told apart
by the prompt's first line and the reviewer's system prompt:

- consolidate: for each ended session with a handoff, append the handoff's first sentence,
  dated, to each note the handoff links that the prompt shows, unless the note holds it
  already (one proposal per note and session, as the prompt asks);
- verify: where a shown turn states a changed fact's new value (8443, Postmark, 6380) and a
  line of the note that is not a dated entry still says the old one, replace that line's old
  value with the new one, citing the newest such turn;
- review: confirm, unless the change reads as transient status ("today", "worked as
  written", "is current"), which it rejects.

Each call appends one JSON line to ``$MONTH_MODEL_LOG``: the member (``$MONTH_MEMBER``),
the part, the prompt's size, the note a verify call was about, the proposals made, and a
consolidate call's whole prompt (what the bench checks each handoff against).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from month_book import CHANGES

TRANSIENT = re.compile(r"\btoday\b|worked as written|is current\b", re.I)
NOTE = re.compile(r"^### Note `([^`]+)`\n```+markdown\n(.*?)\n```+$", re.M | re.S)
TURN = re.compile(
    r"^### Session (\S+), turn (\d+) \(started ([^;,)]+)(.*?)(?=^### |^## |\Z)", re.M | re.S
)


def notes(prompt: str) -> dict[str, str]:
    return {path: text for path, text in NOTE.findall(prompt)}


def sessions(prompt: str) -> list[dict[str, Any]]:
    """The sessions the prompt lists: id, end, last turn ordinal and handoff."""
    found = []
    for part in re.split(r"^### Session ", prompt, flags=re.M)[1:]:
        head, _, body = part.partition("\n")
        if "," in head:  # a turn, "### Session X, turn N (...)"
            continue
        ended = re.search(r"^- ended: (\S+)", body, re.M)
        ordinals = re.findall(
            r"\d+", (re.search(r"^- turn ordinals: (.*)$", body, re.M) or [""])[0]
        )
        handoff = re.search(r"^- handoff[^:\n]*:\n```+markdown\n(.*?)\n```", body, re.M | re.S)
        found.append(
            {
                "id": head.strip(),
                "ended": ended.group(1).strip('"') if ended else "",  # a JSON string
                "last": int(ordinals[-1]) if ordinals else None,
                "handoff": handoff.group(1) if handoff else "",
            }
        )
    return found


def consolidate(prompt: str) -> list[dict[str, Any]]:
    shown = notes(prompt)
    proposals, seen = [], set()
    for session in sessions(prompt):
        if not session["handoff"] or not session["ended"][:1].isdigit() or session["last"] is None:
            continue
        first = re.split(r"(?<=\.)\s", session["handoff"].strip())[0]
        fact = re.sub(r"\[\[([^\]|#]+)[^\]]*\]\]", r"\1", first).strip()
        for link in re.findall(r"\[\[([^\]|#]+)", session["handoff"]):
            path = f"{link.strip()}.md"
            key = (path, session["id"])
            if path not in shown or fact in shown[path] or key in seen:
                continue
            seen.add(key)
            proposals.append(
                {
                    "note": path,
                    "kind": "append",
                    "old": "",
                    "new": f"- {session['ended'][:10]}: {fact}\n",
                    "reason": "The session's handoff records this.",
                    "evidence": [{"session": session["id"], "ordinal": session["last"]}],
                }
            )
    return proposals


def verify(prompt: str) -> list[dict[str, Any]]:
    shown = notes(prompt)
    if len(shown) != 1:
        return []
    [(path, note)] = shown.items()
    body = note.split("\n---\n", 1)[-1]
    turns = TURN.findall(prompt)
    proposals = []
    for old, new, _day in CHANGES:
        stating = [t for t in turns if new in t[3]]
        for line in body.split("\n"):
            if not stating or old not in line or re.match(r"\s*- \d{4}-\d\d-\d\d:", line):
                continue
            if note.count(line) != 1:
                continue
            newest = max(stating, key=lambda t: (t[2], int(t[1])))
            proposals.append(
                {
                    "note": path,
                    "kind": "replace",
                    "old": line,
                    "new": line.replace(old, new),
                    "reason": f"The newest turn says {new}.",
                    "evidence": [{"session": newest[0], "ordinal": int(newest[1])}],
                }
            )
    return proposals


def review(prompt: str) -> dict[str, str]:
    change = prompt.split("## The proposed change", 1)[-1].split("## The evidence turns", 1)[0]
    if TRANSIENT.search(change):
        return {"verdict": "reject", "notes": "Transient status, not a durable fact."}
    return {"verdict": "confirm", "notes": "The evidence turn states it."}


def main() -> int:
    system = ""
    if "--system-file" in sys.argv:
        with open(sys.argv[sys.argv.index("--system-file") + 1], encoding="utf-8") as handle:
            system = handle.read()
    prompt = sys.stdin.read()
    record: dict[str, Any] = {"member": os.environ.get("MONTH_MEMBER", ""), "bytes": len(prompt)}
    reply: Any
    if system.startswith("You are the reviewer"):
        record["part"], reply = "review", review(prompt)
    elif "# Task: fold what finished sessions learned" in prompt:
        record.update(part="consolidate", prompt=prompt)
        reply = consolidate(prompt)
    elif "# Task: check one note against transcript turns" in prompt:
        record.update(part="verify", note=next(iter(notes(prompt)), ""))
        reply = verify(prompt)
    else:
        record["part"], reply = "other", []
    if isinstance(reply, list):
        record["proposals"] = len(reply)
    log = os.environ.get("MONTH_MODEL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    sys.stdout.write(json.dumps(reply))
    return 0


if __name__ == "__main__":
    sys.exit(main())
