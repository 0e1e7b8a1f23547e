"""What every request meets before its route runs (:class:`Guard`: the bearer and the body's
size), and the answers in words every route gives."""

from __future__ import annotations

import hmac
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from starlette.requests import Request
    from starlette.responses import JSONResponse

#: The largest request body a route reads.
MAX_BODY = 1024 * 1024


def error(status: int, message: str) -> JSONResponse:
    """An answer in words: ``{"ok": false, "error": message}`` with ``status``."""
    from starlette.responses import JSONResponse

    return JSONResponse({"ok": False, "error": message}, status_code=status)


async def json_body(request: Request) -> dict[str, Any]:
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


class TooLarge(Exception):
    """A body that grew past :data:`MAX_BODY` while it was read."""


class Guard:
    """ASGI middleware: the bearer, and the size of the body, before any route runs."""

    def __init__(self, app: Callable[..., Awaitable[None]], token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.token:
            given = headers.get(b"authorization", b"").decode("latin-1")
            if scope.get("path") == "/viewer":  # a browser's address bar sends no header
                query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
                given = given or f"Bearer {query.get('token', [''])[0]}"
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                answer = error(401, "this service needs its bearer: Authorization: Bearer ...")
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
                raise TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except TooLarge:
            await _too_large(scope, receive, send)


async def _too_large(scope: dict[str, Any], receive: Any, send: Any) -> None:
    answer = error(413, f"the body is over {MAX_BODY} bytes, which is all a route reads")
    await answer(scope, receive, send)
