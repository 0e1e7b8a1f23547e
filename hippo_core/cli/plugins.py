"""``hippo plugins``: what is loaded, from where, what each adds, and what of it runs here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from hippo_core.cli.common import JSON_OPTION, print_json

if TYPE_CHECKING:
    from hippo_core.plugins.manager import PluginInfo, Plugins


def plugins(
    hook: str | None = typer.Option(
        None, "--hook", metavar="HOOK", help="Only the plugins that implement this hook."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """List the plugins: name, version, the hooks each implements and the commands it adds."""
    from hippo_core.plugins.manager import load_plugins

    loaded = load_plugins()
    if hook is not None:
        _known_hook(hook)
    infos = _ordered(loaded.infos())
    if hook is not None:
        infos = [info for info in infos if hook in info.hooks]
    commands = _commands(loaded)
    packs = _packs(loaded)
    if as_json:
        print_json(
            [
                {
                    **info.as_dict(),
                    "commands": [name for name, _ in commands.get(info.name, [])],
                    "packs": packs.get(info.name, []),
                    "failed": loaded.failed.get(info.name, ""),
                }
                for info in infos
            ]
        )
        return
    for info in infos:
        state = f"failed to load: {info.error}" if info.error else ", ".join(info.hooks)
        added = commands.get(info.name)
        if added:
            state += "; commands: " + ", ".join(
                name + (f" (left out: {clash})" if clash else "") for name, clash in added
            )
        shipped = packs.get(info.name)
        if shipped:
            state += "; packs: " + ", ".join(_pack_text(pack) for pack in shipped)
        if info.name in loaded.failed:
            state += f"; {loaded.failed[info.name]}"
        typer.echo(f"{info.name}  {info.distribution} {info.version}  {state}")


def _known_hook(hook: str) -> None:
    import difflib

    from hippo_core.base.errors import UsageError
    from hippo_core.plugins.manager import hook_names

    hooks = hook_names()
    if hook in hooks:
        return
    close = difflib.get_close_matches(hook, hooks, n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'?" if close else "hippo's hooks are in docs/hooks.md"
    raise UsageError(f"--hook: no hook named '{hook}'; {hint}")


def _ordered(infos: list[PluginInfo]) -> list[PluginInfo]:
    """Third-party plugins first, by name (what was installed is what one looks for), then
    hippo's own in the order they are registered."""
    return sorted(infos, key=lambda info: (info.first_party, "" if info.first_party else info.name))


def _commands(loaded: Plugins) -> dict[str, list[tuple[str, str]]]:
    """Each plugin's commands, with who keeps a name another plugin registered first."""
    found: dict[str, list[tuple[str, str]]] = {}
    first: dict[str, PluginInfo] = {}
    for entry in loaded.all_commands():
        keeper = first.setdefault(entry.name, entry.plugin)
        clash = "" if keeper is entry.plugin else f"{keeper.name} has it"
        found.setdefault(entry.plugin.name, []).append((entry.name, clash))
    return found


def _packs(loaded: Plugins) -> dict[str, list[dict[str, Any]]]:
    """Each plugin's packs, and, in a workspace, whether each runs there and why not."""
    from hippo_core.base.errors import HippoError

    states: dict[tuple[str, str], tuple[str, str]] = {}
    try:
        from hippo_core.packs.running import load_here
        from hippo_core.workspace.folder import Workspace

        here = load_here(Workspace.find(), loaded, strict=False)
    except HippoError:
        here = None  # outside a workspace (or one whose packs cannot be read): names only
    if here is not None:
        for pack in here.packs:
            states[(pack.name, pack.source)] = ("runs here", "")
        for name in here.off:
            states[(name, "*")] = ("off here", "disabled_packs")
        for item in here.left_out:
            states.setdefault((item.name, item.source), ("did not run here", item.problem))
    found: dict[str, list[dict[str, Any]]] = {}
    for source in loaded.all_packs():
        origin = f"{source.plugin.distribution} {source.plugin.version}".strip()
        state, problem = ("", "")
        if here is not None and not source.plugin.first_party:
            state, problem = states.get((source.name, origin)) or states.get(
                (source.name, "*"), ("", "")
            )
        found.setdefault(source.plugin.name, []).append(
            {"name": source.name, "state": state, "problem": problem}
        )
    return found


def _pack_text(pack: dict[str, Any]) -> str:
    if not pack["state"]:
        return str(pack["name"])
    why = f": {pack['problem']}" if pack["problem"] else ""
    return f"{pack['name']} ({pack['state']}{why})"
