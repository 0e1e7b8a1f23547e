"""The viewer, ``GET /viewer`` of a real ``hippo sleep serve``, in a real headless Chromium
(Debian's ``chromium``, driven by Playwright for Python pointed at it: no browser download).
It loads the page, reads what it says, presses Sleep now and Tend now, and checks what
changed; a screenshot is kept in ``$HIPPO_TEST_ARTIFACTS`` (or the test's own folder)."""

from __future__ import annotations

import os
import shutil
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


@pytest.fixture
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        missing("no chromium on PATH: .ci/browser.sh installs Debian's chromium package")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("no Playwright for Python: it is in [dev]")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


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
    assert page.goto(f"{base}/viewer").status == 401  # the bearer, even for the page
    page.goto(f"{base}/viewer?token=view-me")
    drawn = "document.body.dataset.fresh === 'yes'"  # the page asked the service and drew it
    page.wait_for_function(drawn)
    assert "Mechanical mode" in page.inner_text("#said")
    assert "Mechanical mode" in page.inner_text("#broke")
    assert "Nothing waits for a verdict." in page.inner_text("#queue")
    accent = page.eval_on_selector("header", "e => getComputedStyle(e).backgroundColor")
    assert accent == "rgb(201, 160, 220)"  # wisteria, #c9a0dc

    page.click("#sleep-now")  # no brief: the sleep asks for one
    page.wait_for_function("document.getElementById('done').textContent !== ''")
    page.wait_for_function(drawn)
    assert page.inner_text("#done") == "Asked for a brief: the next sleep runs on it."

    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    night.ok("brief", "--summary", "deploys mattered")
    page.click("#sleep-now")
    page.wait_for_function("document.getElementById('done').textContent.startsWith('Slept')")
    assert page.inner_text("#done") == "Slept: drafted."
    draft = night.draft()
    page.wait_for_function(
        f"document.getElementById('queue').textContent.includes('{draft['id']}')"
    )

    page.click("#tend-now")
    page.wait_for_function("document.getElementById('done').textContent.startsWith('Tended')")
    assert page.inner_text("#done") == "Tended: 0 chain(s) closed, 0 redraft(s)."
    page.wait_for_function(drawn)
    assert draft["id"] in page.inner_text("#queue")
    folder = Path(os.environ.get("HIPPO_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "sleep-viewer.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
