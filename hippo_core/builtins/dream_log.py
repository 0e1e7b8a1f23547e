"""Logs what a dream or a review does, event by event, to the ``hippo.dream`` logger.

``hippo dream --verbose`` shows these lines on stderr as the run goes.
"""

from __future__ import annotations

from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.plugins.events import Event
    from hippo_core.workspace.folder import Workspace


@hookimpl
def hippo_event(workspace: Workspace, event: Event) -> None:
    import logging

    details = " ".join(f"{key}={value}" for key, value in event.data.items())
    logging.getLogger("hippo.dream").info("%s %s", event.name, details)
