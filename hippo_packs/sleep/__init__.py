"""The sleep pack: fragments an agent remembers, briefs from the main model, drafts of
long-term memory operations written by a small model and reviewed one by one, redrafts
from the critique, purges with tombstones.

It is a first-party plugin loaded through the entry point group ``hippo`` like any third
party's (``hippo_packs.sleep.plugin``), and its pack data (pass files, prompts, persona) is
the folder ``pack/``, which ``hippo pack add sleep`` copies into ``.hippo/packs/sleep/``.
"""
