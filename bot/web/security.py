"""Transport-level protections of the review app: Secure session cookies when served over
HTTPS, which proxies to believe about the client, and who may read `/metrics`.

Every response carries a strict Content-Security-Policy (scripts only with the request's nonce)
and anti-framing, no-sniff and referrer headers, and HSTS when it went out over HTTPS
(`security_headers`).

Behind a reverse proxy the app sees the proxy's address and plain HTTP. Only proxies listed in
`web.trusted_proxies` are believed when they send X-Forwarded-For / X-Forwarded-Proto; from
anyone else those headers are ignored, so a client cannot claim to be local or to use HTTPS.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Literal

from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

HSTS_MAX_AGE_S = 365 * 24 * 3600


class SchemeAwareSessions:
    """Starlette's SessionMiddleware with the Secure flag decided per request: always or never
    when configured, else when the request came over HTTPS (as the app sees the scheme, i.e.
    after a trusted proxy's X-Forwarded-Proto)."""

    def __init__(
        self,
        app: ASGIApp,
        /,
        *,
        secure: bool | None,
        secret_key: str,
        session_cookie: str,
        max_age: int,
        same_site: Literal["lax", "strict", "none"] = "lax",
    ) -> None:
        self.secure = secure
        self._plain, self._https = (
            SessionMiddleware(
                app,
                secret_key=secret_key,
                session_cookie=session_cookie,
                max_age=max_age,
                same_site=same_site,
                https_only=https_only,
            )
            for https_only in (False, True)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        secure = self.secure
        if secure is None:
            secure = scope.get("scheme") in ("https", "wss")
        await (self._https if secure else self._plain)(scope, receive, send)


def client_address(request: Request) -> str | None:
    return request.client.host if request.client else None


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def is_local_request(request: Request, *, proxies_trusted: bool) -> bool:
    """Whether the request comes from this machine and was not relayed by a proxy. A relayed
    request from loopback is local only when trusted proxies resolved its real client (then
    `request.client` is that client); a Forwarded or X-Real-IP header, which nothing here
    resolves, always counts as relayed."""
    if not _is_loopback(client_address(request)):
        return False
    headers = request.headers
    if "forwarded" in headers or "x-real-ip" in headers:
        return False
    return proxies_trusted or "x-forwarded-for" not in headers


def bearer_matches(authorization: str | None, token: str) -> bool:
    """`Authorization: Bearer <token>`, compared in constant time."""
    if not authorization or not token:
        return False
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), token.encode())


async def security_headers(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    """HTTP middleware: a fresh CSP nonce per request (`request.state.csp_nonce`, which the
    pages put on their scripts) and the security headers on every response."""
    nonce = secrets.token_urlsafe(16)
    request.state.csp_nonce = nonce
    response = await call_next(request)
    # A response with a stricter policy of its own keeps it (an image: `default-src 'none'`).
    response.headers.setdefault(
        "Content-Security-Policy",
        "default-src 'none'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        f"script-src 'nonce-{nonce}'; form-action 'self'; frame-ancestors 'none'; "
        "base-uri 'none'",
    )
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    if request.url.scheme == "https":
        # Only over HTTPS (directly, or as a trusted proxy's X-Forwarded-Proto says): a browser
        # ignores it over plain HTTP (RFC 6797 8.1), and an app reached over plain HTTP on
        # purpose (a laptop, loopback) must not be pinned to HTTPS. No includeSubDomains: the
        # app may share its domain with sites that are not ours to pin.
        response.headers["Strict-Transport-Security"] = f"max-age={HSTS_MAX_AGE_S}"
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def proxy_warnings(proxies: tuple[str, ...]) -> list[str]:
    """What is wrong with `web.trusted_proxies` as configured, for the start-up log."""
    if "*" in proxies:
        return [
            'web.trusted_proxies has "*": every client is believed about its address '
            "(X-Forwarded-For), so anyone can rotate it past the per-address login limits; "
            "list the reverse proxy's address instead"
        ]
    return []


def trusts(proxies: tuple[str, ...], host: str | None) -> bool:
    """Whether `host` is one of `proxies` (addresses, networks, or "*")."""
    if not host:
        return False
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host in proxies
    for entry in proxies:
        if entry == "*":
            return True
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


class UntrustedRelayWarning:
    """ASGI middleware (outermost) that logs, once per address, a client that relays others'
    requests (it sends X-Forwarded-For) without being in `web.trusted_proxies`: every client
    behind it then shares its address, so failed logins of strangers count against the
    moderators behind the same proxy, and none of them is seen to use HTTPS. The usual cause
    is Docker's port mapping, where the app sees the network's gateway, not 127.0.0.1."""

    def __init__(self, app: ASGIApp, /, *, proxies: tuple[str, ...]) -> None:
        self.app = app
        self.proxies = proxies
        self.warned: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            client = scope.get("client")
            host = client[0] if client else None
            relayed = any(name == b"x-forwarded-for" for name, _ in scope.get("headers", ()))
            if relayed and host and host not in self.warned and not trusts(self.proxies, host):
                self.warned.add(host)
                log.warning(
                    "requests from %s carry X-Forwarded-For but %s is not in "
                    "web.trusted_proxies: every client it relays shares its address (login "
                    "limits) and is not seen to use HTTPS; add it to web.trusted_proxies",
                    host,
                    host,
                )
        await self.app(scope, receive, send)
