"""``hippo doctor``'s look at the team index: whether the server answers, and what it holds
of this workspace."""

from __future__ import annotations

from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.base.findings import Finding
    from hippo_core.workspace.folder import Workspace


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    return _password_in_settings(workspace) + _server(workspace)


def _password_in_settings(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.findings import Finding
    from hippo_core.settings.url_passwords import PASSWORD_ADVICE, has_password

    if not has_password(workspace.settings.index_url):
        return []
    shown = workspace.relative(workspace.settings_path)
    detail = f"index_url holds a password, and {shown} is committed: {PASSWORD_ADVICE}"
    return [Finding("warning", "team index", detail, where=shown)]


def _server(workspace: Workspace) -> list[Finding]:
    import os

    if not (workspace.settings.index_url or os.environ.get("HIPPO_INDEX_URL")):
        return []
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from hippo_core.base.errors import HippoError
    from hippo_core.base.findings import Finding
    from hippo_core.index import team

    try:
        url = team.configured_url(workspace)
        made = team.engine(url, timeout=team.READ_TIMEOUT)
    except team.Unreachable as exc:
        return [_away(exc)]
    except HippoError as exc:
        return [Finding("error", "team index", _once(str(exc)))]
    project, here = team.project_of(workspace), team.machine()["id"]
    try:
        with made.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT count(*) AS sessions, count(DISTINCT member) AS members, "
                    "count(*) FILTER (WHERE machine = :here) AS mine "
                    "FROM hippo_sessions WHERE project = :project"
                ),
                {"project": project, "here": here},
            ).one()
    except DBAPIError as exc:
        return [_away(team.unreachable(url, exc))]
    finally:
        made.dispose()
    detail = (
        f"{team.shown(url)}: {row.sessions} session{'' if row.sessions == 1 else 's'} of "
        f"{project!r} from {row.members} member{'' if row.members == 1 else 's'}, "
        f"{row.mine} pushed from this machine"
    )
    return [Finding("info", "team index", detail)]


def _away(exc: Exception) -> Finding:
    """A server away is a warning, as ingest and search say it: the local index goes on, and
    a CI job or a train ride without the server is no failure."""
    from hippo_core.base.findings import Finding

    return Finding("warning", "team index", _once(str(exc)))


def _once(line: str) -> str:
    """The line without its own ``team index`` at the start: the finding says it already."""
    return line.removeprefix("team index ")
