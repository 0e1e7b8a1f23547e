"""The cycle's steps, and what every step shares (:class:`Cycle`): the workspace, its
``[sleep]`` settings, the pack's passes, the drafting model's override, the lock and the
events.

A sleep drafts (:mod:`.drafting`, checked by :mod:`.operations`); a review is checked
(:mod:`.review`) and lands (:mod:`.landing`); a tick tends (:mod:`.tend`) and checks
(:mod:`.tick`), purging what was flagged (:mod:`.purge`); the voice card (:mod:`.voice`)
goes first in every drafting prompt.

Every command that changes the sleep records takes the cycle's lock first
(``.hippo/sleep/sleep.lock``, through :func:`.landing.locked`, which also finishes a
landing a killed run left), so a review, a tick and a ``hippo remember`` never interleave
their writes; a second sleep or tend finds it held and says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo_core import Event, HippoError, file_lock
from hippo_packs.sleep.config import SleepSettings, load
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import ModelBackend, Pass, Plugins, Workspace

PACK = "sleep"
#: Seconds a command waits for the cycle's lock before it says the cycle is busy.
LOCK_WAIT = 10.0


class Busy(HippoError):
    """A sleep or tend is already running here."""


@dataclass
class Cycle:
    workspace: Workspace
    plugins: Plugins
    settings: SleepSettings
    warnings: list[str] = field(default_factory=list)
    model: ModelBackend | None = None
    """A backend that answers instead of ``[sleep.model]`` (an eval's recording or replay)."""
    lock_wait: float = LOCK_WAIT
    """How long :meth:`lock` waits for a sleep or tend elsewhere before it says busy."""
    _passes: dict[str, Pass] | None = None

    @classmethod
    def open(cls, workspace: Workspace, plugins: Plugins) -> Cycle:
        if not (workspace.packs_dir / PACK).is_dir():
            raise HippoError(
                "the sleep pack is not in this workspace's .hippo/packs/; "
                "add it with `hippo pack add sleep`"
            )
        settings, warnings = load(workspace, plugins)
        cycle = cls(workspace, plugins, settings, warnings)
        from hippo_packs.sleep.records import review_setting

        # A store it cannot write: a later command notices the change.
        with contextlib.suppress(OSError, HippoError):
            review_setting.notice(workspace, settings.review)
        return cycle

    # -- the pack's passes --------------------------------------------------------------

    def pass_(self, name: str) -> Pass:
        """``sleep/<name>`` as the workspace has it (its prompts edited or themed)."""
        if self._passes is None:
            from hippo_core import load_packs

            packs = load_packs(self.workspace, self.plugins, only=None)
            found = next((p for p in packs if p.name == PACK), None)
            self._passes = {p.name: p for p in found.passes} if found else {}
        if name not in self._passes:
            raise HippoError(
                f".hippo/packs/sleep/passes/{name}.toml is missing; "
                "restore it with `hippo pack update sleep`"
            )
        return self._passes[name]

    # -- the model ----------------------------------------------------------------------

    @property
    def mechanical(self) -> bool:
        return self.model is None and not self.settings.model.url

    def model_stamp(self) -> dict[str, Any]:
        if self.mechanical:
            return {"model_mode": "mechanical"}
        extractive = self.settings.model.draft == "extractive"
        return {
            "model_mode": "model",
            "model_name": self.settings.model.name,
            "model_url": self.settings.model.url,
            "model_prompt": "sleep/choose" if extractive else "sleep/draft",
            "drafting": "extractive" if extractive else "abstractive",
        }

    # -- the cores folder ---------------------------------------------------------------

    @property
    def cores_dir(self) -> str:
        return self.settings.cores_dir

    # -- events -------------------------------------------------------------------------

    def emit(self, name: str, **data: Any) -> dict[str, Any]:
        """Keep the event in ``events.jsonl`` and pass it to ``hippo_event`` plugins."""
        record = {"id": store.record_id("e"), "event": name, "at": store.iso(store.now()), **data}
        store.append_event(self.workspace, record)
        heard = {"id": record["id"], "at": record["at"], **data}
        self.plugins.event(self.workspace, Event(f"sleep.{name}", heard))
        return record

    # -- the lock -----------------------------------------------------------------------

    @contextmanager
    def lock(self, *, what: str = "this") -> Iterator[None]:
        """Hold the cycle's lock, or raise :class:`Busy` after :attr:`lock_wait` seconds.
        Only the lock: a command that writes records takes it through
        :func:`hippo_packs.sleep.cycle.landing.locked`, which finishes interrupted
        landings first."""
        path = store.folder(self.workspace, "sleep.lock")
        with file_lock(path, wait=self.lock_wait, owner_only=path.parent) as handle:
            if handle is None:
                raise Busy(
                    f"busy: a sleep or tend is running in this workspace; {what} waits for it "
                    "(try again when it has finished)"
                )
            yield
