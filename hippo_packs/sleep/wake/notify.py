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

from hippo_core import HippoError
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import Event, Workspace
    from hippo_packs.sleep.config import SleepNotify, SleepSettings

PREFIX = "sleep."


def heard(workspace: Workspace, settings: SleepSettings, event: Event) -> threading.Thread | None:
    """Send ``event`` if the settings ask for it; the thread sending it, or None."""
    if not event.name.startswith(PREFIX) or "id" not in event.data:
        return None
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


def post_json(url: str, body: dict[str, Any], token: str, timeout: float) -> dict[str, Any]:
    """POST ``body`` as JSON with the bearer ``token`` (none when empty): ``status``, and an
    ``error`` in words when the far end refused, failed or never answered."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
    request = urllib.request.Request(url, data, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return {"status": answer.status}
    except urllib.error.HTTPError as exc:
        return {"status": exc.code, "error": f"answered {exc.code}"}
    except (OSError, ValueError) as exc:  # refused, unreachable, timed out, a bad URL
        return {"error": f"did not answer ({getattr(exc, 'reason', exc)})"}


def _post(workspace: Workspace, notify: SleepNotify, body: dict[str, Any]) -> None:
    from hippo_packs.sleep.config import bearer_of

    outcome: dict[str, Any] = {"id": body["id"], "url": notify.webhook_url}
    try:
        token = bearer_of(notify, "[sleep.notify]")
    except HippoError as exc:
        outcome.update(sent=False, error=str(exc))
    else:
        posted = post_json(notify.webhook_url, body, token, notify.timeout_seconds)
        if "error" in posted:
            posted["error"] = f"the webhook {posted['error']}"
        outcome.update(sent="error" not in posted, **posted)
    store.append_record(workspace, "notified.jsonl", {**outcome, "at": store.iso(store.now())})
