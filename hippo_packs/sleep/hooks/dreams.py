"""What the dream leaves to the sleep cycle: its cores.

A core changes only through the cycle's reviewed drafts, where its title, its text, its
satellites and its ``evidence_count`` are kept in step, and where a changed value is a
``supersede`` that leaves the old core ``superseded``. A per-note dream pass (verify) that
fixed a value in a core's title line and not in its body left a current core that
contradicted itself, and that the supersede rule no longer saw. So every per-note pass but
the cycle's own leaves the cores alone (:func:`left_alone`), and says why in the dream's
report. And no dream proposal at all may write there (:class:`CoresFolder`, a validator):
not a consolidate append to a core a handoff links, not a ``create`` of a forged core with
``approved_by`` or ``evidence_count`` of its choosing, anywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo_core import CheckContext, Note, Proposal, Workspace

WHY = "a core of the sleep cycle, which changes only through its reviewed drafts"


def left_alone(workspace: Workspace, notes: list[Note]) -> dict[str, str]:
    """The cores among ``notes``: notes of the cores folder whose frontmatter says
    ``type: core``, each with :data:`WHY`. With settings the cycle cannot read, the
    folder is the default one (the dream goes on; ``hippo doctor`` names the setting)."""
    inside = f"{_cores_dir(workspace)}/"
    return {n.path: WHY for n in notes if n.path.startswith(inside) and n.meta.type == "core"}


#: The frontmatter keys only the cycle writes, which say who approved a core and on what.
PROVENANCE = ("approved_by", "evidence_count", "from_draft")


class CoresFolder:
    """A dream's proposal may not change or create a note in the cores folder, nor create a
    note that claims a core's provenance: a core is the cycle's, landed from a reviewed
    draft with its approver and its evidence."""

    name = "sleep-cores"

    def check(self, proposal: Proposal, context: CheckContext) -> list[str]:
        import os

        workspace = context.workspace
        if not os.path.isdir(workspace.inside(".hippo", "packs", "sleep")):
            return []
        folder = _cores_dir(workspace)
        if proposal.note.startswith(f"{folder}/"):
            return [
                f"note {proposal.note!r} is in the sleep cycle's cores folder ({folder}/), "
                "which changes only through its reviewed drafts"
            ]
        if proposal.kind == "create" and proposal.new.startswith("---"):
            from hippo_core import split_frontmatter

            head = proposal.new[: split_frontmatter(proposal.new).body_start]
            claimed = [key for key in PROVENANCE if f"\n{key}:" in head]
            if claimed or "\ntype: core" in head:
                keys = ", ".join(claimed or ["type: core"])
                return [
                    f"a new note may not claim a core's provenance ({keys}): only the "
                    "sleep cycle writes cores"
                ]
        return []


def _cores_dir(workspace: Workspace) -> str:
    from hippo_core import HippoError, load_plugins
    from hippo_packs.sleep.config import SleepSettings, load

    try:
        return str(load(workspace, load_plugins())[0].cores_dir)
    except HippoError:
        return str(SleepSettings.model_validate({}).cores_dir)
