"""The sleep pack: fragments an agent remembers, briefs from the main model, drafts of
long-term memory operations written by a small model and reviewed one by one, redrafts
from the critique, purges with tombstones.

A plugin like any third party's: loaded through the entry point group ``hippo``
(:mod:`.plugin`), it imports nothing of ``hippo_core`` but the public API that
``docs/plugins.md`` lists. Its pack data (pass files, prompts, persona) is the folder
``pack/``, which ``hippo pack add sleep`` copies into ``.hippo/packs/sleep/``.

Its rooms, bottom up; each imports only the rooms below it (``tests/test_layers.py``)::

    config.py   the [sleep] settings
    records/    its files under .hippo/sleep/, and the cores (notes)
    model/      the drafting model's backend and the server hippo runs for it
    cycle/      the steps: a sleep drafts, a review lands, a tick tends and checks
    wake/       what the cycle's events wake: the webhook, the ripple
    hooks/      what hippo's own commands call (kinds, review queue, readers, doctor, evals)
    actions/    what every way in does, and the cycle's state in words
    service/    hippo sleep serve: the heartbeat, the routes, /mcp
    commands/   the commands and the MCP tools
    plugin.py   every hook, registered with the kernel
"""
