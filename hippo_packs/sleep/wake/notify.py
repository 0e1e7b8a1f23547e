"""The webhook: each event of ``[sleep.notify] events`` POSTed as JSON, best effort.

A ``hippo_event`` plugin like any other: the cycle keeps every event in ``events.jsonl``
whatever happens here. Each POST runs on its own thread, so a webhook that hangs holds no
sleep up (a process that ends waits for its POSTs, each at most ``timeout_seconds``); what
came of it is kept in ``notified.jsonl`` by the event's id, and ``hippo sleep events`` and
``GET /events`` show it on the event as ``sent``.

The bearer goes to the configured URL only: a redirect is refused and recorded as a failure,
and a link-local or cloud-metadata address is refused before connecting. With a secret set,
each body is signed: ``X-Hippo-Signature-256: sha256=<hex>`` is HMAC-SHA256 under the secret
of the ``X-Hippo-Timestamp`` value (Unix seconds), a full stop and the body's exact bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, outbound_opener, shown_url
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import Event, Workspace
    from hippo_packs.sleep.config import SleepNotify, SleepSettings

PREFIX = "sleep."
SIGNATURE_HEADER = "X-Hippo-Signature-256"
TIMESTAMP_HEADER = "X-Hippo-Timestamp"


def heard(workspace: Workspace, settings: SleepSettings, event: Event) -> threading.Thread | None:
    """Send ``event`` if the settings ask for it; the thread sending it, or None."""
    if not event.name.startswith(PREFIX) or "id" not in event.data:
        return None
    notify = settings.notify
    name = event.name.removeprefix(PREFIX)
    if not notify.webhook_url or name not in notify.events:
        return None
    # The folder's name, not its path: the path says whose machine and home it is.
    body = {"event": name, "workspace": workspace.root.name, **event.data}
    thread = threading.Thread(
        target=_post, args=(workspace, notify, body), name=f"hippo-notify-{name}"
    )
    thread.start()  # not a daemon: a command that ends waits for its POSTs
    return thread


def signature(secret: str, timestamp: str, data: bytes) -> str:
    """The ``X-Hippo-Signature-256`` value of ``data`` sent at ``timestamp``."""
    signed = timestamp.encode("ascii") + b"." + data
    return "sha256=" + hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()


def post_json(
    url: str,
    body: dict[str, Any],
    token: str,
    timeout: float,
    *,
    secret: str = "",
    allow_link_local: bool = False,
) -> dict[str, Any]:
    """POST ``body`` as JSON with the bearer ``token`` (none when empty), signed with
    ``secret`` (unsigned when empty): ``status``, and an ``error`` in words when the far
    end refused, redirected, failed or never answered."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
    if secret:
        stamp = str(int(time.time()))
        headers[TIMESTAMP_HEADER] = stamp
        headers[SIGNATURE_HEADER] = signature(secret, stamp, data)
    request = urllib.request.Request(url, data, headers, method="POST")
    opener = outbound_opener(allow_link_local=allow_link_local)
    try:
        with opener.open(request, timeout=timeout) as answer:
            return {"status": answer.status}
    except HippoError as exc:  # a redirect, or an address refused
        return {"error": str(exc)}
    except urllib.error.HTTPError as exc:
        exc.close()
        return {"status": exc.code, "error": f"answered {exc.code}"}
    except (OSError, ValueError) as exc:  # refused, unreachable, timed out, a bad URL
        return {"error": f"did not answer ({getattr(exc, 'reason', exc)})"}


def _post(workspace: Workspace, notify: SleepNotify, body: dict[str, Any]) -> None:
    from hippo_packs.sleep.config import bearer_of, secret_of

    outcome: dict[str, Any] = {"id": body["id"], "url": shown_url(notify.webhook_url)}
    try:
        token = bearer_of(notify, "[sleep.notify]")
        secret = secret_of(notify, "[sleep.notify]")
    except HippoError as exc:
        outcome.update(sent=False, error=str(exc))
    else:
        posted = post_json(
            notify.webhook_url,
            body,
            token,
            notify.timeout_seconds,
            secret=secret,
            allow_link_local=notify.allow_link_local,
        )
        if "error" in posted:
            posted["error"] = f"the webhook {posted['error']}"
        outcome.update(sent="error" not in posted, **posted)
    store.append_record(workspace, "notified.jsonl", {**outcome, "at": store.iso(store.now())})
