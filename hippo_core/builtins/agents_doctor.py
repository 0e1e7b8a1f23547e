"""``hippo doctor``'s checks of the agents: which have hippo's hooks and its MCP server,
whether an agent will run the hooks (Codex's trust), agents registered wrong, the hooks'
recent failures, and whether the model program can be started."""

from __future__ import annotations

from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from hippo_core.base.findings import Finding
    from hippo_core.workspace.folder import Workspace

#: How far back a failure in hooks.log still counts.
RECENT_SECONDS = 7 * 24 * 3600
#: How much of the end of hooks.log is read (it only grows; the newest lines are at its end).
LOG_TAIL_BYTES = 256 * 1024


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    found = _model_program(workspace) + _hooks(workspace) + _hook_failures(workspace)
    found += _mcp(workspace)
    return _first_run(workspace) + found + _schedule(workspace)


def _first_run(workspace: Workspace) -> list[Finding]:
    """What a teammate runs on a fresh clone: nothing of this workspace's machine state
    (sessions, reports, the dream state, all git-ignored) is here yet."""
    from hippo_core.base.findings import Finding

    local = ("sessions", "reports", "dream-state.json")
    if any((workspace.hippo_dir / name).exists() for name in local):
        return []
    detail = (
        "this machine has no sessions of this workspace yet (a fresh clone, or a new "
        "workspace): `hippo ingest` indexes your agents' transcripts"
    )
    return [Finding("info", "setup", detail)]


def _model_program(workspace: Workspace) -> list[Finding]:
    """An error when ``model_command`` names a program that cannot be run, found as the
    command backend finds it (a path with a folder in it from the workspace's folder)."""
    import os
    import shutil

    from hippo_core.base.findings import Finding

    settings = workspace.settings
    if settings.model_backend != "command" or not settings.model_command:
        return []
    from hippo_core.files.home import user_path

    program = user_path(settings.model_command[0])
    if len(program.parts) == 1:
        if shutil.which(str(program)) is not None:
            return []
        what = "is not on PATH"
    else:
        found = program if program.is_absolute() else workspace.root / program
        if found.is_file() and os.access(found, os.X_OK):
            return []
        what = "is not executable" if found.is_file() else "does not exist"
    detail = (
        f"model_command runs {settings.model_command[0]!r}, which {what}: install it, or "
        "give its full path"
    )
    where = workspace.relative(workspace.settings_path)
    line = _line_of(workspace.settings_path, "model_command")
    return [Finding("error", "model", detail, where, line)]


def _line_of(path: Path, key: str) -> int | None:
    """The line of ``path`` that sets ``key`` at the top level, if one does."""
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, line in enumerate(lines, 1):
        name, equals, _ = line.partition("=")
        if equals and name.strip().strip("\"'") == key:
            return number
    return None


def _hooks(workspace: Workspace) -> list[Finding]:
    """Where hippo's hooks are installed, for the project and the user; what stops an agent
    running them (Codex's trust); agents a plugin registered wrong."""
    from hippo_core.agents.install import installed, settings_file
    from hippo_core.base.findings import Finding
    from hippo_core.plugins.manager import load_plugins

    problems: list[str] = []
    agents = load_plugins().agents(problems)
    findings = [Finding("warning", "agents", problem) for problem in problems]
    for agent in agents.values():
        if not agent.has_hooks:
            continue
        for user in (False, True):
            path = settings_file(agent, user=user, project=workspace.root)
            events = sorted({event for event, _, _ in installed(path, agent)})
            if not events:
                continue
            shown = str(path) if user else workspace.relative(path)
            line = f"{agent.name}: {', '.join(events)} in {shown}"
            findings.append(Finding("info", "hooks", line))
            check = agent.hooks_problem
            problem = check(path, None if user else workspace.root) if check else None
            if problem:
                findings.append(Finding("warning", "hooks", f"{agent.name}: {shown}: {problem}"))
    if not any(finding.code == "hooks" for finding in findings):
        findings.append(
            Finding(
                "info",
                "hooks",
                "no agent has hippo's hooks here: `hippo hooks install claude-code` (or codex, "
                "gemini, opencode) gives each session its context",
            )
        )
    return findings


def _hook_failures(workspace: Workspace) -> list[Finding]:
    """For each hook, its last failure in ``$HIPPO_HOME/hooks.log`` in the past 7 days, in
    this workspace (the log is the machine's: a line ends with the workspace it was in)."""
    import calendar
    import time

    from hippo_core.base.findings import Finding
    from hippo_core.files.home import hippo_home

    path = hippo_home() / "hooks.log"
    try:
        with path.open("rb") as handle:
            handle.seek(max(handle.seek(0, 2) - LOG_TAIL_BYTES, 0))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    since = time.time() - RECENT_SECONDS
    last: dict[str, str] = {}
    here = f" (workspace {workspace.folder})"
    for line in tail.splitlines():
        if not line.endswith(here):
            continue
        line = line.removesuffix(here)
        stamp, _, rest = line.partition(" hook ")
        event, colon, message = rest.partition(": ")
        if not colon or message.startswith("omitted: "):  # a part left out is the budget's way
            continue
        try:
            at = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
        except ValueError:
            continue
        if at >= since:
            last[event] = line
    return [
        Finding("warning", "hooks", f"the {event} hook failed lately: {line} (in {path})")
        for event, line in sorted(last.items())
    ]


def _mcp(workspace: Workspace) -> list[Finding]:
    """Where hippo's MCP server is registered (information), and configs that cannot be
    read (warnings)."""
    from hippo_core.base.findings import Finding
    from hippo_core.mcp.install import registrations

    findings = []
    for found in registrations(workspace.root):
        shown = str(found.path) if found.scope == "user" else workspace.relative(found.path)
        if found.problem:
            findings.append(Finding("warning", "mcp", f"{found.agent}: {found.problem}"))
        elif found.registered:
            detail = f"{found.agent}: hippo's server is registered in {shown}"
            findings.append(Finding("info", "mcp", detail))
    if not findings:
        detail = (
            "no agent has hippo's MCP server: `hippo mcp install claude-code` (or codex, "
            "gemini, opencode) lets an agent search and recall mid-session"
        )
        findings.append(Finding("info", "mcp", detail))
    return findings


def _schedule(workspace: Workspace) -> list[Finding]:
    """An information line when a model is configured and nothing runs dreaming."""
    from hippo_core import schedule
    from hippo_core.base.errors import HippoError
    from hippo_core.base.findings import Finding

    settings = workspace.settings
    if not settings.model_command and settings.model_backend == "command":
        return []
    try:
        entries = schedule.installed(workspace.root)
    except HippoError:
        return []
    dreams = [entry for entry in entries if entry.job == "hippo dream"]
    if dreams:
        detail = f"dreaming runs from {dreams[0].scheduler}: {dreams[0].when}"
        return [Finding("info", "schedule", detail)]
    detail = "a model is configured but nothing runs hippo dream: `hippo schedule install`"
    return [Finding("info", "schedule", detail)]
