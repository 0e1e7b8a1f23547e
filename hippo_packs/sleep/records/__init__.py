"""The sleep pack's records: its files under ``.hippo/sleep/`` (:mod:`.store`) and the
long-term cores, which are ordinary notes (:mod:`.cores`). The bottom layer: nothing here
imports another part of the pack."""
