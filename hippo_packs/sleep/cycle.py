"""What every step of the cycle shares: the workspace, its ``[sleep]`` settings, the
pack's passes, the drafting model, the lock and the events.

Every command that changes the sleep records takes the cycle's lock first
(``.hippo/sleep/sleep.lock``), so a review, a tick and a ``hippo remember`` never
interleave their writes; a second sleep or tend finds it held and says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo_core.errors import HippoError
from hippo_core.events import Event
from hippo_packs.sleep import store
from hippo_packs.sleep.config import SleepSettings, load

if TYPE_CHECKING:
    from hippo_core.dream.model import ModelBackend, Pass
    from hippo_core.plugins import Plugins
    from hippo_core.workspace import Workspace

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
        return cls(workspace, plugins, settings, warnings)

    # -- the pack's passes --------------------------------------------------------------

    def pass_(self, name: str) -> Pass:
        """``sleep/<name>`` as the workspace has it (its prompts edited or themed)."""
        if self._passes is None:
            from hippo_core.dream.packs import load_packs

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

    def backend(self) -> ModelBackend:
        if self.model is not None:
            return self.model
        from hippo_core.dream.backends import OpenAIBackend, api_key
        from hippo_packs.sleep import lifecycle

        model = self.settings.model
        key = api_key(model.api_key_env, "sleep.model.api_key_env")
        backend = OpenAIBackend(
            model.url.rstrip("/") + "/chat/completions",
            model.name,
            model.max_tokens,
            model.timeout_seconds,
            key,
            extra_body=dict(model.extra_body),
        )
        # A managed server is started by the first call that needs it, not before.
        return lifecycle.Managed(backend, self) if lifecycle.managed(self) else backend

    def model_stamp(self) -> dict[str, Any]:
        if self.mechanical:
            return {"model_mode": "mechanical"}
        return {
            "model_mode": "model",
            "model_name": self.settings.model.name,
            "model_url": self.settings.model.url,
            "model_prompt": "sleep/draft",
        }

    # -- the cores folder ---------------------------------------------------------------

    @property
    def cores_dir(self) -> str:
        return self.settings.cores_dir

    # -- events -------------------------------------------------------------------------

    def emit(self, name: str, **data: Any) -> dict[str, Any]:
        """Keep the event in ``events.jsonl`` and pass it to ``hippo_event`` plugins."""
        record = {"id": store.new_id("e"), "event": name, "at": store.iso(store.now()), **data}
        store.append_event(self.workspace, record)
        heard = {"id": record["id"], "at": record["at"], **data}
        self.plugins.event(self.workspace, Event(f"sleep.{name}", heard))
        return record

    # -- the lock -----------------------------------------------------------------------

    @contextmanager
    def lock(self, *, what: str = "this") -> Iterator[None]:
        from hippo_core.locks import file_lock

        path = store.folder(self.workspace, "sleep.lock")
        with file_lock(path, wait=self.lock_wait) as handle:
            if handle is None:
                raise Busy(
                    f"busy: a sleep or tend is running in this workspace; {what} waits for it "
                    "(try again when it has finished)"
                )
            from hippo_packs.sleep.landing import recover

            recover(self)
            yield
