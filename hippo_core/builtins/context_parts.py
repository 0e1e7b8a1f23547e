"""The five built-in parts of the context block.

Entry section, required notes and the session line are required; relevant notes and the
linter counts are optional. (Dreaming adds its warnings as a part of its own.) The optional
parts are made only when asked for, from the notes index: a ranking query and two counts.
"""

from __future__ import annotations

from hippo_core.base.errors import HippoError
from hippo_core.context.budget import ContextPart
from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

ENTRY, REQUIRED, SESSION, RELEVANT, LINTER = 20, 30, 40, 50, 60
#: The plugin whose linter findings the counts can be read from the index.
BUILTIN_LINTER = "hippo_core.builtins.lint"


@hookimpl
def hippo_context_parts(
    workspace: Workspace, session: str | None, task: str | None
) -> list[ContextPart]:
    parts = [
        ContextPart("entry section", lambda: _entry_section(workspace), True, ENTRY),
        ContextPart("required notes", lambda: _required(workspace), True, REQUIRED),
    ]
    if session is not None:
        make = lambda: _session_line(workspace, session)  # noqa: E731
        parts.append(ContextPart("session line", make, True, SESSION))
    if task is not None:
        parts.append(
            ContextPart("relevant notes", lambda: _relevant(workspace, task), False, RELEVANT)
        )
    parts.append(ContextPart("linter counts", lambda: _linter(workspace), False, LINTER))
    return parts


def _entry_section(workspace: Workspace) -> str:
    from hippo_core.notes.text import decode_note, entry_section

    settings = workspace.settings
    path = workspace.inside(settings.notes_dir, settings.entry_note)
    shown = workspace.relative(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
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
    if not section:
        return ""
    dreamed = _dreamed(workspace, settings.entry_note)
    return f"{section}\n" + (f"({settings.entry_note}: {dreamed})\n" if dreamed else "")


def _dreamed(workspace: Workspace, note: str) -> str:
    """``dreamed <date>, receipt <id>`` when a model changed ``note`` lately, else ""."""
    from hippo_core.base.clock import now
    from hippo_core.dream.marks import mark

    return mark(workspace, note, now())


def _required(workspace: Workspace) -> str:
    return "".join(f"required: {path}\n" for path in workspace.settings.required_notes)


def _session_line(workspace: Workspace, session: str) -> str:
    from hippo_core.agents.sessions import read_record, session_id

    record = read_record(workspace, session)
    sid = record.get("id") or session_id(session)
    return (
        f"session: {sid} {record.get('tool') or 'unknown'} {record.get('started') or 'unknown'}\n"
    )


def task_words(task: str) -> list[str]:
    """The task's distinct words of three or more letters or digits, lower case, in order."""
    from hippo_core.notes.text import words

    return list(dict.fromkeys(words(task)))


def _relevant(workspace: Workspace, task: str) -> str:
    """Up to five notes scoring above zero, best first, as ``relevance`` ranks them."""
    from hippo_core.context.relevance import MAX_RELEVANT, relevant_paths

    # A note the block gives already (the entry note, a required one) is not listed again.
    settings = workspace.settings
    given = {settings.entry_note, *settings.required_notes}
    best = relevant_paths(workspace, task, limit=MAX_RELEVANT + len(given))
    if not workspace.notes_index.fresh(best):  # one changed since the index looked at it
        best = relevant_paths(workspace, task, limit=MAX_RELEVANT + len(given))
    best = [path for path in best if path not in given][:MAX_RELEVANT]
    if not best:
        return ""
    shown = workspace.notes_index.shown(best)
    lines = [
        f"- {title}: {first_line}".rstrip()
        + (f" ({mark})" if (mark := _dreamed(workspace, path)) else "")
        for path, (title, first_line) in zip(best, shown, strict=True)
    ]
    return "relevant:\n" + "".join(f"{line}\n" for line in lines)


def _linter(workspace: Workspace) -> str:
    from hippo_core.builtins.lint import today_ordinal
    from hippo_core.plugins.manager import load_plugins

    linters = [p.name for p in load_plugins().implementers("hippo_lint_note")]
    if linters == [BUILTIN_LINTER]:
        overdue = workspace.notes_index.overdue(today_ordinal())
        dangling = workspace.notes_index.dangling()
    else:  # another plugin's findings may count too: lint every note
        from hippo_core.notes.lint import lint_notes

        findings = lint_notes(workspace)
        overdue = sum(1 for f in findings if f.code == "overdue")
        dangling = sum(1 for f in findings if f.code == "dangling link")
    return f"linter: overdue={overdue} dangling={dangling}\n"
