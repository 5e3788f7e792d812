"""A loopback HTTP server for one run, and the bearer check in front of it.

uvicorn serves the ASGI app on a socket bound to 127.0.0.1 port 0 (the kernel
picks a free port), inside passhat's own event loop, so tool calls reach the
run's environment without crossing a thread. uvicorn's `serve()` is not used:
it installs process-wide signal handlers, and concurrent runs would take turns
overwriting them (and Ctrl-C belongs to passhat's runner).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
from collections.abc import AsyncIterator
from typing import Any

import uvicorn

ASGIApp = Any


class _NotCancelled(logging.Filter):
    """Drops uvicorn's record of a task that was cancelled: on Ctrl-C or SIGTERM asyncio
    cancels every task, and uvicorn would log each run's lifespan as failed, with the
    traceback of the cancel, although nothing went wrong (passhat says what it stopped)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, asyncio.CancelledError):
            return False
        # starlette hands uvicorn the traceback as text ("lifespan.shutdown.failed")
        message = record.getMessage().rstrip()
        return not message.endswith("asyncio.exceptions.CancelledError")


_QUIET = _NotCancelled()
STOP_GRACE_S = 1.0
"""Seconds a closing run server waits for requests still in flight."""


def bearer_guard(app: ASGIApp, token: str) -> ASGIApp:
    """Let through only HTTP requests carrying the token: `Authorization: Bearer <token>`,
    or `x-api-key: <token>` as Anthropic's SDKs send it."""
    expected = f"Bearer {token}".encode()
    key = token.encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or ())
            bearer = secrets.compare_digest(headers.get(b"authorization", b""), expected)
            if not (bearer or secrets.compare_digest(headers.get(b"x-api-key", b""), key)):
                body = b'{"error": {"message": "missing or wrong bearer token for this run", "type": "unauthorized"}}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


@contextlib.asynccontextmanager
async def loopback_server(app: ASGIApp, unix_path: str | None = None) -> AsyncIterator[int]:
    """Serve `app` on 127.0.0.1 at a free port (yielded) until the block ends, and on the
    Unix socket `unix_path` too when given (a sandboxed run reaches it through a relay)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    sockets = [sock]
    if unix_path is not None:
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(unix_path)
        unix.listen(128)
        unix.setblocking(False)
        sockets.append(unix)
    config = uvicorn.Config(
        app,
        log_level="error",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=1,
        # no Server header: nothing identifies passhat's version to the agent
        server_header=False,
    )
    server = uvicorn.Server(config)
    config.load()  # (it configures uvicorn's loggers: the filter goes on after)
    logging.getLogger("uvicorn.error").addFilter(_QUIET)  # once: filters are a set
    server.lifespan = config.lifespan_class(config)
    try:
        await server.startup(sockets=sockets)
        if server.should_exit:  # the app's startup failed
            raise RuntimeError("the run's tool and model server did not start")
        yield sock.getsockname()[1]
    finally:
        await asyncio.shield(_stop(server, sockets))


async def _stop(server: uvicorn.Server, sockets: list[socket.socket]) -> None:
    """uvicorn's shutdown without its fixed 0.1 s pause: the agent process is gone by
    now, so its connections are closed or dead; what is still open gets a moment."""
    for listener in server.servers:
        listener.close()
    for sock in sockets:
        sock.close()
    for connection in list(server.server_state.connections):
        connection.shutdown()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_GRACE_S
    while (server.server_state.connections or server.server_state.tasks) and (
        loop.time() < deadline
    ):
        await asyncio.sleep(0.005)
    for task in list(server.server_state.tasks):
        task.cancel()
    for listener in server.servers:
        await listener.wait_closed()
    await server.lifespan.shutdown()
