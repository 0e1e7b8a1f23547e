"""The service's bearer: the one ``[sleep.serve]`` names, else one made on first start and
kept in ``.hippo/sleep/serve.token`` (the owner's only), or none (``bearer = "none"``, on
loopback only)."""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hippo_core import HippoError, atomic_write
from hippo_packs.sleep.config import bearer_of
from hippo_packs.sleep.service.mcp import Refused

if TYPE_CHECKING:
    from pathlib import Path

    from hippo_core import Workspace
    from hippo_packs.sleep.config import SleepServe

#: The file, in ``.hippo/sleep/``, that keeps the bearer the service made.
TOKEN_FILE = "serve.token"
SHOWN = f".hippo/sleep/{TOKEN_FILE}"
#: A bearer hippo reads back from that file: URL-safe, long enough not to be guessed.
SHAPE = re.compile(r"[A-Za-z0-9_-]{32,512}", re.ASCII)


def loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Bearer:
    """The bearer every request presents ("" for none), where it is kept in words, and
    whether hippo made it (its address, bearer and all, is then printed at start)."""

    token: str
    kept: str
    made: bool = False


def chosen(serve: SleepServe, host: str) -> Bearer | None:
    """The bearer the settings give, or None when hippo is to make one (``bearer =
    "auto"`` with none set); refused when the settings cannot be served on ``host``."""
    token = bearer_of(serve, "[sleep.serve]")
    if serve.bearer == "none":
        if token:
            raise Refused(
                '[sleep.serve] has bearer = "none" and a bearer_token setting: keep one of them'
            )
        if not loopback(host):
            raise Refused(
                f'hippo sleep serve will not listen on {host} with bearer = "none": that is '
                "for loopback only; remove it and set bearer_token_env (or bearer_token, "
                "bearer_token_keyring) under [sleep.serve], or listen on 127.0.0.1"
            )
        return Bearer("", "")
    if token:
        return Bearer(token, _source(serve))
    if not loopback(host):  # the bearer crosses the network there: one you chose and gave
        raise Refused(
            f"hippo sleep serve will not listen on {host} without a bearer: anyone who reaches "
            "it could sleep, tend and read the queue. Set bearer_token_env (or bearer_token, "
            "bearer_token_keyring) under [sleep.serve], or listen on 127.0.0.1"
        )
    return None


def _source(serve: SleepServe) -> str:
    if serve.bearer_token_env:
        return f"the bearer is the environment variable {serve.bearer_token_env} the service has"
    if serve.bearer_token_keyring:
        return f"the bearer is the keyring entry {serve.bearer_token_keyring}"
    return "the bearer is bearer_token under [sleep.serve] in .hippo/settings.toml"


def made(workspace: Workspace) -> Bearer:
    """The bearer hippo keeps for this workspace's service, made now if there is none."""
    from hippo_packs.sleep.records import store

    path = store.folder(workspace, TOKEN_FILE)
    kept = f"the bearer hippo made is kept in {SHOWN} in the workspace it serves"
    return Bearer(_kept(path) or _make(path), kept, made=True)


def _kept(path: Path) -> str:
    """The bearer in ``path``; "" when there is none yet. One another user could have read
    or written (a file git checked out, say) is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise HippoError(
            f"{SHOWN}: {exc.strerror or exc}; remove it, and a new one is made"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        found = os.fstat(handle.fileno())
        text = handle.read(4096)
    getuid = getattr(os, "getuid", None)
    if not stat.S_ISREG(found.st_mode) or (getuid is not None and found.st_uid != getuid()):
        raise HippoError(f"{SHOWN} is not a file of yours; remove it, and a new one is made")
    if found.st_mode & 0o077:
        raise HippoError(
            f"{SHOWN} can be read by others (mode {stat.S_IMODE(found.st_mode):o}), so its "
            "bearer may be known; remove it, and a new one is made"
        )
    token = text.decode("ascii", "replace").strip()
    if token and not SHAPE.fullmatch(token):
        raise HippoError(f"{SHOWN} holds no bearer hippo made; remove it, and a new one is made")
    return token


def _make(path: Path) -> str:
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Made empty and owner-only first: atomic_write keeps an existing file's mode, so the
    # bearer is never in a file anyone else may read, not for a moment.
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600))
    os.chmod(path, 0o600)
    atomic_write(path, token + "\n")
    return token
