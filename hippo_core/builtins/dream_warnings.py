"""The first part of the context block: warnings when dreaming is overdue or failed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo_core.budget import ContextPart
from hippo_core.plugins import hookimpl

if TYPE_CHECKING:
    from hippo_core.workspace import Workspace

WARNINGS = 10


@hookimpl
def hippo_context_parts(
    workspace: Workspace, session: str | None, task: str | None
) -> list[ContextPart]:
    from hippo_core.dream.state import warnings

    lines = warnings(workspace)
    if not lines:
        return []
    return [
        ContextPart("dreaming warnings", "".join(f"{line}\n" for line in lines), True, WARNINGS)
    ]
