"""``hippo revert``: a dreamed change undone from its snapshot; the confirmations reverts
made, listed and withdrawn."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from hippo_core.cli.common import current_workspace

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace


def revert(
    receipt: str = typer.Argument(
        "", metavar="RECEIPT", help="A receipt's id or path.", show_default=False
    ),
    force: bool = typer.Option(
        False, "--force", help="Revert even though the note was edited after the change."
    ),
    confirmed: bool = typer.Option(
        False,
        "--confirmed",
        help="List the text reverts confirmed, and whether this machine can prove each.",
    ),
    withdraw: str = typer.Option(
        "",
        "--withdraw",
        metavar="REVERT",
        help="Withdraw the confirmation of a revert receipt (its id).",
        show_default=False,
    ),
) -> None:
    """Put a note back as it was before a dreamed change, with a revert receipt."""
    from hippo_core.base.errors import UsageError

    found = current_workspace()
    if sum((bool(receipt), confirmed, bool(withdraw))) != 1:
        raise UsageError("give a RECEIPT to revert, or --confirmed, or --withdraw REVERT")
    if confirmed:
        _list(found)
        return
    if withdraw:
        from hippo_core.dream.receipts import withdraw as withdraw_confirmation

        record = withdraw_confirmation(found, withdraw)
        typer.echo(f"withdrawn: the confirmation of {withdraw} in {record.get('note')}")
        return
    from hippo_core.dream.revert import revert as run_revert
    from hippo_core.plugins.manager import load_plugins

    done = run_revert(found, load_plugins(), receipt, force=force)
    note = found.relative(found.notes_dir / done.note)
    typer.echo(f"reverted {note}; receipt {found.relative(done.receipt)}")
    if done.detail:
        from hippo_core.base.terminal import printable

        typer.echo(printable(f"warning: {done.detail}"), err=True)


def _list(workspace: Workspace) -> None:
    from hippo_core.base.terminal import printable
    from hippo_core.dream.receipts import confirmations

    for record, why in confirmations(workspace):
        text = " ".join(str(record.get("confirmed") or "(nothing: it undid a new text)").split())
        state = "confirmed" if not why else f"not held true: {why}"
        line = f"{record.get('id')}  {record.get('note')}  {state}\n  {text}"
        typer.echo(printable(line))
