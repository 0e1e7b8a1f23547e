"""``hippo plugins``: what is loaded, from where, and what each adds."""

from __future__ import annotations

import typer

from hippo_core.cli.common import JSON_OPTION, print_json


def plugins(as_json: bool = JSON_OPTION) -> None:
    """List the plugins: name, version, the hooks each implements and the commands it adds."""
    from hippo_core.plugins import load_plugins

    loaded = load_plugins()
    commands: dict[str, list[str]] = {}
    for entry in loaded.all_commands():
        commands.setdefault(entry.plugin.name, []).append(entry.name)
    infos = loaded.infos()
    if as_json:
        print_json([{**info.as_dict(), "commands": commands.get(info.name, [])} for info in infos])
        return
    for info in infos:
        state = f"failed to load: {info.error}" if info.error else ", ".join(info.hooks)
        added = commands.get(info.name)
        if added:
            state += f"; commands: {', '.join(added)}"
        typer.echo(f"{info.name}  {info.distribution} {info.version}  {state}")
