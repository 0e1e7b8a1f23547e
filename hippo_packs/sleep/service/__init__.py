"""``hippo sleep serve``: the sleep cycle as a service, over HTTP on an ASGI server.

In ``thread`` mode (the default) a thread runs a tick every heartbeat (``tick_seconds``, or
sooner when the tend cycle asks) and a nudge wakes it; in ``external`` mode something else
calls ``POST /tend`` and ``POST /check`` on its own schedule, and ``POST /nudge`` runs one
tick itself. Every route, the thread, the CLI and the MCP tools share the cycle's lock (a
file lock in ``.hippo/sleep/``), so a sleep started from one place excludes the others: a
route that finds it taken answers 409.

The rooms: :mod:`.heartbeat` (the service's thread and state), :mod:`.app` (the routes),
:mod:`.guard` (what every request meets first), :mod:`.bearer` (the bearer it asks for),
:mod:`.limits` (how long a client may take), :mod:`.mcp` (``/mcp``); this module starts
and stops it. Each request opens the workspace afresh, as each command does.

Starlette and uvicorn come with the ``serve`` extra (``pip install -e '.[serve]'`` in
hippo's checkout).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
from typing import TYPE_CHECKING

from hippo_core import file_lock, keep_fresh
from hippo_packs.sleep.service import bearer
from hippo_packs.sleep.service.heartbeat import Service, warmup
from hippo_packs.sleep.service.mcp import Refused

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.applications import Starlette

INSTALL = "pip install -e '.[serve]' in hippo's checkout"


def serve(root: str, *, host: str | None, port: int | None, say: Callable[[str], None]) -> int:
    """Serve the workspace at ``root`` until interrupted; the exit code."""
    try:
        import uvicorn  # noqa: F401
        from starlette.applications import Starlette  # noqa: F401
    except ImportError:
        raise Refused(f"hippo sleep serve needs starlette and uvicorn: {INSTALL}") from None
    from hippo_packs.sleep.records import store
    from hippo_packs.sleep.service.app import make_app, routes
    from hippo_packs.sleep.service.guard import Gate
    from hippo_packs.sleep.service.mcp import mcp_mount, more_hosts

    probe = Service(root, "thread", 300.0)
    cycle = probe.cycle()
    settings = cycle.settings
    host = settings.serve.host if host is None else host
    port = settings.serve.port if port is None else port
    given = bearer.chosen(settings.serve, host)
    hosts = [*settings.serve.allowed_hosts, *more_hosts()]
    with contextlib.suppress(ImportError):
        import mcp  # noqa: F401  (with the SDK, /mcp is served: its mount must be sound)

        mcp_mount({route.path for route in routes()})
    lock = store.folder(cycle.workspace, "serve.lock")
    with file_lock(lock, wait=0, owner_only=lock.parent) as held:
        if held is None:
            raise Refused(
                "another hippo sleep serve runs for this workspace; stop it first (one "
                "service per workspace)"
            )
        token = given or bearer.made(cycle.workspace)
        listener = _listen(host, port)
        bound_host, bound_port = listener.getsockname()[:2]
        gate = Gate.made(bound_host, bound_port, token.token, token.kept, hosts)
        # From here on SIGTERM exits through the `finally` below (uvicorn raises it again once
        # it has finished its requests): one that comes while the service is still starting
        # stops the heartbeat and the notes watcher too, rather than killing the process.
        signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
        service = Service(root, settings.mode, settings.heartbeat, first_wait=warmup(cycle))
        watching = None
        try:
            service.start()
            address = f"http://{_shown(bound_host)}:{bound_port}"
            say(
                f"hippo sleep serve: listening on http://{bound_host}:{bound_port} "
                f"({settings.mode} mode, a tick every {settings.heartbeat:g} s"
                f"{'' if token.token else ', no bearer'})"
            )
            if token.made:
                say(f"the viewer: {address}/viewer?token={token.token} ({token.kept})")
            elif token.token:
                say(f"the viewer: {address}/viewer?token=... ({token.kept})")
            else:
                say(f"the viewer: {address}/viewer")
            watching = keep_fresh(root)  # the hooks skip their scan of the notes while it serves
            _run(make_app(service, gate), listener, settings.serve.request_timeout_seconds)
        finally:
            service.stop()
            if watching is not None:
                watching()
    return 0


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise Refused(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    listener.listen(128)
    listener.set_inheritable(True)
    return listener


def _run(app: Starlette, listener: socket.socket, request_seconds: float) -> None:
    import uvicorn

    from hippo_packs.sleep.service.limits import LIMITS, bounded

    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        access_log=False,
        http=bounded(request_seconds),
        **LIMITS,
    )
    # uvicorn stops on SIGINT and SIGTERM itself, finishing the requests it is serving, then
    # raises the signal again, which serve's own handler turns into an exit through its
    # `finally`, as `hippo notes watch` does.
    uvicorn.Server(config).run(sockets=[listener])
    sys.stderr.flush()
