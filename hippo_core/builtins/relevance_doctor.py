"""``hippo doctor``'s look at the relevant notes: whether another ``relevance`` setting finds
clearly more of what this workspace's sessions opened, as ``hippo eval context`` measures."""

from __future__ import annotations

from hippo_core.plugins.manager import hookimpl

#: The sessions measured, the latest: enough to tell the settings apart, few enough for a
#: doctor's run (each history ranking is a few milliseconds).
LATEST = 300

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.base.findings import Finding
    from hippo_core.workspace.folder import Workspace


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.errors import HippoError
    from hippo_core.base.findings import Finding
    from hippo_core.context.relevance import MIN_TASKS, SUGGEST_GAIN
    from hippo_core.dream.measure import measure_context

    try:
        found = measure_context(workspace, baseline=False, latest=LATEST)
    except HippoError:
        return []  # no index yet, or the team's is away (the team check says so)
    if found["tasks"] < MIN_TASKS:
        return []
    recall = {
        name.removeprefix("relevance = "): rates["recall_at_5"] or 0.0
        for name, rates in found["rankings"].items()
    }
    setting = workspace.settings.relevance
    best = max(recall, key=lambda name: (recall[name], name == setting))
    gain = recall[best] - recall[setting]
    if round(gain, 3) <= SUGGEST_GAIN:
        return []
    detail = (
        f"relevance = {best} would name more of the notes this workspace's sessions opened: "
        f"recall@5 {recall[best]:.2f} against {recall[setting]:.2f} with {setting}, over "
        f"the last {found['tasks']} sessions (hippo eval context); switch with "
        f"`hippo config set relevance {best}`"
    )
    return [Finding("info", "relevance", detail, workspace.relative(workspace.settings_path))]
