"""``hippo doctor``'s checks of dreaming: the packs load, a model is configured, the last
runs went well, and no change was left half applied."""

from __future__ import annotations

from hippo_core.base.errors import HippoError
from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.base.findings import Finding
    from hippo_core.workspace.folder import Workspace


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.findings import Finding
    from hippo_core.dream.state import warnings

    findings = _packs(workspace) + _model(workspace) + _team_dream(workspace)
    findings += [
        Finding("warning", "dreaming", line.removeprefix("warning: "))
        for line in warnings(workspace)
    ]
    return findings + _half_applied(workspace) + _leftovers(workspace)


def _team_dream(workspace: Workspace) -> list[Finding]:
    """Who dreams the project on the team index, and when last: the dream state is each
    machine's, so a member who never dreams learns here that somebody does."""
    from hippo_core.base.findings import Finding
    from hippo_core.dream.state import show_time, team_dream

    found = team_dream(workspace)
    if found is None:
        return []
    member, at = found
    detail = f"the team index says {member} dreamed this project last, at {show_time(at)}"
    return [Finding("info", "dreaming", detail)]


def _packs(workspace: Workspace) -> list[Finding]:
    """The passes that dream here; an error for a pack of the workspace (a folder, or one the
    lock file records) that does not run, a warning for a distribution's that does not."""
    from hippo_core.base.findings import Finding
    from hippo_core.dream.packs import PackError
    from hippo_core.packs.running import load_here
    from hippo_core.plugins.manager import load_plugins

    try:
        loaded = load_here(workspace, load_plugins())
    except PackError as exc:
        return [Finding("error", "packs", str(exc.shown_in(workspace)))]
    except HippoError as exc:
        return [Finding("error", "packs", str(exc))]
    names = ", ".join(p.key for p in loaded.passes()) or "none"
    findings = [Finding("info", "packs", f"passes that dream here: {names}")]
    if loaded.off:
        findings.append(
            Finding("info", "packs", "off here (disabled_packs): " + ", ".join(loaded.off))
        )
    for item in loaded.left_out:
        ours = item.locked or item.source == "workspace"
        findings.append(Finding("error" if ours else "warning", "packs", item.line()))
    findings += [Finding("warning", "packs", line) for line in loaded.warnings]
    return findings


def _model(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.findings import Finding
    from hippo_core.plugins.manager import load_plugins

    settings = workspace.settings
    where = workspace.relative(workspace.settings_path)
    backends = load_plugins().backends()
    if settings.model_backend not in backends:
        known = ", ".join(sorted(backends))
        detail = (
            f"model_backend {settings.model_backend!r} is not a backend here; use one of: {known}"
        )
        return [Finding("error", "model", detail, where)]
    try:
        backends[settings.model_backend](workspace)
    except HippoError as exc:
        return [Finding("info", "model", f"{exc}; until then only `hippo dream --dry-run` works")]
    if settings.model_backend == "command":
        detail = "dreaming runs " + " ".join(settings.model_command)
    elif settings.model_backend == "openai":
        detail = f"dreaming asks {settings.openai.model} at {settings.openai.url}"
    else:
        detail = f"dreaming asks the {settings.model_backend} backend"
    return [Finding("info", "model", detail)]


def _half_applied(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.findings import Finding
    from hippo_core.dream import receipts
    from hippo_core.dream.appliers import unfinished
    from hippo_core.dream.apply import APPLIED, APPLYING, REVERTED, REVERTING

    left = {APPLYING: "applying by a run", REVERTING: "reverting by a `hippo revert`"}
    findings = []
    for path, record in receipts.all_in(receipts.folder(workspace, "receipts")):
        state = record.get("state")
        if state in left:
            findings.append(
                Finding(
                    "warning",
                    "receipts",
                    f"{workspace.relative(path)} was left {left[state]} that stopped; the "
                    "next `hippo dream` or `hippo revert` records whether the note changed",
                )
            )
        elif state in (APPLIED, REVERTED) and unfinished(record):
            findings.append(
                Finding(
                    "warning",
                    "receipts",
                    f"{workspace.relative(path)}: a step of its applier chain was left "
                    "unfinished by a run that stopped; the next `hippo dream` or `hippo "
                    "revert` records it as interrupted",
                )
            )
    return findings


def _leftovers(workspace: Workspace) -> list[Finding]:
    """What killed runs left: temporary files, model folders, pack staging folders."""
    from hippo_core.base.findings import Finding
    from hippo_core.files import leftovers

    found = [
        (leftovers.stale_files(workspace), "temporary file", "`hippo dream` or `hippo revert`"),
        (leftovers.model_folders(), "model folder", "`hippo dream` or `hippo revert`"),
        (leftovers.staging_folders(workspace), "pack staging folder", "pack command"),
    ]
    findings = []
    for paths, kind, remover in found:
        if paths:
            shown = ", ".join(workspace.relative(p) for p in paths[:3])
            more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
            plural = "s" if len(paths) > 1 else ""
            findings.append(
                Finding(
                    "warning",
                    "leftovers",
                    f"{len(paths)} {kind}{plural} left by killed runs: {shown}{more}; the "
                    f"next {remover} removes {'them' if plural else 'it'}",
                )
            )
    return findings
