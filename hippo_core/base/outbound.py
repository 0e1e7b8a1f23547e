"""Requests that carry a credential out of hippo: a webhook, a ripple's endpoint, a model.

A credential stays with the host it was written for. :func:`outbound_opener` never follows
a redirect (urllib would follow a 302 from a POST to any host, ``Authorization`` and all):
an answer that redirects is an error in words naming where it pointed. It never sends a
request for this machine through the environment's proxy, and it can refuse to connect to
a link-local or cloud-metadata address, checked on the addresses a host name resolves to,
so a name that resolves there is refused as a literal address is.
:func:`outbound_url_problem` is the same rule for a settings check, which cannot resolve
names: literal addresses and the known metadata names. :func:`shown_url` is a URL as a
record may keep it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hippo_core.base.errors import HippoError

if TYPE_CHECKING:
    import ipaddress
    import socket
    import urllib.request

#: Cloud metadata services (AWS, GCP, Azure, Oracle and DigitalOcean share the first;
#: AWS's IPv6 one; Alibaba Cloud's): what a request with a credential must never reach.
METADATA_ADDRESSES = ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
#: Google Cloud's names for its metadata server (``metadata`` through the VM's search domain).
METADATA_NAMES = ("metadata.google.internal", "metadata")

_CONTROL = {chr(code) for code in (*range(33), 127)}


class Refused(HippoError):
    """A request hippo will not make, or an answer it will not follow."""


def outbound_url_problem(
    url: str, *, allow_plain_http: bool = False, allow_link_local: bool = False
) -> str | None:
    """Why a request with a credential must not go to ``url``; None when it may.

    Refused: anything but ``http://`` or ``https://``, a space or control character, a user
    or password in the URL, a literal link-local or cloud-metadata address or a known
    metadata name (unless ``allow_link_local``), and plain http to a host other than this
    machine (unless ``allow_plain_http``). The reasons name the keyword that allows each,
    which a plugin may give its settings as names.
    """
    if not url.startswith(("http://", "https://")):
        return "must be an http:// or https:// URL"
    if any(char in _CONTROL for char in url):
        return "must not hold a space or a control character"
    parts = urlsplit(url)
    if "@" in parts.netloc:
        return (
            "must not hold a user or password (user:password@): the bearer has its own "
            "setting, bearer_token_env"
        )
    host = parts.hostname
    if not host:
        return "names no host"
    try:
        _port = parts.port  # urllib checks the port only when it is asked for
    except ValueError:
        return "has a port that is not a number from 0 to 65535"
    if not allow_link_local and (kind := _metadata_name(host) or address_problem(host)):
        return f"{host} is {kind}; allow_link_local = true allows it"
    if parts.scheme == "http" and not allow_plain_http and not is_loopback(host):
        return (
            "is plain http to another machine, which anyone on the way can read: use https "
            "(http is for this machine: 127.0.0.0/8, ::1, localhost), or allow_plain_http = true"
        )
    return None


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or a literal address) is this machine."""
    if host.lower().rstrip(".") == "localhost":
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def address_problem(host: str) -> str | None:
    """What the literal address ``host`` is when a credential must not go there (``a
    link-local address``, ``a cloud-metadata address``); None for a name or any other."""
    address = _address(host)
    if address is None:
        return None
    if str(address) in METADATA_ADDRESSES:
        return "a cloud-metadata address"
    if address.is_link_local:
        return "a link-local address"
    return None


def _metadata_name(host: str) -> str | None:
    if host.lower().rstrip(".") in METADATA_NAMES:
        return "a cloud-metadata name"
    return None


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    import ipaddress

    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    # ::ffff:169.254.169.254 reaches the IPv4 address it maps.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def shown_url(url: str) -> str:
    """``url`` as a record may keep it: no user or password, every query value hidden, no
    fragment (a webhook's query often carries its token). A text that is no URL at all
    (an unclosed ``[`` of an IPv6 host) is shown as its scheme alone."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"{url.partition('://')[0]}://[not a URL]" if "://" in url else "[not a URL]"
    shown = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"
    if parts.query:
        hidden = [
            f"{name}=[redacted]" if sep else "[redacted]"
            for name, sep, _ in (piece.partition("=") for piece in parts.query.split("&"))
        ]
        shown += "?" + "&".join(hidden)
    return shown


def outbound_opener(*, allow_link_local: bool) -> urllib.request.OpenerDirector:
    """A urllib opener for a request that carries a credential: it never follows a redirect,
    never sends a request for this machine through a proxy, and with ``allow_link_local``
    False refuses, before connecting, an address (after DNS) that is link-local or cloud
    metadata.

    A redirect raises a :class:`~hippo_core.HippoError` (``answered 302 to <url>: hippo does
    not follow redirects``), so neither the credential nor the body goes anywhere else and
    a redirect is never taken for an answer. A request for this machine never goes through
    the environment's proxy. Without ``allow_link_local``, a connection that would reach a
    link-local or cloud-metadata address (after DNS; for a proxy, the proxy's address) is a
    ``HippoError`` raised before anything is sent.
    """
    import http.client
    import urllib.request

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(
            self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
        ) -> Any:
            fp.close()
            raise Refused(
                f"answered {code} to {shown_url(newurl)}: hippo does not follow redirects"
            )

    class DirectToLoopback(urllib.request.ProxyHandler):
        def proxy_open(self, req: Any, proxy: str, type: str) -> Any:
            if is_loopback(urlsplit(req.full_url).hostname or ""):
                return None  # the next handler connects directly
            return super().proxy_open(req, proxy, type)

    handlers: list[urllib.request.BaseHandler] = [NoRedirects(), DirectToLoopback()]
    if not allow_link_local:

        class CheckedHTTP(http.client.HTTPConnection):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self._create_connection = _connect_checked

        class CheckedHTTPS(http.client.HTTPSConnection):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self._create_connection = _connect_checked

        class CheckedHTTPHandler(urllib.request.HTTPHandler):
            def http_open(self, req: Any) -> Any:
                return self.do_open(CheckedHTTP, req)

        class CheckedHTTPSHandler(urllib.request.HTTPSHandler):
            def https_open(self, req: Any) -> Any:
                return self.do_open(CheckedHTTPS, req)

        handlers += [CheckedHTTPHandler(), CheckedHTTPSHandler()]
    return urllib.request.build_opener(*handlers)


def _connect_checked(
    address: tuple[str, int], timeout: Any = None, source_address: Any = None, **_: Any
) -> socket.socket:
    """``socket.create_connection``, refusing before connecting when any address the host
    resolves to is link-local or cloud metadata. It connects to the addresses it checked,
    never resolving again, so a name cannot resolve elsewhere in between."""
    import socket

    host, port = address
    if kind := _metadata_name(host):
        raise Refused(_refusal(host, kind))
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    for *_rest, sockaddr in found:
        if kind := address_problem(str(sockaddr[0])):
            shown = str(sockaddr[0]) if sockaddr[0] == host else f"{sockaddr[0]} (for {host})"
            raise Refused(_refusal(shown, kind))
    failed: OSError = OSError(f"{host} has no address")
    for *_rest, sockaddr in found:
        try:
            return socket.create_connection((str(sockaddr[0]), port), timeout, source_address)
        except OSError as exc:
            failed = exc
    raise failed


def _refusal(where: str, kind: str) -> str:
    return (
        f"would connect to {where}, {kind}: refused before anything was sent "
        "(allow_link_local = true allows it)"
    )
