"""The webhook: events POSTed as JSON with a bearer to a real HTTP server on 127.0.0.1, best
effort: one that answers 500 or hangs is recorded on the event and holds no sleep up."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from hippo_packs.sleep.wake.notify import post_json
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.local_http import recorder, start_server
from tests.sleep_scene import Sleepy, make_sleepy

DOCS = Path(__file__).parent.parent / "docs" / "sleep.md"


def webhook(
    monkeypatch: pytest.MonkeyPatch, *, status: int = 200, hold: threading.Event | None = None
):
    """A server that keeps every POST (its headers and JSON) and answers ``status``; with
    ``hold``, only once the test sets it (a webhook that hangs)."""
    heard: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            heard.append(
                {
                    "auth": self.headers.get("Authorization"),
                    "body": json.loads(raw),
                    "raw": raw,
                    "headers": dict(self.headers),
                    "path": self.path,
                }
            )
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
    # The workspace by its folder's name: its path says whose machine and home it is.
    assert posted[0]["body"]["workspace"] == night.root.name
    assert str(night.root).encode() not in posted[0]["raw"]
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


def test_a_redirect_is_refused_and_the_bearer_never_reaches_the_other_host(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """W1: the webhook answers 302 to another host; hippo does not follow, so that host sees
    no request at all (urllib followed it as a GET with the bearer), and it is no success."""
    elsewhere, stolen, stop_elsewhere = recorder(monkeypatch, "127.0.0.2")
    target = f"{elsewhere}other-host?sig=abc"
    url, heard, stop = recorder(monkeypatch, "127.0.0.1", status=302, location=target)
    night = make_sleepy(make_workspace(), hippo)
    monkeypatch.setenv("HIPPO_TEST_HOOK_BEARER", "webhook-bearer-XYZ")
    notify_settings(night, url, bearer_token_env="HIPPO_TEST_HOOK_BEARER")
    assert sleep_on_three(night)["sleep"]["outcome"] == "drafted"
    outcome = sent(night)["sent"]
    assert outcome["sent"] is False
    assert outcome["error"] == (
        f"the webhook answered 302 to {elsewhere}other-host?sig=[redacted]: "
        "hippo does not follow redirects"
    )
    assert [h["method"] for h in heard] == ["POST"]
    assert heard.credentials() == ["Bearer webhook-bearer-XYZ"]
    assert stolen == []  # the second host never saw a request, let alone the bearer
    stop()
    stop_elsewhere()


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_no_redirect_is_followed_whatever_its_code(
    monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    elsewhere, stolen, stop_elsewhere = recorder(monkeypatch, "127.0.0.2")
    url, heard, stop = recorder(monkeypatch, status=code, location=f"{elsewhere}stolen")
    posted = post_json(f"{url}hook", {"event": "x"}, "the-bearer", 5)
    assert posted == {
        "error": f"answered {code} to {elsewhere}stolen: hippo does not follow redirects"
    }
    assert len(heard) == 1 and stolen == []
    stop()
    stop_elsewhere()


def test_a_request_for_this_machine_never_goes_through_the_proxy(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a process of its own (urllib keeps the proxies it first read), with ``http_proxy``
    set and no ``no_proxy``: the bearer goes to the webhook on 127.0.0.1, not the proxy."""
    url, heard, stop = webhook(monkeypatch)
    proxy, proxied, stop_proxy = recorder(monkeypatch, "127.0.0.2")
    night = make_sleepy(make_workspace(), hippo)
    notify_settings(night, url, bearer_token="the-bearer")
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    env = {k: v for k, v in os.environ.items() if k.lower() != "no_proxy"}
    env["http_proxy"] = proxy
    command = [sys.executable, "-m", "hippo_core", "sleep", "now", "--without-brief", "--json"]
    run = subprocess.run(command, cwd=night.root, env=env, capture_output=True, check=False)
    assert run.returncode == 0, run.stderr
    assert sent(night)["sent"]["sent"] is True
    assert [h["auth"] for h in heard] == ["Bearer the-bearer"] and proxied == []
    stop()
    stop_proxy()


@pytest.mark.parametrize(
    "url",
    ["http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://[fd00:ec2::254]/"],
)
def test_at_send_time_a_link_local_address_is_refused_before_connecting(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """W3: the address the connection would reach is checked after resolving, before any
    byte is sent (the settings check refuses these too; this is the second line)."""
    for proxy in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    posted = post_json(url, {"event": "x"}, "the-bearer", 5)
    assert posted["error"].startswith("would connect to ")
    assert "refused before anything was sent (allow_link_local = true allows it)" in posted["error"]


def test_at_send_time_a_proxy_on_a_link_local_address_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("http_proxy", "http://169.254.1.1:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    posted = post_json("http://hooks.example.invalid/hook", {"event": "x"}, "the-bearer", 5)
    assert posted == {
        "error": "would connect to 169.254.1.1, a link-local address: refused before anything "
        "was sent (allow_link_local = true allows it)"
    }


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud-metadata address"),
        ("https://169.254.10.1/hook", "169.254.10.1 is a link-local address"),
        ("https://[fe80::1]/hook", "fe80::1 is a link-local address"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud-metadata address"),
        ("https://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254 is a cloud-metadata"),
        ("https://metadata.google.internal/x", "metadata.google.internal is a cloud-metadata"),
        ("https://user:pw-SECRET-1@hooks.example.com/", "must not hold a user or password"),
        ("http://hooks.example.com/hook", "is plain http to another machine"),
        ("https://hooks.example.com:99999/", "a port that is not a number"),
        ("https://hooks.example.com/a b", "must not hold a space or a control character"),
        ("ftp://hooks.example.com/", "must be an http:// or https:// URL"),
    ],
)
def test_a_webhook_or_ripple_url_that_could_leak_is_a_settings_error(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, url: str, said: str
) -> None:
    """W3: refused when the settings are read, in one line naming the key, the password
    of a URL never echoed."""
    for table, key in (("notify", "webhook_url"), ("ripple", "url")):
        night = make_sleepy(make_workspace(), hippo)
        extra = 'type = "endpoint"\n' if table == "ripple" else ""
        with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
            handle.write(f"\n[sleep.{table}]\n{extra}{key} = {json.dumps(url)}\n")
        run = night.run("sleep", "status")
        assert run.code == 1 and "Traceback" not in run.err
        assert f"sleep.{table}.{key}: " in run.err and said in run.err, run.err
        assert len(run.err.strip().splitlines()) == 1
        assert "pw-SECRET-1" not in run.err


@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("http://169.254.169.254/", {"allow_link_local": True, "allow_plain_http": True}),
        ("https://metadata.google.internal/", {"allow_link_local": True}),
        ("http://hooks.example.com/", {"allow_plain_http": True}),
    ],
)
def test_the_documented_settings_allow_what_is_refused_by_default(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, url: str, allow: dict[str, bool]
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    notify_settings(night, url, **allow)
    night.ok("sleep", "status")


def test_plain_http_to_this_machine_is_allowed(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    for url in ("http://127.0.0.1:8088/", "http://127.0.0.2:8088/", "http://[::1]:8088/"):
        night = make_sleepy(make_workspace(), hippo)
        notify_settings(night, url)
        night.ok("sleep", "status")
    night = make_sleepy(make_workspace(), hippo)
    notify_settings(night, "http://localhost:8088/")
    night.ok("sleep", "status")


def test_the_url_kept_with_the_event_hides_the_query(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, heard, stop = webhook(monkeypatch)
    night = make_sleepy(make_workspace(), hippo)
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write(f'\n[sleep.notify]\nwebhook_url = "{url}hook?token=q-SECRET-77&v=1"\n')
    sleep_on_three(night)
    outcome = sent(night)["sent"]
    assert outcome["sent"] is True
    assert outcome["url"] == f"{url}hook?token=[redacted]&v=[redacted]"
    assert [h["path"] for h in heard] == ["/hook?token=q-SECRET-77&v=1"]  # sent as written
    kept = (night.root / ".hippo" / "sleep" / "notified.jsonl").read_text()
    assert "q-SECRET-77" not in kept
    stop()


def receiver_check() -> Callable[..., bool]:
    """The receiver's check exactly as docs/sleep.md gives it, to run against real POSTs."""
    text = DOCS.read_text(encoding="utf-8")
    [code] = re.findall(r"```python\n(import hashlib\n.*?)```", text, re.DOTALL)
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOCS), "exec"), namespace)
    return namespace["verified"]  # type: ignore[no-any-return]


def test_each_body_is_signed_and_the_documented_check_accepts_it(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """W2: X-Hippo-Signature-256 is HMAC-SHA256 of the timestamp, a full stop and the exact
    body bytes; the receiver's check in docs/sleep.md accepts what hippo sent, and refuses
    a changed body, a changed time, an old time (a replay) and another secret."""
    verified = receiver_check()
    url, heard, stop = webhook(monkeypatch)
    night = make_sleepy(make_workspace(), hippo)
    monkeypatch.setenv("HIPPO_TEST_HOOK_SECRET", "whsec-test-0123456789")
    notify_settings(night, url, secret_env="HIPPO_TEST_HOOK_SECRET")
    sleep_on_three(night)
    assert sent(night)["sent"]["sent"] is True
    [posted] = [h for h in heard if h["body"]["event"] == "draft_submitted"]
    headers, raw = posted["headers"], posted["raw"]
    assert re.fullmatch(r"sha256=[0-9a-f]{64}", headers["X-Hippo-Signature-256"])
    assert abs(int(headers["X-Hippo-Timestamp"]) - time.time()) < 60
    secret = "whsec-test-0123456789"
    assert verified(secret, headers, raw) is True
    assert verified("another-secret", headers, raw) is False
    assert verified(secret, headers, raw.replace(b'"attempt": 1', b'"attempt": 2')) is False
    later = {**headers, "X-Hippo-Timestamp": str(int(headers["X-Hippo-Timestamp"]) + 1)}
    assert verified(secret, later, raw) is False  # the time is signed too
    assert verified(secret, headers, raw, within=-1) is False  # too old: a replay
    for odd in ("", "¹²³", "12.5", "-1"):
        assert verified(secret, {**headers, "X-Hippo-Timestamp": odd}, raw) is False
    assert verified(secret, {"X-Hippo-Timestamp": headers["X-Hippo-Timestamp"]}, raw) is False
    stop()


def test_the_secret_may_be_given_as_the_bearer_is_and_a_missing_one_sends_nothing(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    verified = receiver_check()
    url, heard, stop = webhook(monkeypatch)
    night = make_sleepy(make_workspace(), hippo)
    notify_settings(night, url, secret="written-in-settings")
    sleep_on_three(night)
    sent(night)
    [posted] = [h for h in heard if h["body"]["event"] == "draft_submitted"]
    assert verified("written-in-settings", posted["headers"], posted["raw"])

    monkeypatch.delenv("HIPPO_TEST_NO_SECRET", raising=False)
    night = make_sleepy(make_workspace(), hippo)
    notify_settings(night, url, secret_env="HIPPO_TEST_NO_SECRET")
    before = len(heard)
    sleep_on_three(night)
    outcome = sent(night)["sent"]
    assert outcome["sent"] is False and "secret_env names HIPPO_TEST_NO_SECRET" in outcome["error"]
    assert len(heard) == before  # unsigned is never sent in place of signed
    stop()
