"""The first part of the context block: warnings when dreaming is overdue or failed."""

from __future__ import annotations

import os

from hippo_core.context.budget import ContextPart
from hippo_core.plugins.manager import hookimpl
from hippo_core.workspace.locate import HIPPO_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

WARNINGS = 10


@hookimpl
def hippo_context_parts(
    workspace: Workspace, session: str | None, task: str | None
) -> list[ContextPart]:
    return [ContextPart("dreaming warnings", lambda: _warnings(workspace), True, WARNINGS)]


def _warnings(workspace: Workspace) -> str:
    try:
        names = os.listdir(workspace.inside(HIPPO_DIR, "reports"))
    except OSError:
        names = []
    if not any(name.endswith("-dream.md") for name in names):
        return ""  # no report, no warning: the usual case costs one listing
    from hippo_core.dream.state import warnings

    return "".join(f"{line}\n" for line in warnings(workspace))
