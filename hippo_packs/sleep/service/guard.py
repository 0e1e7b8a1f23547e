"""What every request meets before its route runs (:class:`Guard`): the Host it was sent
to, the bearer, where a request that changes something comes from and what it sends, and
the body's size; and the answers in words every route gives."""

from __future__ import annotations

import hmac
import html
import ipaddress
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from starlette.requests import Request
    from starlette.responses import JSONResponse

#: The largest request body a route reads.
MAX_BODY = 1024 * 1024
#: The methods that change nothing, so a page of another origin may send them (it cannot
#: read the answer: the service sends no CORS headers).
SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
#: The ``Sec-Fetch-Site`` values of a request a browser sent from another origin.
FOREIGN_SITES = frozenset({b"cross-site", b"same-site"})
#: What a page of the service's own says about its framing, where it may be shown, and the
#: address it was opened at (which may hold the bearer).
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def error(status: int, message: str) -> JSONResponse:
    """An answer in words: ``{"ok": false, "error": message}`` with ``status``."""
    from starlette.responses import JSONResponse

    return JSONResponse({"ok": False, "error": message}, status_code=status)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object ({} for no body); a 400 for anything else."""
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect

    try:
        raw = await request.body()
    except ClientDisconnect:  # cut while its body came (too slow): nobody hears the answer
        raise HTTPException(400, "the client went away before its body arrived") from None
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise HTTPException(400, "the body is not JSON; send a JSON object, or nothing") from None
    if not isinstance(value, dict):
        raise HTTPException(400, "the body must be a JSON object")
    return value


@dataclass(frozen=True)
class Gate:
    """Whom the service answers: the Host headers it takes and the bearer it asks for."""

    port: int
    token: str = ""
    """The bearer; "" for none (``bearer = "none"``, loopback only)."""
    kept: str = ""
    """Where the bearer is, in words, for the page that asks for it."""
    hosts: frozenset[str] = field(default_factory=frozenset)
    """Host values taken as they are (lower case, with the port)."""
    names: frozenset[str] = field(default_factory=frozenset)
    """Names taken with any port or none (``allowed_hosts`` entries without a port)."""
    every_address: bool = False
    """Listening on every address (0.0.0.0, ::): any IP address with the port is one of ours."""

    @classmethod
    def made(
        cls, bound: str, port: int, token: str, kept: str, more: list[str] | tuple[str, ...] = ()
    ) -> Gate:
        """The gate of a service listening on ``bound``:``port``: it answers to that
        address, ``localhost``, ``127.0.0.1`` and ``[::1]`` with the port, and to ``more``
        (``name:port`` as written, ``name`` with any port)."""
        own = {"localhost", "127.0.0.1", "[::1]", _bracketed(bound.lower())}
        hosts = {f"{name}:{port}" for name in own}
        if port == 80:  # a browser leaves the default port out
            hosts |= own
        names: set[str] = set()
        for entry in more:
            (hosts if _split(entry.lower())[1] is not None else names).add(entry.lower())
        wildcard = bound in ("0.0.0.0", "::", "")
        return cls(port, token, kept, frozenset(hosts), frozenset(names), wildcard)

    def takes(self, host: str) -> bool:
        """Whether a request sent with ``Host: host`` was meant for this service."""
        host = host.lower()
        if host in self.hosts:
            return True
        name, port = _split(host)
        if name in self.names:
            return True
        # A rebinding page can only send a name it owns; an IP address names itself.
        return self.every_address and port == str(self.port) and _address(name)

    def shown(self) -> str:
        """The Host values this gate takes, for the answer that refuses another."""
        return ", ".join(sorted(self.hosts | self.names))


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _split(host: str) -> tuple[str, str | None]:
    """``name`` and ``port`` of a Host value (the port None when there is none)."""
    if host.startswith("["):
        name, _, rest = host.partition("]")
        return name + "]", (rest[1:] if rest.startswith(":") else None)
    name, colon, port = host.rpartition(":")
    return (name, port) if colon else (host, None)


def _address(name: str) -> bool:
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    if (":" in bare) != name.startswith("["):
        return False
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        return False
    return True


def bearer_given(value: str) -> str | None:
    """The token of an ``Authorization`` value in the bearer scheme (named in any case, as
    RFC 7235 has it); None for another scheme or none."""
    scheme, space, token = value.partition(" ")
    if not space or scheme.lower() != "bearer":
        return None
    return token.lstrip(" ")


class TooLarge(Exception):
    """A body that grew past :data:`MAX_BODY` while it was read."""


class Guard:
    """ASGI middleware: the Host, the bearer, the origin and content type of a request that
    changes something, and the size of the body, before any route runs."""

    def __init__(self, app: Callable[..., Awaitable[None]], gate: Gate) -> None:
        self.app, self.gate = app, gate

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no route takes a websocket: none gets past the checks
            await send({"type": "websocket.close", "code": 1008})
            return
        refused = self.refusal(scope)
        if refused is not None:
            await refused(scope, receive, send)
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
            await _too_large()(scope, receive, send)

    def refusal(self, scope: dict[str, Any]) -> Any:
        """The answer that refuses this request, or None when its route may run."""
        raw = scope.get("headers") or []
        hosts = [value for name, value in raw if name == b"host"]
        host = hosts[0].decode("latin-1") if len(hosts) == 1 else ""
        if not self.gate.takes(host):
            said = f"Host: {host}" if len(hosts) == 1 else "no Host, or more than one"
            return error(
                421,
                f"this service answers to {self.gate.shown()}, not {said}; add a name it "
                "should answer to with [sleep.serve] allowed_hosts",
            )
        headers = dict(raw)
        if self.gate.token and not self._bearer(scope, headers):
            return self._asked_for_bearer(scope, headers)
        if scope["method"] not in SAFE:
            foreign = self._foreign(headers, host)
            if foreign:
                return error(403, foreign)
            wrong = _content_type(headers)
            if wrong:
                return error(415, wrong)
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return _too_large()
        return None

    def _bearer(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> bool:
        header = headers.get(b"authorization")
        if header is not None:
            given = bearer_given(header.decode("latin-1"))
        elif scope.get("path") == "/viewer":  # a browser's address bar sends no header
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given = query.get("token", [None])[0]
        else:
            given = None
        if given is None:
            return False
        return hmac.compare_digest(given.encode(), self.gate.token.encode())

    def _asked_for_bearer(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> Any:
        message = "this service needs its bearer: Authorization: Bearer ..."
        if self.gate.kept:
            message += f" ({self.gate.kept})"
        browser = b"text/html" in headers.get(b"accept", b"")
        if scope.get("path") == "/viewer" and browser:
            return bearer_page(self.gate.kept)
        return error(401, message)

    @staticmethod
    def _foreign(headers: dict[bytes, bytes], host: str) -> str:
        """Why a request that changes something came from another origin; "" if it did not."""
        origin = headers.get(b"origin")
        own = {f"http://{host}".lower(), f"https://{host}".lower()}
        if origin is not None and origin.decode("latin-1").lower() not in own:
            return (
                f"a page of another origin ({origin.decode('latin-1')}) cannot change "
                "anything here: only the service's own pages and programs that send no "
                "Origin may"
            )
        if headers.get(b"sec-fetch-site") in FOREIGN_SITES:
            return "a page of another site cannot change anything here (Sec-Fetch-Site)"
        return ""


def _content_type(headers: dict[bytes, bytes]) -> str:
    """Why the body of a request that changes something is refused; "" when it is JSON, or
    there is no body and no Content-Type."""
    kind = headers.get(b"content-type")
    if kind is None:
        length = headers.get(b"content-length")
        if b"transfer-encoding" in headers or length not in (None, b"0"):
            return "a body needs Content-Type: application/json"
        return ""
    if kind.split(b";", 1)[0].strip().lower() != b"application/json":
        return (
            f"Content-Type {kind.decode('latin-1')!r}: send application/json, or no body "
            "and no Content-Type"
        )
    return ""


def _too_large() -> JSONResponse:
    return error(413, f"the body is over {MAX_BODY} bytes, which is all a route reads")


def bearer_page(kept: str) -> Any:
    """The page a browser gets at ``/viewer`` without the bearer: how to open it with it."""
    from starlette.responses import HTMLResponse

    where = f"<p>{html.escape(kept[0].upper() + kept[1:])}.</p>" if kept else ""
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>hippo sleep: the bearer</title></head><body>"
        "<h1>This service needs its bearer</h1>"
        "<p>Open <code>/viewer?token=...</code>, the bearer in place of the dots: the "
        "address <code>hippo sleep serve</code> printed when it started has it.</p>"
        f"{where}</body></html>\n"
    )
    policy = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    headers = {**PAGE_HEADERS, "Content-Security-Policy": policy}
    return HTMLResponse(page, status_code=401, headers=headers)
