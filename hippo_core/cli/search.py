"""``hippo search``: turns from the index, with snippets."""

from __future__ import annotations

from dataclasses import asdict

import typer

from hippo_core.base.errors import UsageError
from hippo_core.base.terminal import printable
from hippo_core.cli.common import JSON_OPTION, print_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.index.search import Hit

#: The most turns one search may ask for.
MAX_LIMIT = 100_000


def search(
    query: str = typer.Argument(..., metavar="QUERY", help="Words to find (word* for a prefix)."),
    tool: str | None = typer.Option(
        None, "--tool", metavar="NAME", help="Only this agent's turns."
    ),
    session: str | None = typer.Option(None, "--session", metavar="ID", help="Only this session."),
    since: str | None = typer.Option(
        None, "--since", metavar="WHEN", help="Only turns since a date, a time or 24h/7d/2w ago."
    ),
    limit: int = typer.Option(
        20, "--limit", min=1, max=MAX_LIMIT, metavar="N", help="At most N turns."
    ),
    who: str | None = typer.Option(
        None, "--who", metavar="NAME", help="Only this member's turns (a team index)."
    ),
    local: bool = typer.Option(
        False, "--local", help="Search this machine's index, not the team's."
    ),
    all_projects: bool = typer.Option(
        False, "--all-projects", help="Every project's turns on the team index, not this one's."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Search the indexed turns and print the best matches with snippets.

    In a workspace with a team index (index_url), the team's turns of the workspace
    (--all-projects: of every project on it); elsewhere, or with --local, every turn this
    machine indexed.
    """
    from hippo_core.index.search import find_turns

    if tool is not None:
        _known_tool(tool)
    hits = None
    url, project = ("", "") if local else _team()
    if url:
        scope = None if all_projects else project
        hits = _team_search(url, scope, query, tool, session, since, who, limit)
    elif who or all_projects:
        flag = "--who" if who else "--all-projects"
        if local:
            raise UsageError(
                f"{flag} searches the team index, and --local this machine's: give one"
            )
        raise UsageError(f"{flag} needs a team index: set index_url in .hippo/settings.toml")
    if hits is None:
        hits = find_turns(query, tool=tool, session=session, since=since, limit=limit)
    if as_json:
        print_json([asdict(h) for h in hits])
        return
    for hit in hits:
        # Each field is a transcript's or a teammate's: none may drive the terminal.
        by = f"  {hit.who}" if hit.who else ""
        line = f"{hit.session} #{hit.ordinal}  {hit.started or 'unknown time'}  {hit.tool}{by}"
        typer.echo(printable(line))
        typer.echo(printable(f"    {hit.snippet}"))
    if not hits:
        typer.echo("no turns match", err=True)
        raise typer.Exit(1)


def _known_tool(tool: str) -> None:
    """A ``--tool`` that is no transcript source here would only say "no turns match"."""
    import difflib

    from hippo_core.plugins.manager import load_plugins

    known = sorted(load_plugins().sources())
    if tool in known:
        return
    close = difflib.get_close_matches(tool, known, n=1, cutoff=0.6)
    hint = f" - did you mean '{close[0]}'?" if close else ""
    raise UsageError(
        f"--tool '{tool}' is no agent whose turns hippo indexes; the agents are: "
        f"{', '.join(known)}{hint}"
    )


def _team() -> tuple[str, str]:
    """The team index of the workspace here and the workspace's project; ("", "") for none."""
    from pathlib import Path

    from hippo_core.index import team
    from hippo_core.workspace.folder import Workspace, find_root

    root = find_root(Path.cwd())
    if root is None:
        return "", ""
    workspace = Workspace.open(root)
    return team.configured_url(workspace), team.project_of(workspace)


def _team_search(
    url: str,
    project: str | None,
    query: str,
    tool: str | None,
    session: str | None,
    since: str | None,
    who: str | None,
    limit: int,
) -> list[Hit] | None:
    """The team's hits (of ``project``, or every one when None); None, with a warning, when
    the server is away and neither ``--who`` nor ``--all-projects`` was asked for, so the
    local index answers instead."""
    from hippo_core.base.errors import HippoError
    from hippo_core.index import team

    try:
        return team.search(
            url, project, query, tool=tool, session=session, since=since, who=who, limit=limit
        )
    except UsageError:
        raise
    except HippoError as exc:
        if who or project is None:
            raise
        typer.echo(f"warning: {exc}; searching this machine's index instead", err=True)
        return None
