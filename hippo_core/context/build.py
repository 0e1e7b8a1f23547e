"""``hippo context``: the parts every plugin gives for a session, fitted to the budget."""

from __future__ import annotations

from hippo_core.context.budget import ContextBlock, check_budget, fit
from hippo_core.plugins.manager import Plugins, load_plugins

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace


def build_context(
    workspace: Workspace,
    *,
    task: str | None = None,
    session: str | None = None,
    budget: int | None = None,
    plugins: Plugins | None = None,
) -> ContextBlock:
    """Build the block for a session: the parts every plugin gives, fitted to the budget."""
    budget = check_budget(workspace.settings.budget_bytes if budget is None else budget)
    plugins = plugins or load_plugins()
    return fit(plugins.context_parts(workspace, session, task), budget)
