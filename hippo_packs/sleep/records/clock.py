"""The sleep cycle's clock: the time now, or the time ``HIPPO_NOW`` says.

``HIPPO_NOW`` (seconds since the epoch, or a UTC time such as ``2026-12-07T09:00:00Z``)
makes every reading of the cycle's clock that time: bedtime, ageing, expiry, the times on
records. Tests and simulations run a week of nights in seconds with it; nothing else
should set it. Imported on the agent's hot path (the open loops of the context block), so
it imports only ``os`` and ``time`` until the variable is set.
"""

from __future__ import annotations

import os
import time

VARIABLE = "HIPPO_NOW"


def now() -> float:
    """Seconds since the epoch: ``HIPPO_NOW`` when it is set, else the system's clock."""
    given = os.environ.get(VARIABLE, "").strip()
    if not given:
        return time.time()
    try:
        return float(given)
    except ValueError:
        pass
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(given.replace("Z", "+00:00"))
    except ValueError:
        from hippo_core import HippoError

        raise HippoError(
            f"{VARIABLE}={given!r}: give seconds since the epoch or a time such as "
            "2026-12-07T09:00:00Z"
        ) from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
