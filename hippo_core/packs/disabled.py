"""``disabled_packs``: the packs and themes a workspace turns off though they are installed.

A pack a pip-installed distribution ships runs in every workspace of that environment;
``hippo pack remove`` of it turns it off in one workspace (committed with the settings),
and ``hippo pack add`` turns it on again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace


def turn_on(workspace: Workspace, name: str) -> None:
    """Take ``name`` out of ``disabled_packs``, when it is there."""
    _set_disabled(workspace, [n for n in workspace.settings.disabled_packs if n != name])


def turn_off(workspace: Workspace, name: str) -> None:
    """Put ``name`` in ``disabled_packs``, when it is not there."""
    names = list(workspace.settings.disabled_packs)
    _set_disabled(workspace, names if name in names else [*names, name])


def _set_disabled(workspace: Workspace, names: list[str]) -> None:
    from hippo_core.settings.schema import set_setting

    if names == list(workspace.settings.disabled_packs):
        return
    shown = workspace.relative(workspace.settings_path)
    set_setting(workspace.settings_path, "disabled_packs", json.dumps(names), shown_as=shown)
