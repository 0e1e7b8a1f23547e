"""The service's own state: the heartbeat thread that ticks, the nudge that wakes it, and
what ``/status`` says of both."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, process_alive

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle

#: How long a route waits for a sleep or tend running elsewhere before it answers 409.
ROUTE_LOCK_WAIT = 1.0
#: The highest pid a session can have: Linux's ceiling for ``pid_max`` (2**22).
PID_MAX = 4194304


@dataclass
class Service:
    """The cycle of one workspace, served: the heartbeat thread and what the routes call."""

    root: str
    mode: str
    heartbeat: float
    started: float = field(default_factory=time.time)
    last_tick: dict[str, Any] | None = None
    last_error: str | None = None
    _wake: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _waiting_for: int | None = None
    _nudge_wait: float = 180.0
    _thread: threading.Thread | None = None
    first_wait: float | None = None
    """How long the first beat waits, when not a whole heartbeat: ``warmup_seconds`` for a
    service started past bedtime, so an overdue sleep is not a heartbeat late."""

    # -- the cycle ------------------------------------------------------------------------

    def cycle(self, *, lock_wait: float | None = None) -> Cycle:
        """The cycle of the workspace as its files say now; a route's waits at most
        :data:`ROUTE_LOCK_WAIT` for a sleep or tend elsewhere, then answers 409."""
        from hippo_core import Workspace, load_plugins
        from hippo_packs.sleep.cycle import Cycle

        cycle = Cycle.open(Workspace.open(self.root), load_plugins())
        if lock_wait is not None:
            cycle.lock_wait = lock_wait
        return cycle

    def for_route(self) -> Cycle:
        return self.cycle(lock_wait=ROUTE_LOCK_WAIT)

    # -- the heartbeat --------------------------------------------------------------------

    def start(self) -> None:
        if self.mode == "thread":
            self._thread = threading.Thread(target=self._beat, name="hippo-sleep-tick")
            self._thread.daemon = True
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _beat(self) -> None:
        wait = self.heartbeat if self.first_wait is None else self.first_wait
        while not self._stop.is_set():
            self._wake.wait(wait)
            wait = self.heartbeat
            self._wake.clear()
            if self._stop.is_set():
                return
            sender, self._waiting_for = self._waiting_for, None
            try:
                if sender is not None:
                    settle(sender, self._nudge_wait, self._stop)
                self.tick()
            except Exception as exc:  # one bad beat must not end the heartbeat
                self.failed(f"{type(exc).__name__}: {exc}")

    def tick(self) -> dict[str, Any] | None:
        """One tick, its outcome kept for ``/status``; a problem is kept and told (the
        ``tick_failed`` event), not raised."""
        from hippo_packs.sleep import actions

        try:
            done = actions.tick(self.cycle())
        except HippoError as exc:
            self.failed(str(exc))
            return None
        except Exception as exc:  # the heartbeat goes on; the problem is shown in /status
            self.failed(f"{type(exc).__name__}: {exc}")
            return None
        self.last_tick = {"at": time.time(), **done}
        self.last_error = None
        return done

    def failed(self, problem: str) -> None:
        """A beat that failed: ``problem`` goes to ``/status``, the events (``tick_failed``,
        once while the same problem lasts) and the service's stderr."""
        told, self.last_error = self.last_error, problem
        if problem == told:
            return
        print(f"hippo sleep serve: the tick failed: {problem}", file=sys.stderr, flush=True)
        # A workspace that cannot be opened (its settings broken) has nowhere to keep an
        # event: /status and stderr say it then.
        with contextlib.suppress(Exception):
            self.cycle().emit("tick_failed", error=problem)

    def nudge(self, sender: int | None) -> dict[str, Any]:
        """Your turn: a tick now, which redrafts what was denied whatever the clock says.
        In thread mode it wakes the heartbeat and returns at once; the tick it starts first
        waits for ``sender`` (the pid of the session that nudged) to end, never killing it."""
        from hippo_packs.sleep import actions

        sender = sender_pid(sender)
        cycle = self.for_route()
        if self.mode != "thread":
            return actions.nudge(cycle)
        actions.noted(cycle)
        self._nudge_wait = cycle.settings.nudge_wait_seconds
        self._waiting_for = sender
        self._wake.set()
        return {"ok": True, "woke": True, "message": "woke the loop; a tick runs now"}

    def state(self) -> dict[str, Any]:
        """The service's own part of ``/status``."""
        return {
            "mode": self.mode,
            "heartbeat_seconds": self.heartbeat,
            "started_at": iso(self.started),
            "last_tick_at": iso(self.last_tick["at"]) if self.last_tick else None,
            "last_error": self.last_error,
        }


def warmup(cycle: Cycle) -> float | None:
    """``warmup_seconds`` when the cycle is past bedtime (a sleep is overdue) and that is
    sooner than a heartbeat; None when the first beat waits a whole heartbeat."""
    from hippo_packs.sleep.cycle.tick import bedtime
    from hippo_packs.sleep.records import store

    overdue = bedtime(cycle, store.state(cycle.workspace)) <= store.now()
    soon = cycle.settings.warmup_seconds
    return soon if overdue and soon < cycle.settings.heartbeat else None


def settle(pid: int, timeout: float, stop: threading.Event | None = None) -> bool:
    """Wait up to ``timeout`` seconds for process ``pid`` to end; never kill it. True once
    it has ended (or never was), False when it is still running at the deadline."""
    deadline = time.monotonic() + timeout
    while process_alive(pid):
        if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
            return False
        time.sleep(0.1)
    return True


def iso(moment: float | None) -> str | None:
    return None if moment is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def sender_pid(value: Any) -> int | None:
    """The pid a nudge names (None for none); anything but a whole number from 1 to
    :data:`PID_MAX` is an error."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= PID_MAX:
        raise HippoError(
            f"pid, when given, is the process id of the session: a whole number from 1 to {PID_MAX}"
        )
    return value
