"""How long and how much a client may take: uvicorn's limits, and a deadline for each
request, which uvicorn does not have (it times out only a connection idle after an answer,
and a client that sends half a request, or a byte every few seconds, it waits for
forever)."""

from __future__ import annotations

from typing import Any

#: uvicorn's own limits: an idle kept-alive connection is closed after 5 s; past 64
#: connections at once, a request gets 503; a request's head may be 16 KiB.
LIMITS: dict[str, Any] = {
    "timeout_keep_alive": 5,
    "limit_concurrency": 64,
    "h11_max_incomplete_event_size": 16 * 1024,
}
#: What a client that took too long gets before the connection is closed.
_SAID = b"the request took too long to arrive\n"
TOO_SLOW = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_SAID), _SAID)
)


def bounded(seconds: float) -> type:
    """uvicorn's h11 protocol with a deadline: a request's head and body must all have
    arrived within ``seconds`` of the connection opening, or of its last answer."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Bounded(H11Protocol):
        _deadline: Any = None
        _heard = False  # some of the awaited request has come

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._arriving():
                if self._deadline is None:
                    self._arm()
                self._heard = True
            else:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._disarm()
            if not self.transport.is_closing():
                self._arm()  # the next request on this connection gets its own deadline

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arriving(self) -> bool:
            """Whether a request is still on its way (its head, or the rest of its body)."""
            cycle = self.cycle
            return cycle is None or cycle.response_complete or cycle.more_body

        def _arm(self) -> None:
            self._disarm()
            self._heard = False
            self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or not self._arriving():
                return
            # Half a request and no answer begun: say why. A connection that sent nothing
            # (a kept-alive one, a browser's preconnect) is closed without a word, as
            # uvicorn closes an idle one, lest a client read the 408 as its next answer.
            if self._heard and self.conn.our_state is h11.IDLE:
                self.transport.write(TOO_SLOW)
            self.transport.close()

    return Bounded
