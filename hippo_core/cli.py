"""The ``hippo`` command: parse arguments, call the kernel, print.

Heavy imports stay inside the commands that need them; ``hippo context`` is on an agent's
critical path and must not import SQLAlchemy, jinja2, rich or pydantic.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from hippo_core import __version__
from hippo_core.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.findings import Finding
    from hippo_core.workspace import Workspace

app = typer.Typer(
    name="hippo",
    help="Memory with a review trail for coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: stable for the docs, and no rich import
)
config_app = typer.Typer(
    help="Read and change workspace settings.", no_args_is_help=True, rich_markup_mode=None
)
notes_app = typer.Typer(help="Work with the notes.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(config_app, name="config")
app.add_typer(notes_app, name="notes")

JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of text.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hippo {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Memory with a review trail for coding agents."""


def _workspace(*, warn: bool = True) -> Workspace:
    from hippo_core.workspace import Workspace

    workspace = Workspace.find()
    if warn:
        for line in workspace.loaded.warnings:
            typer.echo(f"warning: {line}", err=True)
    return workspace


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _print_findings(findings: list[Finding], as_json: bool) -> int:
    """Print findings and a count; the exit code is 1 when any is an error."""
    from hippo_core.findings import count_levels

    errors, warnings = count_levels(findings)
    if as_json:
        rows = [f.as_dict() for f in findings]
        _print_json({"errors": errors, "warnings": warnings, "findings": rows})
    else:
        for finding in findings:
            typer.echo(finding.render())
        typer.echo(
            f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
        )
    return 1 if errors else 0


@app.command()
def init(
    force: bool = typer.Option(
        False, "--force", help="Overwrite the core pack's files, including your edits."
    ),
) -> None:
    """Set up a workspace in the current folder (or complete one)."""
    from hippo_core.init import init_workspace

    for action in init_workspace(Path.cwd(), force=force):
        typer.echo(f"{action.verb:<9} {action.path}")


@config_app.command("get")
def config_get(key: str = typer.Argument(..., metavar="KEY", help="The setting's name.")) -> None:
    """Print a setting's value (its default when the file does not set it)."""
    import tomlkit

    from hippo_core.settings_schema import get_setting

    value = get_setting(_workspace().settings, key)
    typer.echo(value if isinstance(value, str) else tomlkit.item(value).as_string())


@config_app.command("set")
def config_set(
    key: str = typer.Argument(..., help="The setting's name."),
    value: str = typer.Argument(..., help='A TOML value: 25600, ["a.md"], or a bare word.'),
) -> None:
    """Change a setting in .hippo/settings.toml, keeping its comments."""
    from hippo_core.settings_schema import set_setting

    workspace = _workspace()
    set_setting(
        workspace.settings_path, key, value, shown_as=workspace.relative(workspace.settings_path)
    )


@notes_app.command("lint")
def notes_lint(as_json: bool = JSON_OPTION) -> None:
    """Check every note: frontmatter, links and review dates."""
    from hippo_core.notes.lint import lint_notes

    raise typer.Exit(_print_findings(lint_notes(_workspace()), as_json))


@app.command()
def context(
    task: str | None = typer.Option(
        None, "--task", metavar="TEXT", help="What the session is about."
    ),
    session: str | None = typer.Option(None, "--session", metavar="ID", help="The session's id."),
    budget: int | None = typer.Option(
        None,
        "--budget",
        metavar="N",
        help="Budget in bytes (default: budget_bytes from the settings).",
    ),
) -> None:
    """Print the context block for the start of an agent session."""
    from hippo_core.context import build_context, check_budget

    if budget is not None:
        check_budget(budget)
    block = build_context(_workspace(), task=task, session=session, budget=budget)
    for omission in block.omitted:
        typer.echo(omission.render(), err=True)
    sys.stdout.write(block.text)


@app.command()
def doctor(as_json: bool = JSON_OPTION) -> None:
    """Check the workspace: settings, notes, budgets, plugins and git."""
    from hippo_core.doctor import run_doctor

    raise typer.Exit(_print_findings(run_doctor(_workspace(warn=False)), as_json))


@app.command()
def plugins(as_json: bool = JSON_OPTION) -> None:
    """List the plugins: name, version and the hooks each implements."""
    from hippo_core.plugins import load_plugins

    infos = load_plugins().infos()
    if as_json:
        _print_json([asdict(info) for info in infos])
        return
    for info in infos:
        state = f"failed to load: {info.error}" if info.error else ", ".join(info.hooks)
        typer.echo(f"{info.name}  {info.distribution} {info.version}  {state}")


def _register_commands() -> None:
    from hippo_core import cli_dream, cli_eval, cli_packs, cli_sessions, cli_transcripts

    cli_transcripts.register(app)
    cli_sessions.register(app)
    cli_dream.register(app)
    cli_packs.register(app)
    cli_eval.register(app)


_register_commands()


def main() -> None:
    """The console script: run the app, turning a user's error into one line."""
    try:
        app()
    except HippoError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(exc.exit_code) from None
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`hippo context | head`): nothing to say
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
