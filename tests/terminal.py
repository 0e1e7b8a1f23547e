"""The real ``hippo`` run with a pseudo-terminal for its input and output, as a person at a
keyboard runs it (``hippo review`` tells a person from a pipe by that)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def in_a_terminal(root: Path, *args: str) -> tuple[int, str]:
    """``hippo ARGS`` in ``root`` under a pseudo-terminal: its exit code, and what it
    printed (stdout and stderr, as the terminal showed them)."""
    main, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "hippo_core", *args],
        cwd=root,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "COLUMNS": "100"},
    )
    os.close(follower)
    said = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the terminal's other end closed when hippo exited
            break
        if not chunk:
            break
        said += chunk
    os.close(main)
    return process.wait(timeout=60), said.decode("utf-8", "replace").replace("\r\n", "\n")
