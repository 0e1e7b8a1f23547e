"""The hook's side of the notes watcher (:mod:`hippo_core.context.watch`): one question on a
socket, asked only when the socket is there, costing a hook a fraction of a millisecond.
"""

from __future__ import annotations

import os

from hippo_core.version import __version__

#: How long a hook waits for a watcher's answer before it scans by itself.
ASK_SECONDS = 2.0
FRESH = b"fresh\n"
#: How a ranking's answer starts: the index is fresh, and the notes follow, as JSON.
RANKED = b"fresh\0"
#: The longest answer a hook reads.
MAX_REPLY = 1 << 20
#: AF_UNIX addresses are at most 108 bytes (104 on some systems): longer, no watcher.
MAX_ADDRESS = 100


def socket_path(index_path: str) -> str | None:
    """Where the watcher of the notes index at ``index_path`` listens (one per index, hippo
    home and version of hippo); None when that path would be too long for a socket."""
    from zlib import crc32

    from hippo_core.files.home import home_folder

    key = f"{home_folder()}\0{index_path}\0{__version__}".encode("utf-8", "surrogateescape")
    path = os.path.join(socket_folder(), f"notes-{crc32(key):08x}.sock")
    return path if len(path.encode("utf-8", "surrogateescape")) <= MAX_ADDRESS else None


def socket_folder() -> str:
    """The watchers' folder: ``$XDG_RUNTIME_DIR/hippo`` (the user's own, short), else
    ``hippo-<uid>`` in the temporary folder. A socket's path must be short, which rules out
    ``$HIPPO_HOME``; the folder is trusted only when it is the user's and no one else's."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        return os.path.join(runtime, "hippo")
    temporary = os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(temporary, f"hippo-{os.getuid()}")


def owned(folder: str) -> bool:
    """Whether ``folder`` is a folder (not a link) of this user that no one else may enter."""
    import stat

    try:
        found = os.lstat(folder)
    except OSError:
        return False
    mode = found.st_mode
    return stat.S_ISDIR(mode) and found.st_uid == os.getuid() and not mode & 0o077


def request(index_path: str, notes_dir: str, with_terms: bool, question: str = "") -> bytes:
    """What a hook sends: the index, its notes folder, whether it keeps terms, and a ranking
    to answer (JSON, none for a plain "is it fresh?"), on one line."""
    text = f"{index_path}\0{notes_dir}\0{int(with_terms)}\0{question}\n"
    return text.encode("utf-8", "surrogateescape")


def watched_fresh(index_path: str, notes_dir: str, with_terms: bool) -> bool:
    """True when a watcher of the index at ``index_path`` says it is as fresh as the notes
    below ``notes_dir`` (kept with or without terms as asked); False when none answers so."""
    return _ask(index_path, request(index_path, notes_dir, with_terms)) == FRESH


def watched_ranking(
    index_path: str, notes_dir: str, question: dict[str, object]
) -> list[str] | None:
    """The notes the watcher of the index at ``index_path`` ranks for ``question`` (the
    task's terms and how many, with what the history ranking needs), best first; None when
    none answers with a ranking (the hook then ranks by itself)."""
    from hippo_core.files import jsontext

    try:
        asked = request(index_path, notes_dir, True, jsontext.dumps(question, indent=None))
    except (UnicodeError, ValueError):
        return None  # a task no line can carry (a lone surrogate): the hook ranks
    reply = _ask(index_path, asked)
    if not reply.startswith(RANKED):
        return None
    try:
        paths = jsontext.loads(reply[len(RANKED) :])
    except ValueError:
        return None
    if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
        return None
    return paths


def _ask(index_path: str, asked: bytes) -> bytes:
    """The watcher's one-line answer to ``asked``; empty when none answers."""
    where = socket_path(index_path)
    if where is None or not os.path.exists(where) or not owned(os.path.dirname(where)):
        return b""
    # The C module: socket.py's enums cost a hook more than the whole question does.
    import _socket

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(ASK_SECONDS)
        conn.connect(where)
        conn.sendall(asked)
        reply = b""
        while not reply.endswith(b"\n") and len(reply) < MAX_REPLY:
            chunk = conn.recv(65536)
            if not chunk:
                break
            reply += chunk
        return reply
    except OSError:
        return b""
    finally:
        conn.close()
