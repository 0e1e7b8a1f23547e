"""Whether a process still runs, by its pid: for leftovers of killed runs, ripples and model
servers hippo started, and the session a nudge waits for."""

from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs. One that ended and that nobody reaped yet (a zombie,
    which a container's first process may never reap) has ended; one this user may not
    signal, or that cannot be told, counts as running, so it is left alone. A pid no
    process can have (0, negative, past what the platform's pid type holds) has none."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OverflowError, ValueError):  # too large for a C pid_t: no such process
        return False
    except OSError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc here: kill(0) is the word
    return state != b"Z"
