"""The real ``hippo`` run with a pseudo-terminal for its input and output, as a person at a
keyboard runs it (``hippo review`` tells a person from a pipe by that, and asks a person to
type back a code it shows).

:func:`in_a_terminal` is a person: it types back the code ``hippo`` shows, from a process
that is no child of the test's (so that an agent the test suite itself may run under is no
ancestor of it) and with no agent's variable in its environment. That it passes is what
docs/security.md says a person check cannot prove: a program outside an agent's tree that
reads the code and types it back passes for a person.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from hippo_core.agents.env import MARKS

#: What hippo asks, and the code it shows.
ASKED = re.compile(rb"type the code ([A-Z0-9]{4}) and press Enter: ")
#: Runs its arguments in a grandchild of the test (the child exits at once, and the
#: grandchild is adopted by init), and writes the exit code on the terminal at the end.
DETACHED = """
import os, subprocess, sys
if os.fork():
    os._exit(0)
code = subprocess.call(sys.argv[1:])
sys.stdout.write(f"\\n[exit {code}]\\n")
sys.stdout.flush()
"""
EXIT = re.compile(r"\r?\n\[exit (-?\d+)\]\r?\n$")


def clean_env(**extra: str) -> dict[str, str]:
    """This test's environment without any variable that names an agent."""
    marked = {variable for _agent, variable, _values in MARKS}
    env = {k: v for k, v in os.environ.items() if k not in marked}
    return {**env, "COLUMNS": "100", **extra}


def in_a_terminal(
    root: Path,
    *args: str,
    code: str | None = None,
    argv: list[str] | None = None,
    env: dict[str, str] | None = None,
    detached: bool = True,
    crlf: bool = False,
) -> tuple[int, str]:
    """``hippo ARGS`` in ``root`` under a pseudo-terminal: its exit code, and what it
    printed (stdout and stderr, as the terminal showed them). When hippo asks for its code,
    ``code`` is typed (None: the code it showed; "": nothing, the terminal is closed).
    ``argv`` runs another command instead (``script``, a shell); ``detached`` runs it in a
    process that is no child of the test's; ``crlf`` keeps the terminal's line ends."""
    command = argv or [sys.executable, "-m", "hippo_core", *args]
    if detached:
        command = [sys.executable, "-c", DETACHED, *command]
    main, follower = os.openpty()
    process = subprocess.Popen(
        command,
        cwd=root,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env if env is not None else clean_env(),
        start_new_session=True,
    )
    os.close(follower)
    said = b""
    typed = False
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the terminal's other end closed when hippo exited
            break
        if not chunk:
            break
        said += chunk
        asked = ASKED.search(said)
        if asked and not typed:
            typed = True
            answer = asked.group(1).decode() if code is None else code
            os.write(main, f"{answer}\n".encode() if answer else b"\x04")
    os.close(main)
    status = process.wait(timeout=60)
    text = said.decode("utf-8", "replace")
    if not crlf:
        text = text.replace("\r\n", "\n")
    if detached:
        found = EXIT.search(text)
        assert found, text
        status, text = int(found.group(1)), text[: found.start()]
    return status, text
