"""``hippo config get|set``: the workspace's settings."""

from __future__ import annotations

import typer

from hippo_core.cli.common import command_group, current_workspace, subcommand

app = command_group("Read and change workspace settings.")


@subcommand(app, "get")
def get(key: str = typer.Argument(..., metavar="KEY", help="The setting's name.")) -> None:
    """Print a setting's value (its default when the file does not set it)."""
    import tomlkit

    from hippo_core.settings_schema import get_setting

    here = current_workspace()
    _whole(key)
    if "." in key:  # a key of a plugin's table: triggers.on_compact, sleep.model.url
        from hippo_core.plugin_settings import get_plugin_setting
        from hippo_core.plugins import load_plugins

        value = get_plugin_setting(here, load_plugins(), key)
    else:
        value = get_setting(here.settings, key)
    typer.echo(value if isinstance(value, str) else tomlkit.item(value).as_string())


@subcommand(app, "set")
def set_(
    key: str = typer.Argument(..., metavar="KEY", help="The setting's name."),
    value: str = typer.Argument(
        ..., metavar="VALUE", help='A TOML value: 25600, ["a.md"], or a bare word.'
    ),
) -> None:
    """Change a setting in .hippo/settings.toml, keeping its comments.

    KEY is a setting (budget_bytes) or a key of a plugin's table (triggers.on_compact).
    """
    from hippo_core.settings_schema import set_setting

    found = current_workspace()
    shown = found.relative(found.settings_path)
    _whole(key)
    if "." in key:
        from hippo_core.plugin_settings import set_plugin_setting
        from hippo_core.plugins import load_plugins

        set_plugin_setting(found, load_plugins(), key, value, shown_as=shown)
        return
    set_setting(found.settings_path, key, value, shown_as=shown)


def _whole(key: str) -> None:
    """A key inside one of hippo's own tables (``openai.url``) is set with its table."""
    from hippo_core.errors import UsageError
    from hippo_core.settings_schema import KNOWN_KEYS

    table = key.partition(".")[0]
    if "." in key and table in KNOWN_KEYS:
        raise UsageError(
            f"'{key}': {table} is set whole, as a TOML inline table: "
            f"hippo config set {table} '{{...}}' (or edit .hippo/settings.toml)"
        )
