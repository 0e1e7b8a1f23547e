"""Turns that reach the index after their time was dreamed: the late chunk.

A teammate pushes at noon the session of the evening before; a transcript is copied in
from another machine a week late. The window picks turns by their time, so a run keeps
where arrivals stood when it began (``dream-state.json``, ``arrivals``): the local index's
highest turn id (with the index file's identity: an index made anew by ``ingest --full``
starts the count again), and the team index's own count of arrivals, for each server and
project. The window reads nothing that arrived after that, and the next run dreams,
before its window, the turns that arrived since and started before the window: this
machine's from the local index, the other members' from the team index. A session whose
handoff (or end) arrived late comes with its handoff.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from hippo_core.dream import state as dream_state
from hippo_core.dream.model import Chunk, SessionView

if TYPE_CHECKING:
    from hippo_core.dream.turns import TurnIndex


@dataclass
class Arrivals:
    """Where arrivals stood at the last run (``before``) and stand now (``now``)."""

    before: dict[str, Any]
    now: dict[str, Any] = field(default_factory=dict)
    late: dict[tuple[str, int], str] = field(default_factory=dict)
    """The late turns, with their start times."""
    handoffs: dict[str, str] = field(default_factory=dict)
    """Other machines' sessions whose handoff arrived late, with their end times."""
    restarted: bool = False
    """The local index was made anew since the last run: its arrivals count from now."""

    def chunk(
        self, views: dict[str, tuple[dict[str, Any], tuple[int, ...]]]
    ) -> tuple[Chunk, list[SessionView]] | None:
        """The late chunk and its sessions (each with its late turns' ordinals, and its
        handoff when its end arrived late); None when nothing arrived late."""
        late = {pair: when for pair, when in self.late.items() if pair[0] in views}
        handoffs = {sid: when for sid, when in self.handoffs.items() if sid in views}
        times = [dream_state.parse_time(t) for t in [*late.values(), *handoffs.values()]]
        moments = [m for m in times if m is not None]
        if not moments:
            return None
        chunk = Chunk(min(moments), max(moments) + timedelta(seconds=1), frozenset(late), "late")
        sessions = []
        for sid in sorted({s for s, _o in late} | set(handoffs)):
            record, ordinals = views[sid]
            mine = tuple(sorted(o for s, o in late if s == sid))
            # Its end came late with its last turn, or by itself (a teammate's handoff).
            ended = bool(record.get("ended")) and (
                sid in handoffs or (bool(ordinals) and ordinals[-1] in mine)
            )
            sessions.append(SessionView(record, mine, max(moments), ended))
        return chunk, sessions


def take(
    saved: dict[str, Any],
    local: TurnIndex | None,
    team: TurnIndex | None,
    team_key: str,
    window_start: datetime,
    own: frozenset[str],
    everyone: frozenset[str],
) -> Arrivals:
    """Where arrivals stand now in the local index (``local``) and in the team index
    (``team``, known by ``team_key``; None when there is none or it is away, which keeps
    its last count), and what arrived since the last run and started before
    ``window_start``: ``own`` sessions' turns from the local index, the other members'
    (``everyone``) from the team's."""
    before = saved.get("arrivals")
    before = before if isinstance(before, dict) else {}
    arrivals = Arrivals(before, {"local": before.get("local"), "team": _teams(before)})
    if local is not None:
        upto = local.arrival()
        identity = local.identity()
        arrivals.now["local"] = {"index": identity, "upto": upto}
        last = before.get("local")
        if isinstance(last, dict) and identity and last.get("index") == identity:
            after = last.get("upto")
            if type(after) is int and 0 <= after <= upto:
                arrivals.late.update(local.arrived(after, upto, window_start, own))
        elif isinstance(last, dict):
            arrivals.restarted = True
    if team is not None and team_key:
        upto = team.arrival()
        teams = dict(arrivals.now["team"])
        teams[team_key] = upto
        arrivals.now["team"] = teams
        after = _teams(before).get(team_key)
        if type(after) is int and 0 <= after <= upto:
            arrivals.late.update(team.arrived(after, upto, window_start, everyone - own))
            arrivals.handoffs.update(team.handoffs_arrived(after, upto, window_start))
    return arrivals


def _teams(state: dict[str, Any]) -> dict[str, int]:
    found = state.get("team")
    if not isinstance(found, dict):
        return {}
    return {str(key): value for key, value in found.items() if type(value) is int}
