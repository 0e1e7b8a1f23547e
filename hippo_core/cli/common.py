"""What every command module shares: the group and command classes, and small helpers.

:class:`HippoGroup` and :class:`HippoCommand` make typer's help read as hippo wants it: a
command's whole first sentence in a group's list (never cut at 45 characters), arguments
shown as ``QUERY`` rather than ``{QUERY}``, and a group called with no arguments printing
its help and exiting 0.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup

from hippo_core.base.terminal import printable, printable_json

if TYPE_CHECKING:
    from typer._click import Context, HelpFormatter

    from hippo_core.base.findings import Finding
    from hippo_core.workspace.folder import Workspace

F = TypeVar("F", bound=Callable[..., Any])

#: The ``--json`` option every hippo command has.
JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of text.")


def summary(help_text: str | None) -> str:
    """A help text's first paragraph, on one line: what a group lists for a command."""
    first = (help_text or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split())


def _unbraced(pieces: list[str]) -> list[str]:
    # typer writes a required argument as {NAME}; the convention (and click's) is NAME.
    return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


class HippoCommand(TyperCommand):
    """A command whose usage line shows its arguments as ``NAME``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            # An argument given no metavar (a plugin's plain function) is named in capitals.
            if param.param_type_name == "argument" and param.metavar is None and param.name:
                param.metavar = param.name.upper()

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return _unbraced(super().collect_usage_pieces(ctx))


class HippoGroup(TyperGroup):
    """A group: whole sentences in its list of commands, and help (exit 0) when bare."""

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return _unbraced(super().collect_usage_pieces(ctx))

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help())
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def command_summaries(self, ctx: Context) -> list[tuple[str, str]]:
        """Each visible command's name and the first paragraph of its help."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.short_help or summary(command.help)))
        return rows

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        rows = self.command_summaries(ctx)
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def command_group(help_text: str) -> typer.Typer:
    """A ``typer.Typer`` group laid out as hippo's own: its help in whole sentences, shown
    when the group is called bare."""
    app = typer.Typer(
        cls=HippoGroup,
        help=help_text,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,  # plain help: stable for the docs, and no rich import
    )
    # A callback keeps a group of one subcommand a group (typer would flatten it).
    app.callback()(_no_options)
    return app


def _no_options() -> None:
    pass


def subcommand(app: typer.Typer, name: str | None = None) -> Callable[[F], F]:
    """``@subcommand(app, "name")``: a subcommand of ``app`` with hippo's help layout."""
    return app.command(name, cls=HippoCommand)


def say(line: str) -> None:
    """One line for a person, on stderr (stdout is for what was asked for)."""
    typer.echo(printable(line), err=True)


def current_workspace(*, warn: bool = True) -> Workspace:
    """The workspace here; its settings' warnings on stderr unless ``warn`` is False."""
    from hippo_core.workspace.folder import Workspace

    found = Workspace.find()
    if warn and found.loaded.warnings:
        from hippo_core.plugins.manager import load_plugins
        from hippo_core.settings.tables import placed

        for line in placed(found.loaded.warnings, load_plugins()):
            say(f"warning: {line}")
    return found


def workspace_if_any() -> Workspace | None:
    """The workspace here, or None outside one."""
    from hippo_core.workspace.folder import find_root

    return current_workspace() if find_root(Path.cwd()) is not None else None


def print_json(data: Any) -> None:
    """Print ``data`` as hippo's ``--json`` does: indented, with DEL and C1 characters escaped
    so the JSON is safe on a terminal (:func:`printable_json`)."""
    typer.echo(printable_json(data))


def print_findings(findings: list[Finding], as_json: bool) -> int:
    """Print findings and a count; the exit code is 1 when any is an error."""
    from hippo_core.base.findings import count_levels

    errors, warnings = count_levels(findings)
    if as_json:
        rows = [f.as_dict() for f in findings]
        print_json({"errors": errors, "warnings": warnings, "findings": rows})
    else:
        for finding in findings:
            typer.echo(printable(finding.render()))
        typer.echo(
            f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
        )
    return 1 if errors else 0
