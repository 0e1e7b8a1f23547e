"""A program run on a real pseudo-terminal, as a person's shell runs it: click strips some
escape sequences only when its output is not a terminal, so what a terminal would be sent
shows only here."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def in_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """What ``argv`` writes on the terminal (stdout and stderr), as text."""
    import pty

    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(
            argv, cwd=cwd, env={**env, "TERM": "xterm"}, stdin=slave, stdout=slave, stderr=slave
        )
    finally:
        os.close(slave)
    chunks = []
    try:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the program ended and the terminal closed
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        process.wait(timeout=60)
    return b"".join(chunks).decode("utf-8", "replace")
