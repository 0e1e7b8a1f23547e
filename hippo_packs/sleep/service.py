"""``hippo sleep serve``: the sleep cycle as a service, over HTTP on an ASGI server.

In ``thread`` mode (the default) a thread runs a tick every heartbeat (``tick_seconds``, or
sooner when the tend cycle asks) and a nudge wakes it; in ``external`` mode something else
calls ``POST /tend`` and ``POST /check`` on its own schedule, and ``POST /nudge`` runs one
tick itself. Every route, the thread, the CLI and the MCP tools share the cycle's lock (a
file lock in ``.hippo/sleep/``), so a sleep started from one place excludes the others: a
route that finds it taken answers 409.

Each request opens the workspace afresh, as each command does. Whatever a request does
wrong gets an answer in words and a 4xx: no bearer or a wrong one 401, a body that is not
JSON 400, one over 1 MiB 413, an unknown route 404, a method a route does not take 405. A
problem of the workspace (settings, the store) is a 400 naming it; only hippo's own bug is
a 500, and even that says what happened in one line.

Starlette and uvicorn come with the ``serve`` extra (``pip install 'hippo-memory[serve]'``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import Field

from hippo_core.errors import HippoError
from hippo_core.mcp.tool import Arguments
from hippo_packs.sleep.config import bearer_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    from hippo_packs.sleep.cycle import Cycle

#: The largest request body a route reads.
MAX_BODY = 1024 * 1024
#: How long a route waits for a sleep or tend running elsewhere before it answers 409.
ROUTE_LOCK_WAIT = 1.0
INSTALL = "pip install 'hippo-memory[serve]'"
ROUTES = (
    "GET /health",
    "GET /status",
    "POST /sleep",
    "POST /nudge",
    "POST /tend",
    "POST /check",
    "GET /queue",
    "GET /history",
    "GET /events",
    "GET /voice",
    "PUT /voice",
    "GET /voice/history",
    "GET /viewer",
    "POST /mcp",
)


class NudgeArguments(Arguments):
    """The service's ``nudge`` tool: who nudged, so the tick waits for it."""

    pid: int | None = Field(
        None, ge=1, description="Your session's process id: the tick waits for it to end."
    )


class Refused(HippoError):
    """The service will not start: said in one line."""


def loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class Service:
    """The cycle of one workspace, served: the heartbeat thread and what the routes call."""

    root: str
    mode: str
    heartbeat: float
    started: float = field(default_factory=time.time)
    last_tick: dict[str, Any] | None = None
    last_error: str | None = None
    _wake: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _waiting_for: int | None = None
    _nudge_wait: float = 180.0
    _thread: threading.Thread | None = None

    # -- the cycle ------------------------------------------------------------------------

    def cycle(self, *, lock_wait: float | None = None) -> Cycle:
        """The cycle of the workspace as its files say now; a route's waits at most
        :data:`ROUTE_LOCK_WAIT` for a sleep or tend elsewhere, then answers 409."""
        from hippo_core.plugins import load_plugins
        from hippo_core.workspace import Workspace
        from hippo_packs.sleep.cycle import Cycle

        cycle = Cycle.open(Workspace.open(self.root), load_plugins())
        if lock_wait is not None:
            cycle.lock_wait = lock_wait
        return cycle

    def for_route(self) -> Cycle:
        return self.cycle(lock_wait=ROUTE_LOCK_WAIT)

    # -- the heartbeat --------------------------------------------------------------------

    def start(self) -> None:
        if self.mode == "thread":
            self._thread = threading.Thread(target=self._beat, name="hippo-sleep-tick")
            self._thread.daemon = True
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _beat(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.heartbeat)
            self._wake.clear()
            if self._stop.is_set():
                return
            sender, self._waiting_for = self._waiting_for, None
            if sender is not None:
                settle(sender, self._nudge_wait, self._stop)
            self.tick()

    def tick(self) -> dict[str, Any] | None:
        """One tick, its outcome kept for ``/status``; a problem is kept, not raised."""
        from hippo_packs.sleep import tick

        try:
            done = tick.run_tick(self.cycle())
        except HippoError as exc:
            self.last_error = str(exc)
            return None
        except Exception as exc:  # the heartbeat goes on; the problem is shown in /status
            self.last_error = f"{type(exc).__name__}: {exc}"
            return None
        self.last_tick = {"at": time.time(), **done}
        self.last_error = None
        return done

    def nudge(self, sender: int | None) -> dict[str, Any]:
        """Your turn: a tick now, which redrafts what was denied whatever the clock says.
        In thread mode it wakes the heartbeat and returns at once; the tick it starts first
        waits for ``sender`` (the pid of the session that nudged) to end, never killing it."""
        from hippo_packs.sleep import actions

        cycle = self.for_route()
        if self.mode != "thread":
            return actions.nudge(cycle)
        actions.noted(cycle)
        self._nudge_wait = cycle.settings.nudge_wait_seconds
        self._waiting_for = sender
        self._wake.set()
        return {"ok": True, "woke": True, "message": "woke the loop; a tick runs now"}

    def state(self) -> dict[str, Any]:
        """The service's own part of ``/status``."""
        return {
            "mode": self.mode,
            "heartbeat_seconds": self.heartbeat,
            "started_at": _iso(self.started),
            "last_tick_at": _iso(self.last_tick["at"]) if self.last_tick else None,
            "last_error": self.last_error,
        }


def settle(pid: int, timeout: float, stop: threading.Event | None = None) -> bool:
    """Wait up to ``timeout`` seconds for process ``pid`` to end; never kill it. True once
    it has ended (or never was), False when it is still running at the deadline."""
    deadline = time.monotonic() + timeout
    from hippo_core.processes import alive

    while alive(pid):
        if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
            return False
        time.sleep(0.1)
    return True


def _iso(moment: float | None) -> str | None:
    return None if moment is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


# -- the app ------------------------------------------------------------------------------


def make_app(service: Service, token: str) -> Starlette:
    """The HTTP routes of ``service``, every one behind ``token`` when it is set."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def run(work: Callable[[], dict[str, Any] | list[Any]]) -> JSONResponse:
        """``work`` off the event loop; the cycle's problems as answers in words."""
        import anyio.to_thread

        from hippo_packs.sleep.cycle import Busy
        from hippo_packs.sleep.voice import Off

        try:
            done = await anyio.to_thread.run_sync(work)
        except Busy as exc:
            return _error(409, str(exc))
        except Off as exc:  # the voice card is off: there is none
            return _error(404, str(exc))
        except HippoError as exc:
            return _error(400, str(exc))
        return JSONResponse(done)

    async def health(request: Request) -> JSONResponse:
        from hippo_core.version import __version__

        return JSONResponse({"ok": True, "service": "hippo sleep", "version": __version__})

    async def index(request: Request) -> JSONResponse:
        return JSONResponse({"service": "hippo sleep", "routes": list(ROUTES)})

    async def status(request: Request) -> JSONResponse:
        from hippo_packs.sleep.status import status as cycle_status

        return await run(lambda: {**cycle_status(service.cycle()), "service": service.state()})

    async def sleep(request: Request) -> JSONResponse:
        from hippo_packs.sleep import actions

        await _body(request)
        without = request.query_params.get("without_brief", "false").lower() in ("1", "true")

        def now() -> dict[str, Any]:
            return actions.sleep_now(service.for_route(), without_brief=without)

        answer = await run(now)
        if answer.status_code == 200 and not json.loads(bytes(answer.body)).get("ok"):
            answer.status_code = 409  # one chain at a time: review the open one first
        return answer

    async def nudge(request: Request) -> JSONResponse:
        body = await _body(request)
        sender = body.get("pid")
        if sender is not None and (not isinstance(sender, int) or isinstance(sender, bool)):
            return _error(400, "pid, when given, is the process id (a whole number) of the session")
        return await run(lambda: service.nudge(sender))

    async def tend(request: Request) -> JSONResponse:
        from hippo_packs.sleep import actions

        await _body(request)
        return await run(lambda: actions.tend_now(service.for_route()))

    async def check(request: Request) -> JSONResponse:
        from hippo_packs.sleep import actions

        await _body(request)
        return await run(lambda: actions.check_now(service.for_route()))

    async def queue(request: Request) -> JSONResponse:
        from hippo_core.review import waiting

        return await run(lambda: {"waiting": _waiting(service, waiting)})

    async def history(request: Request) -> JSONResponse:
        from hippo_packs.sleep.status import history as sleeps

        return await run(lambda: {"sleeps": sleeps(service.cycle())})

    async def events(request: Request) -> JSONResponse:
        from hippo_packs.sleep import store

        raw = request.query_params.get("limit", "50")
        if not raw.isdigit() or not 1 <= int(raw) <= 10_000:
            return _error(400, f"limit {raw!r}: give a whole number from 1 to 10000")
        limit = int(raw)
        return await run(
            lambda: {"events": list(reversed(store.events(service.cycle().workspace)))[:limit]}
        )

    async def voice_card(request: Request) -> JSONResponse:
        from hippo_packs.sleep import voice

        if request.method == "PUT":
            body = await _body(request)
            text, why = body.get("text"), body.get("why", "")
            if not isinstance(text, str) or not isinstance(why, str):
                return _error(400, 'send {"text": "the card", "why": "why it changed"}')
            return await run(lambda: voice.set_card(service.cycle(), text, why))

        def shown() -> dict[str, Any]:
            found = voice.show(service.cycle())
            if not found["ok"]:
                raise voice.Off(found["error"])
            return {"version": found["version"], "text": found["text"]}

        return await run(shown)

    async def voice_history(request: Request) -> JSONResponse:
        from hippo_packs.sleep import voice

        return await run(lambda: {"versions": voice.history(service.cycle())})

    async def viewer(request: Request) -> Response:
        from importlib.resources import files

        from starlette.responses import HTMLResponse

        page = files("hippo_packs.sleep").joinpath("viewer", "index.html").read_text("utf-8")
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return _error(404, f"no route {request.url.path}; the routes are: {', '.join(ROUTES)}")

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            message = f"{request.url.path} takes {allowed}, not {request.method}"
            return _error(405, message)
        return _error(exc.status_code, str(exc.detail))

    async def bug(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"hippo failed: {type(exc).__name__}: {exc}")

    routes = [
        Route("/", index),
        Route("/health", health),
        Route("/status", status),
        Route("/sleep", sleep, methods=["POST"]),
        Route("/nudge", nudge, methods=["POST"]),
        Route("/tend", tend, methods=["POST"]),
        Route("/check", check, methods=["POST"]),
        Route("/queue", queue),
        Route("/history", history),
        Route("/events", events),
        Route("/voice", voice_card, methods=["GET", "PUT"]),
        Route("/voice/history", voice_history),
        Route("/viewer", viewer),
    ]
    manager = _mcp_manager(service)
    if manager is not None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

        routes.append(Route(mcp_mount(), StreamableHTTPASGIApp(manager)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if manager is None:
            yield
            return
        async with manager.run():
            yield

    app = Starlette(
        routes=routes,
        exception_handlers={404: not_found, HTTPException: http_error, Exception: bug},
        lifespan=lifespan,
    )
    app.add_middleware(_Guard, token=token)
    return app


def _mcp_manager(service: Service) -> Any:
    """The MCP endpoint's session manager, when the SDK is installed: every tool the
    plugins register, with ``nudge`` the service's (it wakes the heartbeat); None without
    the SDK, and ``/mcp`` is then no route."""
    try:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    except ImportError:
        return None
    from hippo_core.mcp.server import build_server
    from hippo_core.mcp.tool import Tool
    from hippo_core.plugins import load_plugins

    def nudge(workspace: Any, given: NudgeArguments) -> dict[str, Any]:
        return service.nudge(given.pid)

    tools = dict(load_plugins().tools())
    tools["nudge"] = Tool(
        "nudge",
        "Your turn is done: wake the sleep service, which runs a tick (after your session ends).",
        NudgeArguments,
        nudge,
    )
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [h.strip() for h in os.environ.get(MCP_HOSTS, "").split(",") if h.strip()]
    # The bearer guards the endpoint; the SDK's Host check is on when hosts are named.
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=bool(hosts),
        allowed_hosts=hosts,
        allowed_origins=[f"http://{host}" for host in hosts],
    )
    # Stateless: every request is whole, as every route's is.
    return StreamableHTTPSessionManager(
        app=build_server(tools, service.root),
        stateless=True,
        json_response=True,
        security_settings=security,
    )


#: Where MCP is served, and the Host headers it takes (the SDK's check, off unless set).
MCP_MOUNT, MCP_HOSTS = "HIPPO_SLEEP_MCP_MOUNT", "HIPPO_SLEEP_MCP_ALLOWED_HOSTS"


def mcp_mount() -> str:
    """The path of the MCP endpoint: ``/mcp``, or ``$HIPPO_SLEEP_MCP_MOUNT``."""
    mount = os.environ.get(MCP_MOUNT, "/mcp") or "/mcp"
    taken = {route.split(" ", 1)[1] for route in ROUTES if not route.endswith("/mcp")}
    if not mount.startswith("/") or mount in taken or " " in mount:
        raise Refused(
            f"{MCP_MOUNT}={mount!r}: give a path that starts with / and is no other route"
        )
    return mount


def _waiting(service: Service, waiting: Callable[..., list[dict[str, Any]]]) -> list[Any]:
    cycle = service.cycle()
    return waiting(cycle.workspace, cycle.plugins)


def _error(status: int, message: str) -> JSONResponse:
    from starlette.responses import JSONResponse

    return JSONResponse({"ok": False, "error": message}, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object ({} for no body); a 400 for anything else."""
    from starlette.exceptions import HTTPException

    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise HTTPException(400, "the body is not JSON; send a JSON object, or nothing") from None
    if not isinstance(value, dict):
        raise HTTPException(400, "the body must be a JSON object")
    return value


class _TooLarge(Exception):
    """A body that grew past :data:`MAX_BODY` while it was read."""


class _Guard:
    """ASGI middleware: the bearer, and the size of the body, before any route runs."""

    def __init__(self, app: Callable[..., Awaitable[None]], token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.token:
            import hmac

            given = headers.get(b"authorization", b"").decode("latin-1")
            if scope.get("path") == "/viewer":  # a browser's address bar sends no header
                from urllib.parse import parse_qs

                query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
                given = given or f"Bearer {query.get('token', [''])[0]}"
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                answer = _error(401, "this service needs its bearer: Authorization: Bearer ...")
                await answer(scope, receive, send)
                return
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            await _too_large(scope, receive, send)
            return
        read = 0

        async def counted() -> Any:
            nonlocal read
            message = await receive()
            read += len(message.get("body", b""))
            if read > MAX_BODY:  # sent in chunks, with no length said
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _too_large(scope, receive, send)


async def _too_large(scope: dict[str, Any], receive: Any, send: Any) -> None:
    answer = _error(413, f"the body is over {MAX_BODY} bytes, which is all a route reads")
    await answer(scope, receive, send)


# -- serving ------------------------------------------------------------------------------


def serve(root: str, *, host: str | None, port: int | None, say: Callable[[str], None]) -> int:
    """Serve the workspace at ``root`` until interrupted; the exit code."""
    try:
        import uvicorn  # noqa: F401
        from starlette.applications import Starlette  # noqa: F401
    except ImportError:
        raise Refused(f"hippo sleep serve needs starlette and uvicorn: {INSTALL}") from None
    from hippo_core.locks import file_lock
    from hippo_packs.sleep import store

    probe = Service(root, "thread", 300.0)
    cycle = probe.cycle()
    settings = cycle.settings
    host = settings.serve.host if host is None else host
    port = settings.serve.port if port is None else port
    token = bearer_of(settings.serve, "[sleep.serve]")
    if not token and not loopback(host):
        raise Refused(
            f"hippo sleep serve will not listen on {host} without a bearer: anyone who reaches "
            "it could sleep, tend and read the queue. Set bearer_token_env (or bearer_token, "
            "bearer_token_keyring) under [sleep.serve], or listen on 127.0.0.1"
        )
    with contextlib.suppress(ImportError):
        import mcp  # noqa: F401  (with the SDK, /mcp is served: its mount must be sound)

        mcp_mount()
    with file_lock(store.folder(cycle.workspace, "serve.lock"), wait=0) as held:
        if held is None:
            raise Refused(
                "another hippo sleep serve runs for this workspace; stop it first (one "
                "service per workspace)"
            )
        listener = _listen(host, port)
        bound_host, bound_port = listener.getsockname()[:2]
        service = Service(root, settings.mode, settings.heartbeat)
        service.start()
        say(
            f"hippo sleep serve: listening on http://{bound_host}:{bound_port} "
            f"({settings.mode} mode, a tick every {settings.heartbeat:g} s"
            f"{'' if token else ', no bearer'})"
        )
        try:
            _run(make_app(service, token), listener)
        finally:
            service.stop()
    return 0


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


def _run(app: Starlette, listener: socket.socket) -> None:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    # uvicorn stops on SIGINT and SIGTERM itself, finishing the requests it is serving.
    uvicorn.Server(config).run(sockets=[listener])
    sys.stderr.flush()
