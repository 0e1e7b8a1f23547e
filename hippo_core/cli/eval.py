"""``hippo eval pack``: measure a pack on its recorded cases (docs/eval.md).

The kernel is :mod:`hippo_core.packs.evals`, imported inside the command.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from hippo_core.base.errors import UsageError
from hippo_core.cli.common import command_group, subcommand

if TYPE_CHECKING:
    from hippo_core.packs.evals_result import CaseResult, EvalResult, Mode

app = command_group("Measure packs on recorded cases, and the memory of this workspace.")

#: What each rate's counts are, as its line says them: "(1 of 2 expected changes applied)".
COUNTS = {
    "validity": "proposals passed the checks",
    "precision": "applied changes were expected",
    "recall": "expected changes applied",
    "agreement": "verdicts agree with the expectation",
}


@subcommand(app, "pack")
def pack(
    spec: str = typer.Argument(
        ..., metavar="PACK", help="A pack folder, or the name of a pack that runs here."
    ),
    cases: list[str] = typer.Option(
        [], "--case", metavar="NAME", help="Run only this case (repeat for more)."
    ),
    record: bool = typer.Option(
        False, "--record", help="Call the model and write each case's recorded.json."
    ),
    replay: bool = typer.Option(
        False, "--replay", help="Call no model: answer from each case's recorded.json."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object, for CI."),
) -> None:
    """Run a pack's eval cases; print validity, precision, recall and agreement."""
    from hippo_core.packs.evals import run_eval
    from hippo_core.packs.evals_case import CaseError

    if record and replay:
        raise UsageError("give --record or --replay, not both")
    mode: Mode = "record" if record else "replay" if replay else "live"
    progress = (lambda case: None) if as_json else _case_line
    try:
        result = run_eval(spec, cases=cases, mode=mode, progress=progress)
    except CaseError as error:
        for line in error.problems:
            typer.echo(f"error: {line}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        _summary(result)
    if not result.ok:
        raise typer.Exit(1)


def _case_line(case: CaseResult) -> None:
    typer.echo(f"{case.name}: {case.summary()}")


def _summary(result: EvalResult) -> None:
    for name, rate in result.rates().items():
        shown = "   -" if rate.value is None else f"{rate.value:.2f}"
        typer.echo(f"{name:<11}{shown}  ({rate.hits} of {rate.total} {COUNTS[name]})")
    totals = result.totals()
    typer.echo(f"{'calls':<11}{totals['calls']}")
    typer.echo(f"{'bytes':<11}{totals['bytes_in']:,} in, {totals['bytes_out']:,} out")
    typer.echo(f"{'seconds':<11}{totals['seconds']:.2f}")
    failed = sum(case.status != "ok" for case in result.cases)
    if failed:
        cases = f"{len(result.cases)} case{'s' if len(result.cases) != 1 else ''}"
        verb = "is" if failed == 1 else "are"
        typer.echo(f"{failed} of {cases} failed and {verb} left out of the figures", err=True)


@subcommand(app, "verify")
def verify(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """Measure verify's turn search on this workspace's sessions: recall and precision."""
    from hippo_core.cli.common import current_workspace, print_json
    from hippo_core.dream.measure import measure_verify

    found = measure_verify(current_workspace())
    if as_json:
        print_json(found)
        return
    if not found["truth"]:
        typer.echo(
            f"no turn of this workspace's {found['sessions']} sessions read, edited or cited "
            f"any of its {found['notes']} notes: nothing to measure yet"
        )
        return
    shown = {
        k: "   -" if v is None else f"{v:.2f}"
        for k, v in found.items()
        if k.endswith(("recall", "precision"))
    }
    typer.echo(f"notes        {found['notes']} ({found['notes_touched']} touched by a turn)")
    typer.echo(f"truth        {found['truth']} turns read, edited or cited a note")
    typer.echo(f"recall       {shown['recall']}  (the search as a dream asks it)")
    typer.echo(f"text recall  {shown['text_recall']}  (from the note's words alone)")
    typer.echo(f"precision    {shown['text_precision']}  (of what the words alone found)")
    typer.echo(f"nothing      {found['nothing_found']} touched notes found by no word")


@subcommand(app, "context")
def context(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """Measure the context block's relevant notes on this workspace's sessions."""
    from hippo_core.cli.common import current_workspace, print_json
    from hippo_core.dream.measure import measure_context

    found = measure_context(current_workspace())
    if as_json:
        print_json(found)
        return
    if not found["tasks"]:
        typer.echo("no session of this workspace read or edited a note: nothing to measure yet")
        return
    typer.echo(
        f"{found['tasks']} tasks (sessions that read or edited notes), {found['notes']} notes"
    )
    typer.echo(f"{'ranking':<22}{'recall@5':>9}{'MRR':>7}")
    for name, rates in found["rankings"].items():
        here = "  (this workspace)" if name == f"relevance = {found['relevance']}" else ""
        typer.echo(f"{name:<22}{rates['recall_at_5']:>9.2f}{rates['mrr']:>7.2f}{here}")
