"""The built-in linter findings, with their exact words and levels.

``invalid frontmatter`` (the block is not valid YAML) and ``unreadable note`` are errors;
``missing frontmatter``, ``bad frontmatter``, ``dangling link`` and ``overdue`` are warnings.
"""

from __future__ import annotations

from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt

    from hippo_core.base.findings import Finding
    from hippo_core.notes.note import Note
    from hippo_core.workspace.folder import Workspace

ERRORS = frozenset({"invalid frontmatter", "unreadable note"})


@hookimpl
def hippo_lint_note(workspace: Workspace, note: Note) -> list[Finding]:
    from hippo_core.base.findings import Finding

    where = f"{workspace.settings.notes_dir}/{note.path}"
    findings = [
        Finding("error" if p.code in ERRORS else "warning", p.code, p.detail, where, p.line)
        for p in note.problems
    ]
    if not note.has_frontmatter and not note.problems:
        findings.append(Finding("warning", "missing frontmatter", "", where, 1))
    for target, line in note.links:
        if workspace.notes.resolve(target) is None:
            findings.append(Finding("warning", "dangling link", f"[[{target}]]", where, line))
    review_after = note.meta.review_after
    if review_after is not None and review_after < today():
        findings.append(Finding("warning", "overdue", f"review_after {review_after}", where, 1))
    return findings


def today() -> dt.date:
    """Today in UTC: a note is overdue once its review_after is before this date."""
    from hippo_core.base.clock import utc_now

    return utc_now().date()


def today_ordinal() -> int:
    """:func:`today`'s ordinal, without importing :mod:`datetime` (the first prompt's
    linter counts): the days since 1970-01-01 in UTC by hippo's clock, and that day's
    ordinal."""
    from hippo_core.base.clock import now

    return int(now() // 86_400) + 719_163
