"""The HTTP routes, each a function of one request; the service it serves is the app's
state (``request.app.state.service``).

Whatever a request does wrong gets an answer in words and a 4xx: a Host the service does
not answer to 421, no bearer or a wrong one 401, a change asked from another origin 403, a
body that is not ``application/json`` 415, one that is not JSON (or a field out of its
range) 400, one over 1 MiB 413, an unknown route 404, a method a route does not take 405.
A problem of the workspace (settings, the store) is a 400 naming it; a sleep running
elsewhere 409; only hippo's own bug is a 500, and even that says what happened in one line.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from hippo_core import HippoError
from hippo_packs.sleep.service.guard import PAGE_HEADERS, Gate, Guard, error, json_body
from hippo_packs.sleep.service.heartbeat import sender_pid
from hippo_packs.sleep.service.mcp import mcp_manager, mcp_mount

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from hippo_packs.sleep.service.heartbeat import Service


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def run(work: Callable[[], dict[str, Any] | list[Any]]) -> JSONResponse:
    """``work`` off the event loop; the cycle's problems as answers in words."""
    import anyio.to_thread
    from starlette.responses import JSONResponse

    from hippo_packs.sleep.cycle import Busy
    from hippo_packs.sleep.cycle.voice import Off

    try:
        done = await anyio.to_thread.run_sync(work)
    except Busy as exc:
        return error(409, str(exc))
    except Off as exc:  # the voice card is off: there is none
        return error(404, str(exc))
    except HippoError as exc:
        return error(400, str(exc))
    return JSONResponse(done)


async def health(request: Request) -> JSONResponse:
    from starlette.responses import JSONResponse

    from hippo_core import __version__

    return JSONResponse({"ok": True, "service": "hippo sleep", "version": __version__})


async def index(request: Request) -> JSONResponse:
    from starlette.responses import JSONResponse

    return JSONResponse({"service": "hippo sleep", "routes": request.app.state.routes})


async def status(request: Request) -> JSONResponse:
    from hippo_packs.sleep.actions.status import status as cycle_status

    service = _service(request)
    return await run(lambda: {**cycle_status(service.cycle()), "service": service.state()})


async def sleep(request: Request) -> JSONResponse:
    from hippo_packs.sleep import actions

    await json_body(request)
    service = _service(request)
    raw = request.query_params.get("without_brief", "false")
    if raw.lower() not in ("0", "1", "false", "true"):
        return error(400, f"without_brief {raw!r}: give true or false")
    without = raw.lower() in ("1", "true")
    answer = await run(lambda: actions.sleep_now(service.for_route(), without_brief=without))
    if answer.status_code == 200 and not json.loads(bytes(answer.body)).get("ok"):
        answer.status_code = 409  # one chain at a time: review the open one first
    return answer


async def nudge(request: Request) -> JSONResponse:
    body = await json_body(request)
    try:
        sender = sender_pid(body.get("pid"))
    except HippoError as exc:
        return error(400, str(exc))
    service = _service(request)
    return await run(lambda: service.nudge(sender))


async def tend(request: Request) -> JSONResponse:
    from hippo_packs.sleep import actions

    await json_body(request)
    service = _service(request)
    return await run(lambda: actions.tend_now(service.for_route()))


async def check(request: Request) -> JSONResponse:
    from hippo_packs.sleep import actions

    await json_body(request)
    service = _service(request)
    return await run(lambda: actions.check_now(service.for_route()))


async def queue(request: Request) -> JSONResponse:
    from hippo_core import review_items

    service = _service(request)

    def waiting() -> dict[str, Any]:
        cycle = service.cycle()
        return {"waiting": review_items(cycle.workspace, cycle.plugins)}

    return await run(waiting)


async def history(request: Request) -> JSONResponse:
    from hippo_packs.sleep.actions.status import history as sleeps

    service = _service(request)
    return await run(lambda: {"sleeps": sleeps(service.cycle())})


async def events(request: Request) -> JSONResponse:
    from hippo_packs.sleep.records import store

    raw = request.query_params.get("limit", "50")
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= 10_000:
        return error(400, f"limit {raw!r}: give a whole number from 1 to 10000")
    limit, service = int(raw), _service(request)
    return await run(
        lambda: {"events": list(reversed(store.events(service.cycle().workspace)))[:limit]}
    )


async def voice_card(request: Request) -> JSONResponse:
    from hippo_core import acting_now
    from hippo_packs.sleep.cycle import voice

    service = _service(request)
    if request.method == "PUT":
        body = await json_body(request)
        text, why = body.get("text"), body.get("why", "")
        if not isinstance(text, str) or not isinstance(why, str):
            return error(400, 'send {"text": "the card", "why": "why it changed"}')
        client = request.headers.get("user-agent", "")

        def put() -> dict[str, Any]:
            cycle = service.cycle()
            by = acting_now(cycle.workspace, "PUT /voice", http_client=client)
            return voice.set_card(cycle, text, why, by=by)

        return await run(put)

    def shown() -> dict[str, Any]:
        found = voice.show(service.cycle())
        if not found["ok"]:
            raise voice.Off(found["error"])
        return {"version": found["version"], "text": found["text"]}

    return await run(shown)


async def voice_history(request: Request) -> JSONResponse:
    from hippo_packs.sleep.cycle import voice

    service = _service(request)
    return await run(lambda: {"versions": voice.history(service.cycle())})


async def viewer(request: Request) -> Response:
    from starlette.responses import HTMLResponse

    page, policy = viewer_page()
    return HTMLResponse(page, headers={**PAGE_HEADERS, "Content-Security-Policy": policy})


@functools.cache
def viewer_page() -> tuple[str, str]:
    """The viewer's page and its Content-Security-Policy: nothing but its own script and
    style (named by their hashes) runs, and no page may frame it."""
    from importlib.resources import files

    page = files("hippo_packs.sleep").joinpath("viewer", "index.html").read_text("utf-8")
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL)
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL)
    assert script is not None and style is not None, "the viewer lost its script or style"
    policy = (
        f"default-src 'self'; script-src '{_sha256(script.group(1))}'; "
        f"style-src '{_sha256(style.group(1))}'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    return page, policy


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


async def not_found(request: Request, exc: Exception) -> JSONResponse:
    routes = ", ".join(request.app.state.routes)
    return error(404, f"no route {request.url.path}; the routes are: {routes}")


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    from starlette.exceptions import HTTPException

    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        return error(405, f"{request.url.path} takes {allowed}, not {request.method}")
    return error(exc.status_code, str(exc.detail))


async def bug(request: Request, exc: Exception) -> JSONResponse:
    return error(500, f"hippo failed: {type(exc).__name__}: {exc}")


def routes() -> list[Route]:
    """Every route but ``/mcp``, in the order ``GET /`` lists them."""
    from starlette.routing import Route

    return [
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


ORDER = ["GET", "PUT", "POST", "DELETE"]


def listed(found: list[Route]) -> list[str]:
    """The routes as ``GET /`` and a 404 name them: ``GET /health``, ``PUT /voice``."""
    names = []
    for route in found:
        if route.path == "/":
            continue
        methods = (route.methods or {"POST"}) - {"HEAD"}  # an ASGI app (MCP) takes POST
        names += [f"{m} {route.path}" for m in sorted(methods, key=ORDER.index)]
    return names


def make_app(service: Service, gate: Gate) -> Starlette:
    """The HTTP routes of ``service``, every one behind ``gate``."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.routing import Route

    found = routes()
    manager = mcp_manager(service)
    if manager is not None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

        mount = mcp_mount({route.path for route in found})
        found.append(Route(mount, StreamableHTTPASGIApp(manager)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if manager is None:
            yield
            return
        async with manager.run():
            yield

    app = Starlette(
        routes=found,
        exception_handlers={404: not_found, HTTPException: http_error, Exception: bug},
        lifespan=lifespan,
    )
    app.state.service, app.state.routes = service, listed(found)
    app.add_middleware(Guard, gate=gate)
    return app
