"""What keeps `passhat view` read-only and its own user's: GET only, a Host header that
names the loopback address it is bound to (no DNS rebinding from a web page), a random
token on every request (on loopback too: another local user, or an agent run at
`--isolation process`, reaches 127.0.0.1), and headers that let a page run only the
view's own script.

Pure ASGI middleware (no response buffering), so the live stream (`/events`) flows.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "passhat_view_token"
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""Scripts and styles from the view's own files only: nothing inline, nothing a run's
text could carry, nothing from elsewhere."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def token_cookie(port: int | None) -> str:
    """The cookie that carries the token of the view on `port`: a browser sends a cookie
    of 127.0.0.1 to every port there, so two views running at once keep one each."""
    return TOKEN_COOKIE if port is None else f"{TOKEN_COOKIE}_{port}"


def new_token() -> str:
    """A random access token (32 bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """Whether binding `host` stays on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_allowed(header: str, port: int | None) -> bool:
    """A Host header naming the loopback address (with the bound port, or none)."""
    if header.startswith("["):
        name, _, rest = header.partition("]")
        name, given = name + "]", rest.removeprefix(":")
    else:
        name, _, given = header.partition(":")
    if name not in LOOPBACK_NAMES:
        return False
    return not given or port is None or given == str(port)


def token_of(scope: Scope, cookie_name: str = TOKEN_COOKIE) -> tuple[str | None, bool]:
    """The token a request carries, and whether it came in the query (not the cookie)."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if query.get("token"):
        return query["token"][0], True
    for key, value in scope.get("headers", []):
        if key == b"cookie":
            # cookie by cookie: SimpleCookie stops at the first value it finds illegal
            # (another app's JSON, a space), and the view's own after it went unseen
            for part in value.decode("latin-1").split(";"):
                name, equals, given = part.strip().partition("=")
                if equals and name == cookie_name:
                    return given, False
    return None, False


async def _refuse(send: Send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-security-policy", PAGE_CSP.encode()),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": text.encode() + b"\n"})


class Guard:
    """GET and HEAD only; the Host check on loopback; the token when one is set (`passhat
    view` always sets one); the security headers on every answer (a page's own CSP is
    kept: the report's)."""

    def __init__(
        self, app: ASGIApp, *, token: str | None, loopback: bool, port: int | None
    ) -> None:
        self.app, self.token, self.loopback, self.port = app, token, loopback, port
        self.cookie = token_cookie(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _refuse(send, 405, "passhat view is read-only: GET only")
            return
        headers = dict(scope.get("headers", []))
        host = headers.get(b"host", b"").decode("latin-1")
        if self.loopback and not host_allowed(host, self.port):
            await _refuse(send, 421, f"passhat view answers on 127.0.0.1, not on {host!r}")
            return
        from_query = False
        if self.token is not None:
            given, from_query = token_of(scope, self.cookie)
            # compare_digest takes ASCII text alone (else TypeError): any other is wrong
            if given is None or not given.isascii() or not hmac.compare_digest(given, self.token):
                await _refuse(
                    send, 403, "passhat view needs its access token: open the URL it printed"
                )
                return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"cache-control", b"no-store"),
                ]
                names = {k.lower() for k, _ in message.get("headers", [])}
                if b"content-security-policy" not in names:
                    extra.append((b"content-security-policy", PAGE_CSP.encode()))
                if from_query and self.token is not None:
                    cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                    extra.append((b"set-cookie", cookie.encode()))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


__all__ = [
    "PAGE_CSP",
    "TOKEN_COOKIE",
    "Guard",
    "host_allowed",
    "is_loopback",
    "new_token",
    "token_cookie",
]
