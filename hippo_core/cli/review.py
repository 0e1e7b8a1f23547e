"""``hippo review``: what waits for a verdict, proposals and the queues plugins add alike.

A single proposal takes ``--confirm`` or ``--reject``. An item of a queue (the sleep pack's
drafts) is decided part by part: ``--approve OP``, ``--deny OP=CRITIQUE``, or the whole list
as JSON with ``--decisions FILE`` (``-`` reads standard input).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import typer

from hippo_core.base.errors import UsageError
from hippo_core.base.terminal import printable
from hippo_core.cli.common import JSON_OPTION, current_workspace, print_json

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


def review(
    item: str | None = typer.Argument(
        None, metavar="[ID]", help="A proposal's or a draft's id; none lists what waits."
    ),
    confirm: bool = typer.Option(False, "--confirm", help="Confirm a proposal: apply it."),
    reject: bool = typer.Option(False, "--reject", help="Reject a proposal: nothing changes."),
    notes: str = typer.Option("", "--notes", "--note", metavar="TEXT", help="Why, for the record."),
    approve: list[int] = typer.Option(
        [], "--approve", metavar="OP", help="Approve operation OP of a draft (repeatable)."
    ),
    deny: list[str] = typer.Option(
        [],
        "--deny",
        metavar="OP=CRITIQUE",
        help="Deny operation OP of a draft, saying what to change (repeatable).",
    ),
    decisions: str | None = typer.Option(
        None,
        "--decisions",
        metavar="FILE",
        help='A JSON list of decisions, [{"op": 0, "verdict": "approve"}, ...]; - reads stdin.',
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """List proposals and drafts waiting for a verdict, show one, or decide it."""
    from hippo_core.actions.review import queue_of
    from hippo_core.plugins.manager import load_plugins

    found = current_workspace()
    plugins = load_plugins()
    if confirm and reject:
        raise UsageError("give --confirm or --reject, not both")
    per_part = bool(approve or deny or decisions is not None)
    if item is None:
        if confirm or reject or per_part:
            raise UsageError("name what to decide: hippo review ID --confirm (or --approve OP)")
        _list(found, plugins, as_json)
        return
    queue = queue_of(found, plugins, item)
    if queue is not None:
        if confirm or reject:
            raise UsageError(
                f"{item} is a {queue.name}: decide each operation with --approve OP or "
                "--deny OP=CRITIQUE"
            )
        given = _decisions(approve, deny, decisions)
        if given is None:
            view = queue.show(found, item)
            print_json(view) if as_json else typer.echo(printable(queue.render(view)), nl=False)
            return
        from hippo_core.agents.deciders import at_terminal

        result = queue.decide(found, plugins, item, given, notes, by=at_terminal())
        if as_json:
            print_json(result)
        else:
            for line in result.get("lines", []):
                typer.echo(printable(line))
        if not result.get("ok", True):
            raise typer.Exit(1)
        return
    if per_part:
        from hippo_core.dream import queue as proposals

        proposals.load(found, item)  # an id that is neither a draft nor a proposal: one line
        raise UsageError(f"{item} is a proposal: give --confirm or --reject")
    _proposal(found, plugins, item, confirm, reject, notes, as_json)


def _list(found: Workspace, plugins: Plugins, as_json: bool) -> None:
    from hippo_core.actions.review import PROPOSAL, review_items

    rows = review_items(found, plugins)
    if as_json:
        print_json(rows)
        return
    for row in rows:
        if row["type"] == PROPOSAL:
            line = f"{row['id']}  {row.get('pass')}  {row['kind']}  {row['note']}"
        else:
            line = f"{row['id']}  {row['type']}  {row['summary']}"
        typer.echo(printable(line))
    if not rows:
        typer.echo("nothing is waiting for a verdict", err=True)


def _decisions(
    approve: list[int], deny: list[str], path: str | None
) -> list[dict[str, Any]] | None:
    """The decisions the options give, in one list; None when none were given."""
    if path is not None:
        if approve or deny:
            raise UsageError("give --decisions, or --approve and --deny, not both")
        return _read_decisions(path)
    if not (approve or deny):
        return None
    given: list[dict[str, Any]] = [{"op": op, "verdict": "approve"} for op in approve]
    for text in deny:
        op, sep, critique = text.partition("=")
        if not sep or not op.strip().isdigit():
            raise UsageError(
                f"--deny {text!r}: give the operation and the critique, as --deny 1='why'"
            )
        given.append({"op": int(op), "verdict": "deny", "critique": critique})
    return given


def _read_decisions(path: str) -> list[dict[str, Any]]:
    from pathlib import Path

    shown = "standard input" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--decisions {shown}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"--decisions {shown}: not UTF-8; save it as UTF-8") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--decisions {shown}: not JSON ({exc})") from None
    if isinstance(value, dict) and "decisions" in value:
        value = value["decisions"]
    if not isinstance(value, list) or not all(isinstance(d, dict) for d in value):
        raise UsageError(
            f"--decisions {shown}: 'decisions' must be a non-empty list of "
            "{op, verdict, critique?}"
        )
    return value


def _proposal(
    found: Workspace,
    plugins: Plugins,
    proposal: str,
    confirm: bool,
    reject: bool,
    notes: str,
    as_json: bool,
) -> None:
    from hippo_core.actions.review import decide_proposal
    from hippo_core.dream import queue

    if not (confirm or reject):
        record = queue.load(found, proposal)
        if as_json:
            print_json(record)
            return
        kind = plugins.kinds().get(str(record.get("kind")))
        _show(record, sorted(kind.fields) if kind is not None else [])
        return
    from hippo_core.agents.deciders import at_terminal

    verdict = "confirm" if confirm else "reject"
    result = decide_proposal(found, plugins, proposal, verdict, notes, by=at_terminal())
    for line in result["lines"]:
        typer.echo(printable(line))


def _show(record: dict[str, Any], fields: list[str]) -> None:
    """The proposal as its reviewer sees it, with the keys its kind adds (``fields``)."""
    # A proposal's text is a model's, from turns and notes: none of it may drive the
    # terminal, and a text of several lines is quoted, so no line of it passes for ours.
    from hippo_core.base.terminal import QUOTE, labelled

    lines = [
        f"proposal {record['id']} ({record.get('pass')}, {record['kind']})",
        f"note: {record['note']}",
        "evidence: "
        + ", ".join(f"{e['session']} turn {e['ordinal']}" for e in record.get("evidence", [])),
        *labelled("reason", record.get("reason", "")),
    ]
    for key in fields:
        if key in record:
            value = record[key]
            lines += labelled(key, value if isinstance(value, str) else json.dumps(value))
    for mark, key in (("--- old", "old"), ("+++ new", "new")):
        text = str(record.get(key) or "")
        if key == "old" and not text:
            continue
        several = len(text.splitlines()) > 1 or "\r" in text
        lines += [
            mark,
            *([f"{QUOTE}{line}".rstrip() for line in text.splitlines()] if several else [text]),
        ]
    for line in lines:
        typer.echo(printable(line))
