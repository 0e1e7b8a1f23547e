"""The ``hippo`` command line: every command a plugin registers, hippo's own included.

Commands arrive through ``hippo_register_commands`` as a name, a ``module:attribute`` and
one sentence of help. ``hippo --help`` lists them from those sentences; a command's module
is imported only when it runs or shows its own help.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

import typer
from typer.main import get_command as click_command

from hippo_core.base.errors import HippoError
from hippo_core.cli.common import HippoCommand, HippoGroup
from hippo_core.version import __version__

if TYPE_CHECKING:
    from typer._click import Command, Context

    from hippo_core.plugins.manager import CommandEntry


class RootGroup(HippoGroup):
    """``hippo``: its commands are those the plugins register, loaded when used."""

    _loaded: dict[str, Command]

    def entries(self) -> dict[str, CommandEntry]:
        """The commands by name, asked of the plugins once per command line."""
        found: dict[str, CommandEntry] | None = self.__dict__.get("_entries")
        if found is None:
            from hippo_core.plugins.manager import load_plugins

            found = self.__dict__["_entries"] = load_plugins().commands()
        return found

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.entries())

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        entry = self.entries().get(cmd_name)
        if entry is None:
            return None
        loaded: dict[str, Command] = self.__dict__.setdefault("_loaded", {})
        if cmd_name not in loaded:
            loaded[cmd_name] = load_command(entry)
        return loaded[cmd_name]

    def command_summaries(self, ctx: Context) -> list[tuple[str, str]]:
        return [(name, entry.help) for name, entry in self.entries().items()]

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        # typer suggests "Did you mean ...?" from the names in `commands`.
        self.commands = dict.fromkeys(self.entries())  # type: ignore[assignment]
        return super().resolve_command(ctx, args)


def load_command(entry: CommandEntry) -> Command:
    """The click command behind ``entry``: its module imported, its attribute converted."""
    module_name, _, attribute = entry.target.partition(":")
    try:
        found: Any = import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except Exception as exc:
        raise HippoError(
            f"the command {entry.name!r} of plugin {entry.plugin.origin} cannot be loaded "
            f"from {entry.target}: {type(exc).__name__}: {exc}"
        ) from exc
    command: Command
    if isinstance(found, typer.Typer):
        command = click_command(found)
    elif callable(found) and not hasattr(found, "main"):
        single = typer.Typer(add_completion=False, rich_markup_mode=None)
        single.command(entry.name, cls=HippoCommand)(found)
        command = click_command(single)
    else:
        command = found
    command.name = entry.name
    return command


app = typer.Typer(
    cls=RootGroup,
    name="hippo",
    help="Memory with a review trail for coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: stable for the docs, and no rich import
)


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
