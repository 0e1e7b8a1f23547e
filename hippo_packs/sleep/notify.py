"""The webhook: each event of ``[sleep.notify] events`` POSTed as JSON, best effort.

A ``hippo_event`` plugin like any other: the cycle keeps every event in ``events.jsonl``
whatever happens here. Each POST runs on its own thread, so a webhook that hangs holds no
sleep up (a process that ends waits for its POSTs, each at most ``timeout_seconds``); what
came of it is kept in ``notified.jsonl`` by the event's id, and ``hippo sleep events`` and
``GET /events`` show it on the event as ``sent``.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from hippo_core.errors import HippoError
from hippo_packs.sleep import store

if TYPE_CHECKING:
    from hippo_core.dream.model import Event
    from hippo_core.workspace import Workspace
    from hippo_packs.sleep.config import SleepNotify

PREFIX = "sleep."


def heard(workspace: Workspace, event: Event) -> threading.Thread | None:
    """Send ``event`` if the settings ask for it; the thread sending it, or None."""
    if not event.name.startswith(PREFIX) or "id" not in event.data:
        return None
    try:
        from hippo_core.plugins import load_plugins
        from hippo_packs.sleep.config import load

        settings, _ = load(workspace, load_plugins())
    except HippoError:
        return None  # the cycle that emitted it read them; a change since is the next one's
    notify = settings.notify
    name = event.name.removeprefix(PREFIX)
    if not notify.webhook_url or name not in notify.events:
        return None
    body = {"event": name, "workspace": str(workspace.root), **event.data}
    thread = threading.Thread(
        target=_post, args=(workspace, notify, body), name=f"hippo-notify-{name}"
    )
    thread.start()  # not a daemon: a command that ends waits for its POSTs
    return thread


def _post(workspace: Workspace, notify: SleepNotify, body: dict[str, Any]) -> None:
    from hippo_packs.sleep.config import bearer_of

    outcome: dict[str, Any] = {"id": body["id"], "url": notify.webhook_url}
    try:
        token = bearer_of(notify, "[sleep.notify]")
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
        request = urllib.request.Request(notify.webhook_url, data, headers, method="POST")
        with urllib.request.urlopen(request, timeout=notify.timeout_seconds) as answer:
            outcome.update(sent=True, status=answer.status)
    except urllib.error.HTTPError as exc:
        outcome.update(sent=False, status=exc.code, error=f"the webhook answered {exc.code}")
    except HippoError as exc:
        outcome.update(sent=False, error=str(exc))
    except (OSError, ValueError) as exc:  # refused, unreachable, timed out, a bad URL
        reason = getattr(exc, "reason", exc)
        outcome.update(sent=False, error=f"the webhook did not answer ({reason})")
    store.append_record(workspace, "notified.jsonl", {**outcome, "at": store.iso(store.now())})
