"""The five built-in parts of the context block.

Entry section, required notes and the session line are required; relevant notes and the
linter counts are optional. (Dreaming adds its warnings as a part of its own.)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hippo_core.budget import ContextPart
from hippo_core.errors import HippoError
from hippo_core.plugins import hookimpl

if TYPE_CHECKING:
    from hippo_core.notes.note import Note
    from hippo_core.workspace import Workspace

ENTRY, REQUIRED, SESSION, RELEVANT, LINTER = 20, 30, 40, 50, 60
MAX_RELEVANT = 5
_WORD = re.compile(r"[^\W_]{3,}")


@hookimpl
def hippo_context_parts(
    workspace: Workspace, session: str | None, task: str | None
) -> list[ContextPart]:
    parts = [
        ContextPart("entry section", _entry_section(workspace), True, ENTRY),
        ContextPart("required notes", _required(workspace), True, REQUIRED),
    ]
    if session is not None:
        parts.append(ContextPart("session line", _session_line(workspace, session), True, SESSION))
    if task is not None:
        parts.append(ContextPart("relevant notes", _relevant(workspace, task), False, RELEVANT))
    parts.append(ContextPart("linter counts", _linter(workspace), False, LINTER))
    return parts


def _entry_section(workspace: Workspace) -> str:
    from hippo_core.notes.note import decode_note, entry_section

    path = workspace.entry_note_path
    shown = workspace.relative(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise HippoError(
            f"entry note {shown} does not exist; create it or set entry_note "
            "with `hippo config set entry_note PATH`"
        ) from None
    except OSError as exc:
        raise HippoError(f"entry note {shown} cannot be read: {exc.strerror}") from None
    text, why = decode_note(raw)
    if text is None:
        raise HippoError(f"entry note {shown} is {why}")
    section = entry_section(text)
    return f"{section}\n" if section else ""


def _required(workspace: Workspace) -> str:
    return "".join(f"required: {path}\n" for path in workspace.settings.required_notes)


def _session_line(workspace: Workspace, session: str) -> str:
    from hippo_core.sessions import read_record, session_id

    record = read_record(workspace, session)
    sid = record.get("id") or session_id(session)
    return (
        f"session: {sid} {record.get('tool') or 'unknown'} {record.get('started') or 'unknown'}\n"
    )


def task_words(task: str) -> list[str]:
    """The task's distinct words of three or more letters or digits, lower case, in order."""
    return list(dict.fromkeys(word.lower() for word in _WORD.findall(task)))


def rank(notes: list[Note], task: str) -> list[Note]:
    """Notes scoring above zero, best first: one point per task word in title or headings.

    Ties go to the most recently updated note (undated ones last), then to the path.
    """
    words = task_words(task)
    scored = []
    for note in notes:
        vocabulary = {
            w.lower() for text in (note.title, *note.headings) for w in _WORD.findall(text)
        }
        score = sum(1 for word in words if word in vocabulary)
        if score:
            updated = note.meta.updated.toordinal() if note.meta.updated else 0
            scored.append((-score, -updated, note.path, note))
    return [entry[-1] for entry in sorted(scored)]


def _relevant(workspace: Workspace, task: str) -> str:
    best = rank(list(workspace.notes), task)[:MAX_RELEVANT]
    if not best:
        return ""
    lines = [f"- {note.title}: {note.first_line}".rstrip() for note in best]
    return "relevant:\n" + "".join(f"{line}\n" for line in lines)


def _linter(workspace: Workspace) -> str:
    from hippo_core.notes.lint import lint_notes

    findings = lint_notes(workspace)
    overdue = sum(1 for f in findings if f.code == "overdue")
    dangling = sum(1 for f in findings if f.code == "dangling link")
    return f"linter: overdue={overdue} dangling={dangling}\n"
