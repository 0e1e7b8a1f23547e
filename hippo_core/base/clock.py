"""hippo's clock: the time now, or the time ``HIPPO_NOW`` says.

``HIPPO_NOW`` (seconds since the epoch, or a UTC time such as ``2026-12-07T09:00:00Z``)
makes every reading of hippo's clock that time: dream windows and ``last_success``, the
stale-dreaming warning, ``overdue``, the times on session records, receipts and reports,
the history's recency, and the sleep cycle's bedtimes, ageing and expiry. Tests and
simulations run a month of days in minutes with it. File times are the system's and stay
so: what compares a file's time with the present (the notes index's racy window, the
clean-up of killed runs' files) reads the system clock.

Imported on the agent's hot path, so it imports only ``os`` and ``time`` until the
variable is set.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

VARIABLE = "HIPPO_NOW"


def now() -> float:
    """Seconds since the epoch: ``HIPPO_NOW`` when it is set, else the system's clock.

    A value that is neither is a :class:`~hippo_core.base.errors.HippoError` naming it."""
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
        from hippo_core.base.errors import HippoError

        raise HippoError(
            f"{VARIABLE}={given!r}: give seconds since the epoch or a time such as "
            "2026-12-07T09:00:00Z"
        ) from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def utc_now() -> datetime:
    """:func:`now` as an aware UTC :class:`~datetime.datetime`."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(now(), UTC)


def stamp() -> str:
    """:func:`now` as hippo writes a time in its records: ``2026-11-30T05:21:00Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now()))
