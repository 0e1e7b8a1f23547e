"""``hippo dream``: check notes against transcripts and fold in what sessions learned."""

from __future__ import annotations

import logging
import sys

import typer

from hippo_core.base.errors import UsageError
from hippo_core.base.terminal import printable
from hippo_core.cli.common import current_workspace, say


def dream(
    pass_name: str | None = typer.Option(
        None, "--pass", metavar="NAME", help="Run only the pass with this file name (verify)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Build every prompt and write only the report: no model call."
    ),
    since: str | None = typer.Option(
        None,
        "--since",
        metavar="WHEN",
        help="Start the window here instead of at the last success (a date, or 24h/7d/2w ago).",
    ),
    show_prompts: bool = typer.Option(
        False, "--show-prompts", help="With --dry-run: print every prompt it built, whole."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print each step on stderr."),
) -> None:
    """Check notes against transcripts and fold in what sessions learned, with review."""
    from hippo_core.dream.run import Options
    from hippo_core.dream.run import dream as run_dream
    from hippo_core.dream.state import parse_time
    from hippo_core.index.search import parse_since, since_span

    if show_prompts and not dry_run:
        raise UsageError("--show-prompts goes with --dry-run: hippo dream --dry-run --show-prompts")
    # A span (2d) is taken back from the run's own now, so it makes whole 24-hour chunks.
    start = (since_span(since) or parse_time(parse_since(since) + "Z")) if since else None
    found = current_workspace()
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("dream: %(message)s"))
        logger = logging.getLogger("hippo.dream")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    outcome = run_dream(
        found,
        Options(only=pass_name, dry_run=dry_run, since=start, show_prompts=show_prompts),
        say=say,
    )
    for where, prompt in outcome.prompts:
        size = len(prompt.encode("utf-8"))
        typer.echo(printable(f"===== {where}: {size:,} bytes ====="))
        shown = printable(prompt)  # turns' text: it may not drive the terminal
        typer.echo(shown if shown.endswith("\n") else shown + "\n", nl=False)
    typer.echo(f"dream {outcome.status}: report {found.relative(outcome.report)}")
    for line in outcome.warnings:
        typer.echo(printable(f"warning: {line}"), err=True)
    if outcome.status != "ok":
        typer.echo(f"error: {outcome.error}", err=True)
        raise typer.Exit(1)
