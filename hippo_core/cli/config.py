"""``hippo config get|set``: the workspace's settings."""

from __future__ import annotations

import typer

from hippo_core.cli.common import HippoCommand, command_group, current_workspace, subcommand

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.settings.values import Settings
    from hippo_core.workspace.folder import Workspace

app = command_group("Read and change workspace settings.")


@subcommand(app, "get")
def get(key: str = typer.Argument(..., metavar="KEY", help="The setting's name.")) -> None:
    """Print a setting's value (its default when the file does not set it)."""
    import tomlkit

    from hippo_core.settings.schema import get_setting

    here = current_workspace()
    _whole(key)
    if "." in key or _plugin_table(key):  # triggers.on_compact, sleep.model.url, sleep
        from hippo_core.plugins.manager import load_plugins
        from hippo_core.settings.tables import get_plugin_setting

        value = get_plugin_setting(here, load_plugins(), key)
    else:
        _misplaced(key, "get")
        value = get_setting(here.settings, key)
    if isinstance(value, dict) and "." not in key and _plugin_table(key):
        # A whole table as .hippo/settings.toml holds it: under its own [sleep], its tables
        # by their full names ([sleep.model]), so that pasted there it reads back the same.
        typer.echo(tomlkit.dumps({key: value}).rstrip("\n"))
        return
    typer.echo(value if isinstance(value, str) else tomlkit.item(value).as_string())


# A negative number is a value, not an option: ``hippo config set budget_bytes -5``.
@app.command("set", cls=HippoCommand, context_settings={"ignore_unknown_options": True})
def set_(
    key: str = typer.Argument(..., metavar="KEY", help="The setting's name."),
    value: str = typer.Argument(
        ..., metavar="VALUE", help='A TOML value: 25600, ["a.md"], or a bare word.'
    ),
) -> None:
    """Change a setting in .hippo/settings.toml, keeping its comments.

    KEY is a setting (budget_bytes) or a key of a plugin's table (triggers.on_compact).
    """
    from hippo_core.settings.schema import set_setting

    found = current_workspace()
    shown = found.relative(found.settings_path)
    _whole(key)
    if "." in key:
        from hippo_core.plugins.manager import load_plugins
        from hippo_core.settings.tables import get_plugin_setting, set_plugin_setting
        from hippo_core.workspace.folder import Workspace

        plugins = load_plugins()
        old = get_plugin_setting(found, plugins, key)
        set_plugin_setting(found, plugins, key, value, shown_as=shown)
        _changed(found, key, old, get_plugin_setting(Workspace.open(found.root), plugins, key))
        return
    _misplaced(key, f"set {{key}} {value}")

    def usable(settings: Settings) -> None:
        from hippo_core.actions.config import check_value
        from hippo_core.plugins.manager import load_plugins

        check_value(found.folder, load_plugins(), key, settings, shown)

    set_setting(found.settings_path, key, value, shown_as=shown, check=usable)


def _changed(found: Workspace, key: str, old: object, new: object) -> None:
    """Tell the plugins a setting changed (the event ``setting_changed``), and who changed
    it: the sleep pack keeps each change of its ``review`` for a person to see."""
    if old == new:
        return
    from hippo_core.agents.deciders import acting_now
    from hippo_core.plugins.events import Event
    from hippo_core.plugins.manager import load_plugins

    data = {"key": key, "from": old, "to": new, "by": acting_now(found, "hippo config set")}
    load_plugins().event(found, Event("setting_changed", data))


def _plugin_table(key: str) -> bool:
    """Whether ``key`` is a whole table a plugin owns (``sleep``)."""
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.settings.schema import KNOWN_KEYS

    return key not in KNOWN_KEYS and key in load_plugins().settings_tables()


def _misplaced(key: str, how: str) -> None:
    """A key of a plugin's table given at the top level (``max_attempts``): one line naming
    the table it belongs to, and the command with its dotted name."""
    from hippo_core.base.errors import UsageError
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.settings.schema import KNOWN_KEYS
    from hippo_core.settings.tables import every_key

    if key in KNOWN_KEYS:
        return
    owners = [k for k in every_key(load_plugins().settings_tables()) if k.rsplit(".", 1)[-1] == key]
    if owners:
        dotted = owners[0]
        table = dotted.rsplit(".", 1)[0]
        command = how.replace("{key}", dotted) if "{key}" in how else f"{how} {dotted}"
        raise UsageError(f"'{key}' is a key of [{table}]: hippo config {command}")


def _whole(key: str) -> None:
    """A key inside one of hippo's own tables (``openai.url``) is set with its table."""
    from hippo_core.base.errors import UsageError
    from hippo_core.settings.schema import KNOWN_KEYS

    table = key.partition(".")[0]
    if "." in key and table in KNOWN_KEYS:
        raise UsageError(
            f"'{key}': {table} is set whole, as a TOML inline table: "
            f"hippo config set {table} '{{...}}' (or edit .hippo/settings.toml)"
        )
