"""The sleep pack's readers, for any pass that wants them (``reads = ["cores"]``).

The sleep cycle fills its own prompts cluster by cluster; these give a dream pass the same
text for the whole workspace: the free fragments, the live cores, the open brief and the
denied operations waiting for a redraft. None is essential: a pass that reads them still
runs on a chunk where they are empty.
"""

from __future__ import annotations

from hippo_core import Item, ReadContext


class _Reader:
    essential = False

    def __init__(self, name: str) -> None:
        self.name = name

    def read(self, context: ReadContext) -> list[Item]:
        from hippo_core import load_plugins
        from hippo_packs.sleep.cycle import Cycle, drafting
        from hippo_packs.sleep.cycle.tend import waiting_redrafts
        from hippo_packs.sleep.records import store
        from hippo_packs.sleep.records.cores import all_cores

        cycle = Cycle.open(context.workspace, load_plugins())
        if self.name == "fragments":
            text = drafting.fragments_text(drafting.free_fragments(cycle))
        elif self.name == "cores":
            text = drafting.cores_text(
                [c for c in all_cores(cycle.workspace, cycle.cores_dir) if not c.superseded_by]
            )
        elif self.name == "brief":
            text = drafting.steer_text(store.open_brief(cycle.workspace), None)
        else:
            denied = [
                op
                for d in waiting_redrafts(cycle)
                for op in d["operations"]
                if op.get("status") == "denied"
            ]
            text = (
                "".join(
                    f"- {op['kind']}: {op.get('content')}\n  critique: {op.get('critique')}\n"
                    for op in denied
                )
                or "(none)\n"
            )
        return [Item(self.name, text)]


READERS = {name: _Reader(name) for name in ("fragments", "cores", "brief", "critiques")}
