"""``hippo hooks install|uninstall``: hippo's hooks in an agent's settings."""

from __future__ import annotations

from pathlib import Path

import typer

from hippo_core.cli.common import command, group

app = group("Install or remove hippo's hooks in an agent's settings.")

USER_OPTION = typer.Option(False, "--user", help="The user's settings, not the project's.")
AGENT_ARGUMENT = typer.Argument(..., metavar="AGENT", help="claude-code or codex.")


def _settings_file(agent: str, user: bool) -> Path:
    from hippo_core.hooks_install import settings_file
    from hippo_core.workspace import Workspace, find_root

    project = Path.cwd()
    if not user:
        root = find_root(project)
        project = Workspace.open(root).root if root else project
    return settings_file(agent, user=user, project=project)


@command(app, "install")
def install(agent: str = AGENT_ARGUMENT, user: bool = USER_OPTION) -> None:
    """Add hippo's session-start, prompt and session-end hooks (idempotent)."""
    from hippo_core.hooks_install import install as add

    change = add(agent, _settings_file(agent, user))
    if change.added:
        typer.echo(f"added {', '.join(change.added)} to {change.path}")
    else:
        typer.echo(f"{change.path} already has hippo's hooks")
    if agent == "codex":
        typer.echo(
            "note: Codex runs hooks only with `hooks = true` under [features] in config.toml"
        )


@command(app, "uninstall")
def uninstall(agent: str = AGENT_ARGUMENT, user: bool = USER_OPTION) -> None:
    """Remove hippo's hooks only; every other hook stays."""
    from hippo_core.hooks_install import uninstall as remove

    change = remove(_settings_file(agent, user))
    if change.removed:
        typer.echo(f"removed {change.removed} hippo hooks from {change.path}")
    else:
        typer.echo(f"{change.path} has no hippo hooks")
