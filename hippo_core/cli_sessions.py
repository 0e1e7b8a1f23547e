"""Session commands: ``hippo session``, ``hippo hook`` (run by agents), ``hippo hooks``."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import typer

session_app = typer.Typer(
    help="Declare agent sessions and record how they ended.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
hook_app = typer.Typer(
    help="Run by an agent's session hooks: read the hook's JSON on stdin. Always exits 0.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
hooks_app = typer.Typer(
    help="Install or remove hippo's hooks in an agent's settings.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

TOOL_OPTION = typer.Option(
    "claude-code", "--tool", metavar="NAME", help="The agent calling (claude-code or codex)."
)
ID_OPTION = typer.Option(
    None, "--id", metavar="ID", help="The session's id (default: the latest open session)."
)


@session_app.command("start")
def session_start(
    session: str | None = typer.Option(
        None, "--id", metavar="ID", help="The agent's own session id (default: a new id)."
    ),
    tool: str = typer.Option("manual", "--tool", metavar="NAME", help="The agent running it."),
    task: str | None = typer.Option(None, "--task", metavar="TEXT", help="What it is about."),
) -> None:
    """Declare a session; print its id."""
    from hippo_core import sessions
    from hippo_core.workspace import Workspace

    workspace = Workspace.find()
    raw = session or f"s-{uuid.uuid4().hex[:16]}"
    with sessions.records_lock(workspace):
        record = sessions.declare(workspace, raw, tool, task=task, cwd=str(Path.cwd()))
    typer.echo(record["id"])


@session_app.command("end")
def session_end(
    session: str | None = ID_OPTION,
    notes: list[str] = typer.Option(
        [], "--note", metavar="PATH", help="A note the session touched (repeatable)."
    ),
    handoff: str | None = typer.Option(
        None, "--handoff", metavar="TEXT", help="What the next session should know, in Markdown."
    ),
    no_change: str | None = typer.Option(
        None, "--no-change", metavar="REASON", help="Why the session changed nothing."
    ),
) -> None:
    """End a declared session: the notes it touched, a handoff, or why nothing changed."""
    from hippo_core import sessions
    from hippo_core.errors import HippoError
    from hippo_core.workspace import Workspace

    workspace = Workspace.find()
    with sessions.records_lock(workspace):
        if session is None:
            record = sessions.latest_open(workspace)
            if record is None:
                raise HippoError("no open session here: give --id ID (see `hippo session start`)")
        else:
            record = sessions.read_record(workspace, session)
            if record.get("kind") != sessions.DECLARED:
                record = sessions.declare(workspace, session, str(record.get("tool") or "manual"))
        record = sessions.end(workspace, record, notes=notes, handoff=handoff, no_change=no_change)
    typer.echo(f"ended {record['id']} ({record['end_reason']})")


def _hook(event: str, tool: str) -> None:
    from hippo_core.agent_hooks import log_problem, run_hook

    try:
        stdin = sys.stdin.read()
    except (OSError, UnicodeDecodeError) as exc:
        log_problem(event, f"stdin cannot be read ({exc})")
        return
    run_hook(event, tool, stdin, sys.stdout)


@hook_app.command("session-start")
def hook_session_start(tool: str = TOOL_OPTION) -> None:
    """SessionStart: declare the session, print the required context parts."""
    _hook("session-start", tool)


@hook_app.command("prompt")
def hook_prompt(tool: str = TOOL_OPTION) -> None:
    """UserPromptSubmit: on the first prompt only, print relevant notes and linter counts."""
    _hook("prompt", tool)


@hook_app.command("session-end")
def hook_session_end(tool: str = TOOL_OPTION) -> None:
    """SessionEnd: record the session as ended (reason unspecified)."""
    _hook("session-end", tool)


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


@hooks_app.command("install")
def hooks_install(agent: str = AGENT_ARGUMENT, user: bool = USER_OPTION) -> None:
    """Add hippo's session-start, prompt and session-end hooks (idempotent)."""
    from hippo_core.hooks_install import install

    change = install(agent, _settings_file(agent, user))
    if change.added:
        typer.echo(f"added {', '.join(change.added)} to {change.path}")
    else:
        typer.echo(f"{change.path} already has hippo's hooks")
    if agent == "codex":
        typer.echo(
            "note: Codex runs hooks only with `hooks = true` under [features] in config.toml"
        )


@hooks_app.command("uninstall")
def hooks_uninstall(agent: str = AGENT_ARGUMENT, user: bool = USER_OPTION) -> None:
    """Remove hippo's hooks only; every other hook stays."""
    from hippo_core.hooks_install import uninstall

    change = uninstall(_settings_file(agent, user))
    if change.removed:
        typer.echo(f"removed {change.removed} hippo hooks from {change.path}")
    else:
        typer.echo(f"{change.path} has no hippo hooks")


def register(app: typer.Typer) -> None:
    app.add_typer(session_app, name="session")
    app.add_typer(hook_app, name="hook")
    app.add_typer(hooks_app, name="hooks")
