"""``hippo hooks install|uninstall``: hippo's hooks in an agent's settings."""

from __future__ import annotations

from pathlib import Path

import typer

from hippo_core.cli.common import command_group, subcommand

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.plugins.agent import Agent

app = command_group("Install or remove hippo's hooks in an agent's settings.")

USER_OPTION = typer.Option(False, "--user", help="The user's settings, not the project's.")
AGENT_ARGUMENT = typer.Argument(
    ..., metavar="AGENT", help="claude-code, codex, gemini or opencode."
)


def _project() -> Path:
    from hippo_core.workspace.folder import Workspace, find_root

    root = find_root(Path.cwd())
    return Workspace.open(root).root if root else Path.cwd()


def _settings_file(agent: Agent, user: bool) -> Path:
    from hippo_core.agents.install import settings_file

    return settings_file(agent, user=user, project=_project())


def _on_compact() -> bool:
    """Whether this workspace's activity triggers dream when an agent compacts."""
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.settings.tables import get_plugin_setting
    from hippo_core.workspace.folder import Workspace, find_root

    root = find_root(Path.cwd())
    if root is None:
        return False
    workspace = Workspace.open(root)
    # The table's owner (the triggers plugin) is read through the settings it registers,
    # as `hippo config get triggers.on_compact` reads it: the command imports no plugin.
    if not workspace.settings.tables.get("triggers"):
        return False
    return get_plugin_setting(workspace, load_plugins(), "triggers.on_compact") is True


@subcommand(app, "install")
def install(agent: str = AGENT_ARGUMENT, user: bool = USER_OPTION) -> None:
    """Add hippo's session-start, prompt and session-end hooks (OpenCode: a plugin), and its
    compaction hook when the workspace's triggers dream on compaction."""
    from hippo_core.agents.install import hook_agent
    from hippo_core.agents.install import install as add

    found = hook_agent(agent)
    change = add(found, _settings_file(found, user), compact=_on_compact())
    if found.hook_plugin is not None:
        done = "wrote" if change.added else "updated" if change.updated else "already up to date:"
        typer.echo(f"{done} {change.path}, {found.plugin_said}")
        return
    if change.added:
        typer.echo(f"added {', '.join(change.added)} to {change.path}")
    if change.updated:
        typer.echo(f"set the timeout of {', '.join(change.updated)} in {change.path}")
    if not change.added and not change.updated:
        typer.echo(f"{change.path} already has hippo's hooks")
    if found.hooks_problem is not None:
        problem = found.hooks_problem(change.path, None if user else _project())
        if problem:
            typer.echo(f"note: {problem}")


@subcommand(app, "uninstall")
def uninstall(agent: str = AGENT_ARGUMENT, user: bool = USER_OPTION) -> None:
    """Remove hippo's hooks only; every other hook stays."""
    from hippo_core.agents.install import hook_agent
    from hippo_core.agents.install import uninstall as remove

    found = hook_agent(agent)
    change = remove(found, _settings_file(found, user))
    if found.hook_plugin is not None:
        done = "removed" if change.removed else "no hippo plugin at"
        typer.echo(f"{done} {change.path}")
        return
    if change.removed:
        typer.echo(f"removed {change.removed} hippo hooks from {change.path}")
    else:
        typer.echo(f"{change.path} has no hippo hooks")
