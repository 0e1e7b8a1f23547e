"""A program run on a real pseudo-terminal, as a person's shell runs it: click strips some
escape sequences only when its output is not a terminal, so what a terminal would be sent
shows only here. :class:`Terminal` drives a full-screen program (Codex's) as a person at
its keyboard."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path


def in_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """What ``argv`` writes on the terminal (stdout and stderr), as text."""
    return run_in_terminal(argv, cwd, env)[1]


def run_in_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """``argv``'s exit code and what it writes on the terminal (stdout and stderr), run as
    a person runs it (:func:`tests.terminal.in_a_terminal`): under no agent, typing back
    the code ``hippo review`` shows before it decides as a person."""
    from hippo_core.agents.env import without_agent
    from tests.terminal import in_a_terminal

    return in_a_terminal(cwd, argv=argv, env={**without_agent(env), "TERM": "xterm"}, crlf=True)


#: What a full-screen program asks its terminal at start, and what a terminal answers: the
#: cursor's position, the device's attributes, the background and foreground colours.
_ANSWERS = {
    b"\x1b[6n": b"\x1b[1;1R",
    b"\x1b[c": b"\x1b[?62;c",
    b"\x1b]11;?": b"\x1b]11;rgb:0000/0000/0000\x1b\\",
    b"\x1b]10;?": b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\",
}
_ESCAPES = re.compile(
    rb"\x1b\[[0-9;?<>=$]*[A-Za-z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]"
)
KEYS = {"enter": b"\r", "down": b"\x1b[B", "up": b"\x1b[A", "ctrl-c": b"\x03", "esc": b"\x1b"}


class Terminal:
    """A full-screen program on a pseudo-terminal of 40 by 120, as a person at it: wait for
    words to show, press keys. Terminal queries are answered as a terminal would."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        import fcntl
        import pty
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        try:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**env, "TERM": "xterm-256color"},
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
            )
        finally:
            os.close(slave)
        self.seen = b""

    @property
    def screen(self) -> str:
        """Everything shown since the last key, escape sequences taken out."""
        return " ".join(_ESCAPES.sub(b" ", self.seen).decode("utf-8", "replace").split())

    def wait_for(self, words: str, timeout: float = 60, settle: float = 1.0) -> None:
        """Read until ``words`` show (spaces between words as the screen has them), then
        until the screen is still for ``settle`` seconds: a key pressed while the program
        still draws may go nowhere."""
        deadline = time.monotonic() + timeout
        while " ".join(words.split()) not in self.screen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{words!r} never showed; the screen: {self.screen[-2000:]}")
            if self._read(min(left, 0.2)) is None:
                raise AssertionError(f"ended before {words!r} showed: {self.screen[-2000:]}")
        while self._read(settle):
            pass

    def _read(self, wait: float) -> bytes | None:
        """What the program showed within ``wait`` seconds (``b""``: nothing; ``None``: it
        ended), terminal queries answered."""
        import select

        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return b""
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the program ended
            return None
        if not data:
            return None
        self.seen += data
        for query, answer in _ANSWERS.items():
            if query in data:
                os.write(self.master, answer)
        return data

    def press(self, *keys: str) -> None:
        """Press ``keys`` (names in KEYS, or text typed as it is)."""
        self.seen = b""
        for key in keys:
            os.write(self.master, KEYS.get(key, key.encode()))
            time.sleep(0.2)

    def close(self) -> None:
        """End the program (SIGTERM, then SIGKILL) and the terminal."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        os.close(self.master)
