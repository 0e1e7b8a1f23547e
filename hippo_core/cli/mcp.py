"""``hippo mcp``: serve hippo's tools over MCP on stdio; ``hippo mcp install|uninstall AGENT``
register the server in an agent's own config."""

from __future__ import annotations

from pathlib import Path

import typer

from hippo_core.cli.common import HippoGroup, subcommand

app = typer.Typer(
    cls=HippoGroup,
    name="mcp",
    invoke_without_command=True,
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
)

USER_OPTION = typer.Option(False, "--user", help="The user's config, not the project's.")
AGENT_ARGUMENT = typer.Argument(
    ..., metavar="AGENT", help="claude-code, codex, gemini or opencode."
)


@app.callback()
def mcp(ctx: typer.Context) -> None:
    """Serve hippo's tools to an agent over MCP (stdio), or register the server in its config.

    With no command, serve the tools on stdin and stdout for the workspace of the current
    folder: an agent starts it this way in its project. It needs the mcp extra
    (pip install -e '.[mcp]' in hippo's checkout).
    """
    if ctx.invoked_subcommand is not None:
        return
    from hippo_core.mcp.server import serve

    raise typer.Exit(serve(str(Path.cwd())))


def _config_file(agent: str, user: bool) -> Path:
    from hippo_core.mcp.install import config_file
    from hippo_core.workspace.folder import find_root

    project = Path.cwd()
    if not user:
        project = find_root(project) or project
    return config_file(agent, user=user, project=project)


@subcommand(app, "install")
def install(agent: str = AGENT_ARGUMENT, user: bool = USER_OPTION) -> None:
    """Register hippo's MCP server in the agent's config (idempotent)."""
    from hippo_core.mcp.install import check_agent
    from hippo_core.mcp.install import install as add

    found = check_agent(agent)
    change = add(agent, _config_file(agent, user))
    if change.action == "unchanged":
        typer.echo(f"{change.path} already has hippo's MCP server")
    else:
        typer.echo(f"{change.action} hippo's MCP server in {change.path}")
    if not user and found.mcp_note:  # what the agent asks of a project's server
        typer.echo(f"note: {found.mcp_note}")


@subcommand(app, "uninstall")
def uninstall(agent: str = AGENT_ARGUMENT, user: bool = USER_OPTION) -> None:
    """Remove hippo's MCP server from the agent's config; every other server stays."""
    from hippo_core.mcp.install import check_agent
    from hippo_core.mcp.install import uninstall as remove

    check_agent(agent)
    change = remove(agent, _config_file(agent, user))
    if change.action == "removed":
        typer.echo(f"removed hippo's MCP server from {change.path}")
    else:
        typer.echo(f"{change.path} has no hippo MCP server")
