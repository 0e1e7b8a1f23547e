"""The built-in checks every proposal passes before a reviewer sees it.

In order: no secret in the new text (first, since a later check's problem may quote the
text, and problems are printed and kept), the note (a visible ``.md`` file below
``notes_dir`` that went into the prompt; for a kind that creates a note, a path below
``notes_dir`` where nothing exists yet), the evidence (each turn exists in the index), the
kind's own checks (and, for a new note, the linters), the new text drawn from the evidence,
and text humans confirmed by reverting (never changed again, the same change never made
again). The chain stops at the first check that fails: later checks need what earlier
ones establish.
"""

from __future__ import annotations

import stat
from pathlib import PurePosixPath

from hippo_core.dream.kinds import creates
from hippo_core.dream.model import CheckContext, Proposal


class NotePath:
    name = "note"

    def check(self, proposal: Proposal, context: CheckContext) -> list[str]:
        note = proposal.note
        path = PurePosixPath(note)
        if not note or "\\" in note or "\0" in note:
            return [f"note {note!r} is not a path below the notes folder"]
        if path.is_absolute() or ".." in path.parts:
            return [f"note {note!r} is outside the notes folder"]
        if any(part.startswith(".") for part in path.parts):
            return [f"note {note!r} is hidden (a name starts with '.'), so not a note"]
        if path.suffix != ".md":
            return [f"note {note!r} is not a .md file"]
        if creates(context.kinds.get(proposal.kind)):
            return _new_note(note, context)
        current = context.workspace.notes_dir
        for part in path.parts:
            current = current / part
            try:
                mode = current.lstat().st_mode
            except OSError:
                return [f"note {note!r} does not exist"]
            if stat.S_ISLNK(mode):
                return [f"note {note!r} goes through a symbolic link"]
        if not stat.S_ISREG(mode):
            return [f"note {note!r} is not a file"]
        try:
            current.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return [f"note {note!r} cannot be read as UTF-8 text"]
        if note == context.workspace.log_note:
            return [f"note {note!r} is the session log, which `hippo log` writes"]
        if note not in context.prompt_notes:
            return [f"note {note!r} was not in the prompt"]
        return []


def _new_note(note: str, context: CheckContext) -> list[str]:
    """A new note's path: nothing there yet, and no link or file on the way to it."""
    if note == context.workspace.log_note:
        return [f"note {note!r} is the session log, which `hippo log` writes"]
    current = context.workspace.notes_dir
    parts = PurePosixPath(note).parts
    for depth, part in enumerate(parts, start=1):
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            return []  # the applier makes the missing folders
        except OSError:
            return [f"note {note!r} cannot be looked up"]
        if depth == len(parts):
            return [f"note {note!r} exists already; a create makes a new note"]
        if stat.S_ISLNK(mode):
            return [f"note {note!r} goes through a symbolic link"]
        if not stat.S_ISDIR(mode):
            folder = "/".join(parts[:depth])
            return [f"note {note!r} is below {folder!r}, which is a file, not a folder"]
    return []


class EvidenceExists:
    """Each evidence turn is in the index and was in the prompt (shown, or a turn of a
    session it showed): a turn of another project, or of another day, that the proposer
    was never given is no evidence."""

    name = "evidence"

    def check(self, proposal: Proposal, context: CheckContext) -> list[str]:
        if not proposal.evidence:
            return ["evidence is empty: name at least one turn"]
        missing = [
            f"evidence session {e.session} turn {e.ordinal} is not in the index"
            for e in proposal.evidence
            if context.turn(e.session, e.ordinal) is None
        ]
        if missing or context.prompt_evidence is None:
            return missing
        return [
            f"evidence session {e.session} turn {e.ordinal} was not in the prompt: evidence "
            "is a turn the prompt showed, of a session it showed"
            for e in proposal.evidence
            if (e.session, e.ordinal) not in context.prompt_evidence
        ]


class DrawnFromEvidence:
    """The text a change brings comes from its evidence as a whole (:func:`~hippo_core.
    dream.quotes.undrawn`): its values, each, and most of its words. The evidence is the
    evidence turns (their text and times) and what the prompt showed of their sessions
    (times, task, handoff). A new note's frontmatter is hippo's shape, not the evidence's."""

    name = "drawn"

    def check(self, proposal: Proposal, context: CheckContext) -> list[str]:
        from hippo_core.dream.quotes import undrawn
        from hippo_core.notes.text import split_frontmatter

        if not proposal.new.strip():
            return []
        new = proposal.new
        if creates(context.kinds.get(proposal.kind)):
            new = new[split_frontmatter(new).body_start :]
        texts = [f"{e.session} turn {e.ordinal}" for e in proposal.evidence]  # a citation
        for e in proposal.evidence:
            turn = context.turn(e.session, e.ordinal)
            if turn is not None:
                # A time is also its day: a dated bullet is dated with the session's day.
                texts += [turn.text(), str(turn.started or ""), str(turn.started or "")[:10]]
            if context.session_text is not None:
                texts.append(context.session_text(e.session))
        return undrawn(new, proposal.old, "\n".join(dict.fromkeys(texts)))


class KindChecks:
    name = "kind"

    def check(self, proposal: Proposal, context: CheckContext) -> list[str]:
        kind = context.kinds.get(proposal.kind)
        if kind is None:
            known = ", ".join(sorted(context.kinds))
            return [f"kind {proposal.kind!r} is not one of: {known}"]
        new_note = creates(kind)
        raw = b"" if new_note else (context.workspace.notes_dir / proposal.note).read_bytes()
        turns = [context.turn(e.session, e.ordinal) for e in proposal.evidence]
        problems = kind.check(proposal, raw, [t for t in turns if t is not None])
        if new_note and not problems:
            problems = _lint_errors(proposal, context)
        return problems


def _lint_errors(proposal: Proposal, context: CheckContext) -> list[str]:
    """The error-level findings of every registered linter on a new note's text."""
    from hippo_core.notes.note import parse_note
    from hippo_core.plugins.manager import load_plugins

    note = parse_note(proposal.note, proposal.new.encode("utf-8"))
    return [
        f"new fails the linter: {f.code}" + (f": {f.detail}" if f.detail else "")
        for f in load_plugins().lint_note(context.workspace, note)
        if f.level == "error"
    ]


class HumanConfirmed:
    name = "human_confirmed"

    def check(self, proposal: Proposal, context: CheckContext) -> list[str]:
        from hippo_core.dream.receipts import undone_texts

        problems = []
        if not creates(context.kinds.get(proposal.kind)):
            # A new note has no text yet, so none a person confirmed.
            text = (context.workspace.notes_dir / proposal.note).read_text(encoding="utf-8")
            start = text.find(proposal.old) if proposal.old else -1
            end = start + len(proposal.old)
            for confirmed, receipt in context.confirmed(proposal.note):
                # Any copy of the text that overlaps `old` (which copy the person confirmed is
                # not known): one starting after `start - len + 1` and before `end`.
                lowest = max(0, start - len(confirmed) + 1)
                if start >= 0 and text.find(confirmed, lowest, end + len(confirmed) - 1) >= 0:
                    problems.append(f"old changes text a person confirmed by revert {receipt}")
        for undone, receipt in undone_texts(context.workspace, proposal.note):
            if " ".join(undone.split()) == " ".join(proposal.new.split()):
                problems.append(f"the same change was reverted by {receipt}")
        return problems


class NoSecrets:
    """Refuses a change whose new text holds what hippo redacts from transcripts: a token, a
    key, a password in a URL, a ``<private>`` span. A note is committed for the team to
    read, and a proposal is written to ``.hippo/proposals/`` before any reviewer sees it,
    so a secret is stopped here, before both."""

    name = "no-secrets"

    def check(self, proposal: Proposal, context: CheckContext) -> list[str]:
        import re

        from hippo_core.transcripts.privacy import redact_text

        texts = [("new", proposal.new)]
        texts += [(key, value) for key, value in proposal.extra.items() if isinstance(value, str)]
        for field, text in texts:
            redacted = redact_text(text)
            if redacted != text:
                kinds = sorted(set(re.findall(r"\[redacted:([\w-]+)\]", redacted))) or ["private"]
                return [
                    f"{field} holds what looks like a secret ({', '.join(kinds)}); hippo writes "
                    "none into a note or a proposal"
                ]
        return []
