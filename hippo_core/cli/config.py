"""``hippo config get|set``: the workspace's settings."""

from __future__ import annotations

import typer

from hippo_core.cli.common import command, group, workspace

app = group("Read and change workspace settings.")


@command(app, "get")
def get(key: str = typer.Argument(..., metavar="KEY", help="The setting's name.")) -> None:
    """Print a setting's value (its default when the file does not set it)."""
    import tomlkit

    from hippo_core.settings_schema import get_setting

    value = get_setting(workspace().settings, key)
    typer.echo(value if isinstance(value, str) else tomlkit.item(value).as_string())


@command(app, "set")
def set_(
    key: str = typer.Argument(..., metavar="KEY", help="The setting's name."),
    value: str = typer.Argument(
        ..., metavar="VALUE", help='A TOML value: 25600, ["a.md"], or a bare word.'
    ),
) -> None:
    """Change a setting in .hippo/settings.toml, keeping its comments."""
    from hippo_core.settings_schema import set_setting

    found = workspace()
    set_setting(found.settings_path, key, value, shown_as=found.relative(found.settings_path))
