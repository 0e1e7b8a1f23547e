"""The webhook: events POSTed as JSON with a bearer to a real HTTP server on 127.0.0.1, best
effort: one that answers 500 or hangs is recorded on the event and holds no sleep up."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.local_http import start_server
from tests.sleep_scene import Sleepy, make_sleepy


def webhook(
    monkeypatch: pytest.MonkeyPatch, *, status: int = 200, hold: threading.Event | None = None
):
    """A server that keeps every POST (its headers and JSON) and answers ``status``; with
    ``hold``, only once the test sets it (a webhook that hangs)."""
    heard: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            heard.append({"auth": self.headers.get("Authorization"), "body": body})
            if hold is not None:
                hold.wait(60)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            except OSError:
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    url, stop = start_server(Handler, monkeypatch)
    return url, heard, stop


def notify_settings(night: Sleepy, url: str, **extra: Any) -> None:
    lines = ["", "[sleep.notify]", f'webhook_url = "{url}hook"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in extra.items()]
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def sleep_on_three(night: Sleepy) -> dict[str, Any]:
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    return night.json("sleep", "now", "--without-brief")


def sent(night: Sleepy, event: str = "draft_submitted") -> dict[str, Any]:
    """The event once the webhook's outcome is on it (a POST runs on its own thread)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = [e for e in night.json("sleep", "events") if e["event"] == event]
        if found and "sent" in found[0]:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no outcome of the webhook on {event}")


def test_the_chosen_events_are_posted_with_the_bearer_and_marked_sent(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, heard, stop = webhook(monkeypatch)
    night = make_sleepy(make_workspace(), hippo)
    monkeypatch.setenv("HIPPO_TEST_HOOK_BEARER", "hook-secret")
    notify_settings(night, url, bearer_token_env="HIPPO_TEST_HOOK_BEARER")
    slept = sleep_on_three(night)
    assert slept["sleep"]["outcome"] == "drafted"
    submitted = sent(night)  # the POST runs on its own thread: its outcome says it is done
    posted = [h for h in heard if h["body"]["event"] == "draft_submitted"]
    assert len(posted) == 1 and posted[0]["auth"] == "Bearer hook-secret"
    assert posted[0]["body"]["draft"] == slept["sleep"]["draft"]
    assert posted[0]["body"]["operations"] == 2 and posted[0]["body"]["id"].startswith("e")
    assert {h["body"]["event"] for h in heard} <= {"draft_submitted", "sleep_failed"}
    assert submitted["sent"]["sent"] is True and submitted["sent"]["status"] == 200
    events = night.json("sleep", "events")
    assert all("sent" not in e for e in events if e["event"] != "draft_submitted")
    stop()


def test_a_webhook_that_fails_or_hangs_is_recorded_and_holds_nothing_up(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _, stop = webhook(monkeypatch, status=500)
    night = make_sleepy(make_workspace(), hippo)
    notify_settings(night, url)
    assert sleep_on_three(night)["sleep"]["outcome"] == "drafted"
    failed = sent(night)
    assert failed["sent"] == {
        "url": f"{url}hook",
        "sent": False,
        "status": 500,
        "error": "the webhook answered 500",
        "at": failed["sent"]["at"],
    }
    stop()

    hold = threading.Event()
    url, heard, stop = webhook(monkeypatch, hold=hold)
    night = make_sleepy(make_workspace(), hippo)
    notify_settings(night, url, timeout_seconds=0.5)
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    command = [sys.executable, "-m", "hippo_core", "sleep", "now", "--without-brief", "--json"]
    run = subprocess.run(command, cwd=night.root, capture_output=True, text=True, check=False)
    # The whole command ran while the webhook still held its POST: nothing waited on it
    # beyond the POST's own timeout.
    assert not hold.is_set() and heard
    assert run.returncode == 0 and json.loads(run.stdout)["sleep"]["outcome"] == "drafted"
    hung = sent(night)
    assert hung["sent"]["sent"] is False
    assert hung["sent"]["error"].startswith("the webhook did not answer")
    hold.set()
    stop()

    night = make_sleepy(make_workspace(), hippo)
    notify_settings(night, "http://127.0.0.1:9/")  # nothing listens on the discard port
    assert sleep_on_three(night)["sleep"]["outcome"] == "drafted"
    assert sent(night)["sent"]["sent"] is False


def test_a_webhook_url_that_is_not_http_is_a_settings_error(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[sleep.notify]\nwebhook_url = "file:///etc/passwd"\n')
    run = night.run("sleep", "status")
    assert run.code == 1 and "webhook_url" in run.err and "http://" in run.err
