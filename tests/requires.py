"""What a test does when a real program it drives is missing: it skips, saying why, except
under CI, where it fails with the same reason.

The slow tests drive real programs (Chromium, PostgreSQL, the small model, Claude Code,
OpenCode, Gemini CLI, Codex, systemd-analyze) that ``.ci/`` installs and names in variables
(``HIPPO_TEST_CLAUDE``, ``HIPPO_TEST_OPENCODE``, ``HIPPO_TEST_GEMINI``, ``HIPPO_TEST_CODEX``,
``HIPPO_TEST_PG_BIN`` ...). If one of those install steps breaks, a
skip would leave CI green with the test never run; a failure names what is missing. On a
developer's machine a missing program is normal, so there it stays a skip.

CI is on when ``CI`` is set to anything but empty, ``0``, ``false`` or ``no``: GitHub
Actions, GitLab and others set ``CI=true``, some ``CI=1``, and ``.ci/run`` sets
``CI=true`` when nothing else has.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(reason: str) -> NoReturn:
    """Skip the calling test (or fixture) for ``reason``; under CI, fail it with ``reason``."""
    __tracebackhide__ = True  # so -ra names the line that called this, not this one
    ci = os.environ.get("CI", "").strip()
    if ci.lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason} (CI={ci}: a missing dependency fails, not skips)", pytrace=False)
    pytest.skip(reason)
