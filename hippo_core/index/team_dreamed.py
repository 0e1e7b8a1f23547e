"""Who last dreamed a workspace's project on its team index: the file in ``.hippo/cache/``
that an ingest or a dream reaching the server writes
(:func:`hippo_core.index.team.note_team_dream`) and the context block's warning and
``hippo doctor`` read (:func:`hippo_core.dream.state.team_dream`), which may not call the
server.

A name only: the context block imports it on every session start.
"""

from __future__ import annotations

#: In ``.hippo/cache/``: who last dreamed the workspace's project on its team index, and
#: when, as the last ingest or dream that reached the server saw it.
TEAM_DREAMED = "team-dreamed.json"
