"""The viewer, ``GET /viewer`` of a real ``hippo sleep serve``, in a real headless Chromium
(Debian's ``chromium``, driven by Playwright for Python pointed at it: no browser download).
It loads the page, reads what it says, presses Sleep now and Tend now, and checks what
changed; a screenshot is kept in ``$HIPPO_TEST_ARTIFACTS`` (or the test's own folder)."""

from __future__ import annotations

import http.client
import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.requires import missing
from tests.sleep_scene import Sleepy, make_sleepy
from tests.test_sleep_service import Served, serving, stop

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(*args: str) -> Iterator[Any]:
    if CHROMIUM is None:
        missing("no chromium on PATH: .ci/browser.sh installs Debian's chromium package")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("no Playwright for Python: it is in [dev]")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", *args]
        )
        yield launched
        launched.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    yield from chromium()


@pytest.fixture
def rebound_browser() -> Iterator[Any]:
    """A browser for which ``evil.test`` resolves to 127.0.0.2: a loopback address, as an
    attacker's name does once DNS rebinding has pointed it at this machine."""
    yield from chromium("--host-resolver-rules=MAP evil.test 127.0.0.2")


@pytest.fixture
def served(make_workspace: WorkspaceMaker, hippo: HippoRunner) -> Iterator[tuple[Sleepy, Served]]:
    night = make_sleepy(make_workspace(), hippo)
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[sleep.serve]\nbearer_token = "view-me"\n')
    service = serving(night.root, token="view-me")
    yield night, service
    assert "Traceback" not in stop(service)


def test_the_viewer_says_what_the_cycle_does_and_its_buttons_work(
    browser: Any, served: tuple[Sleepy, Served], tmp_path: Path
) -> None:
    night, service = served
    base = f"http://{service.host}:{service.port}"
    page = browser.new_page()
    refused = page.goto(f"{base}/viewer")  # the bearer, even for the page
    assert refused is not None and refused.status == 401
    assert "/viewer?token=" in page.inner_text("body")  # which says how to open it
    opened = page.goto(f"{base}/viewer?token=view-me")
    assert opened is not None
    policy = opened.headers["content-security-policy"]
    assert policy.startswith("default-src 'self'; ") and "frame-ancestors 'none'" in policy
    assert opened.headers["x-frame-options"] == "DENY"
    assert opened.headers["referrer-policy"] == "no-referrer"
    # Functions, not strings: the page's policy lets no string be evaluated as script.
    drawn = "() => document.body.dataset.fresh === 'yes'"  # it asked the service and drew it
    page.wait_for_function(drawn)
    assert page.url == f"{base}/viewer"  # the bearer left the address bar; the page kept it
    assert "Mechanical mode" in page.inner_text("#said")
    assert "Mechanical mode" in page.inner_text("#broke")
    assert "Nothing waits for a verdict." in page.inner_text("#queue")
    accent = page.eval_on_selector("header", "e => getComputedStyle(e).backgroundColor")
    assert accent == "rgb(201, 160, 220)"  # wisteria, #c9a0dc

    page.click("#sleep-now")  # no brief: the sleep asks for one
    page.wait_for_function("() => document.getElementById('done').textContent !== ''")
    page.wait_for_function(drawn)
    assert page.inner_text("#done") == "Asked for a brief: the next sleep runs on it."

    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys mattered")
    page.click("#sleep-now")
    page.wait_for_function("() => document.getElementById('done').textContent.startsWith('Slept')")
    assert page.inner_text("#done") == "Slept: drafted."
    draft = night.draft()
    page.wait_for_function(
        f"() => document.getElementById('queue').textContent.includes('{draft['id']}')"
    )

    page.click("#tend-now")
    page.wait_for_function("() => document.getElementById('done').textContent.startsWith('Tended')")
    assert page.inner_text("#done") == "Tended: 0 chain(s) closed, 0 redraft(s)."
    page.wait_for_function(drawn)
    assert draft["id"] in page.inner_text("#queue")
    folder = Path(os.environ.get("HIPPO_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "sleep-viewer.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_viewer_opens_with_the_bearer_the_service_made(
    browser: Any, make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """No bearer set: the address ``hippo sleep serve`` printed opens the viewer, whose
    script runs under its policy, drops the bearer from the address and still uses it."""
    night = make_sleepy(make_workspace(), hippo)
    service = serving(night.root)
    try:
        base = f"http://{service.host}:{service.port}"
        page = browser.new_page()
        page.goto(f"{base}/viewer?token={service.token}&from=terminal#top")
        page.wait_for_function("() => document.body.dataset.fresh === 'yes'")
        assert page.url == f"{base}/viewer?from=terminal#top"
        assert "Mechanical mode" in page.inner_text("#said")
        page.click("#tend-now")
        page.wait_for_function("() => document.getElementById('done').textContent !== ''")
        assert page.inner_text("#done") == "Tended: 0 chain(s) closed, 0 redraft(s)."
    finally:
        assert "Traceback" not in stop(service)


#: The attacker's page: it tries to read and to change the service, across origins and
#: through its own origin once that reaches the service (rebinding), then frames it.
ATTACK = """<!doctype html><html><body>
<iframe id="framed" src="TARGET/viewer"></iframe><iframe name="sink"></iframe>
<script>
const T = "TARGET";
const card = JSON.stringify({text: "pwned", why: "pwned"});
const json = {"Content-Type": "application/json"};
async function attempt(name, work) {
  try { window.tried[name] = await work(); } catch (e) { window.tried[name] = "failed"; }
}
async function attack() {
  await attempt("read", async () => (await fetch(T + "/status")).status);
  for (const path of ["/sleep", "/check", "/tend", "/nudge"]) {
    await attempt("post " + path, async () => (await fetch(T + path, {method: "POST",
      mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: '{"pid": 1}'})).type);
  }
  await attempt("put", async () => (await fetch(T + "/voice", {method: "PUT", headers: json,
    body: card})).status);
  await attempt("rebound read", async () => (await fetch("/status")).status);
  await attempt("rebound check", async () => (await fetch("/check", {method: "POST"})).status);
  await attempt("rebound put", async () => (await fetch("/voice", {method: "PUT",
    headers: json, body: card})).status);
  await attempt("rebound mcp", async () => (await fetch("/mcp", {method: "POST",
    headers: {...json, Accept: "application/json, text/event-stream"}, body: CALL})).status);
  const form = document.createElement("form");
  form.method = "POST"; form.action = T + "/sleep"; form.enctype = "text/plain";
  form.target = "sink";
  const field = document.createElement("input");
  field.name = '{"a": "'; field.value = '"}';
  form.appendChild(field); document.body.appendChild(form);
  const landed = new Promise((done) => { document.getElementsByName("sink")[0].onload = done; });
  form.submit();
  await landed;
  window.done = true;
}
window.tried = {};
attack();
</script></body></html>
"""


class Attacker(http.server.BaseHTTPRequestHandler):
    """The attacker's server: its page, and every other request passed on to the service
    with its Host kept, which is what the service sees once the attacker's name resolves
    to this machine."""

    page = b""
    target: tuple[str, int] = ("127.0.0.1", 0)

    def do_GET(self) -> None:
        if self.path == "/attack.html":
            self._send(200, "text/html", self.page)
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        passed = http.client.HTTPConnection(*self.target, timeout=30)
        passed.request(self.command, self.path, body=body, headers=dict(self.headers))
        answer = passed.getresponse()
        self._send(answer.status, answer.getheader("Content-Type") or "", answer.read())
        passed.close()

    do_POST = do_PUT = do_OPTIONS = do_GET

    def _send(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_page_of_another_origin_can_neither_read_nor_change_the_service(
    rebound_browser: Any, make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """With no bearer at all (bearer = "none", the weakest the settings allow), a page on
    evil.test, served from the service's own port on another loopback address, cannot
    read the service across origins, cannot change it with no-cors POSTs, a PUT or a form,
    gets 421 for everything it sends through its own origin once that reaches the
    service, and cannot frame the viewer; and the service's files stay as they were."""
    from tests.test_sleep_service import CALL, kept, with_work

    night = make_sleepy(make_workspace(), hippo)
    with_work(night, '[sleep.serve]\nbearer = "none"\n')
    service = serving(night.root)
    target = f"http://127.0.0.1:{service.port}"
    page = ATTACK.replace("TARGET", target).replace("CALL", json.dumps(CALL))
    handler = type(
        "Evil", (Attacker,), {"page": page.encode(), "target": ("127.0.0.1", service.port)}
    )
    evil = http.server.ThreadingHTTPServer(("127.0.0.2", service.port), handler)
    thread = threading.Thread(target=evil.serve_forever, daemon=True)
    thread.start()
    try:
        before = kept(night.root)
        tab = rebound_browser.new_page()
        tab.goto(f"http://evil.test:{service.port}/attack.html")
        tab.wait_for_function("() => window.done === true", timeout=30_000)
        tried = tab.evaluate("() => window.tried")
        assert tried["read"] == "failed"  # no CORS header: the answer is not the page's
        for path in ("/sleep", "/check", "/tend", "/nudge"):
            assert tried[f"post {path}"] == "opaque"  # sent, answered, and (below) refused
        assert tried["put"] == "failed"  # its preflight is refused, so the PUT never goes
        for name in ("rebound read", "rebound check", "rebound put", "rebound mcp"):
            assert tried[name] == 421, name
        framed = [f for f in tab.frames if f is not tab.main_frame]
        assert framed and all(not _has_buttons(frame) for frame in framed)
        assert kept(night.root) == before  # no event, no draft, no voice card, no note
    finally:
        evil.shutdown()
        evil.server_close()
        assert "Traceback" not in stop(service)


def _has_buttons(frame: Any) -> bool:
    try:
        return frame.query_selector("#sleep-now") is not None
    except Exception:  # a frame the browser would not show has no document to ask
        return False
