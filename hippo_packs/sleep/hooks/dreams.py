"""What the dream leaves to the sleep cycle: its cores.

A core changes only through the cycle's reviewed drafts, where its title, its text, its
satellites and its ``evidence_count`` are kept in step, and where a changed value is a
``supersede`` that leaves the old core ``superseded``. A per-note dream pass (verify) that
fixed a value in a core's title line and not in its body left a current core that
contradicted itself, and that the supersede rule no longer saw. So every per-note pass but
the cycle's own leaves the cores alone (:func:`left_alone`), and says why in the dream's
report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo_core import Note, Workspace

WHY = "a core of the sleep cycle, which changes only through its reviewed drafts"


def left_alone(workspace: Workspace, notes: list[Note]) -> dict[str, str]:
    """The cores among ``notes``: notes of the cores folder whose frontmatter says
    ``type: core``, each with :data:`WHY`. With settings the cycle cannot read, the
    folder is the default one (the dream goes on; ``hippo doctor`` names the setting)."""
    from hippo_core import HippoError, load_plugins
    from hippo_packs.sleep.config import SleepSettings, load

    try:
        folder = load(workspace, load_plugins())[0].cores_dir
    except HippoError:
        folder = SleepSettings.model_validate({}).cores_dir
    inside = f"{folder}/"
    return {n.path: WHY for n in notes if n.path.startswith(inside) and n.meta.type == "core"}
