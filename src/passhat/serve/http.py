"""The loopback HTTP server command-agent runs are served on, and its 401.

uvicorn serves the ASGI app on a socket bound to 127.0.0.1 port 0 (the kernel
picks a free port), inside passhat's own event loop, so tool calls reach the
run's environment without crossing a thread: one server per experiment (hub.py),
which listens on each sandboxed run's socket too (`Add`). uvicorn's `serve()` is not used:
it installs process-wide signal handlers, and concurrent runs would take turns
overwriting them (and Ctrl-C belongs to passhat's runner).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import uvicorn

from passhat.serve.endpoints import BOUND, connections, shared_connections

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
BACKLOG = 128
"""Connections the kernel queues on each listener, and the most asyncio's accept loop
takes in one turn of the event loop, before any is closed past its cap: uvicorn's
default, 2,048, let one turn take more than a low descriptor limit holds."""
STOP_GRACE_S = 1.0
"""Seconds a closing run server waits for requests still in flight."""


async def unauthorized(send: Any) -> None:
    """401 for a request without the token of a live run (`Authorization: Bearer <token>`,
    or `x-api-key: <token>` as Anthropic's SDKs send it)."""
    body = b'{"error": {"message": "missing or wrong bearer token for this run", "type": "unauthorized"}}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
        }
    )
    await send({"type": "http.response.body", "body": body})


REFUSED_BODY_BYTES = 1 << 20
REFUSED_BODY_S = 5.0
"""What of a refused request's body is read before its 401 (`drain`), bytes and seconds."""


async def drain(receive: Any) -> None:
    """Read a request's body before refusing it, up to REFUSED_BODY_BYTES and for
    REFUSED_BODY_S at most. Answered at its head (an HTTP client sends the head and the
    body apart), the connection closed under a peer still sending its body: a relay's
    socat met the broken pipe before the answer and dropped the connection, and the
    agent saw it closed with no answer, not a 401 (its SDK retries a network error)."""

    async def read() -> None:
        seen = 0
        while seen <= REFUSED_BODY_BYTES:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body"):
                return  # the whole body, or the client gone
            seen += len(message.get("body", b""))

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(read(), REFUSED_BODY_S)


async def too_many(send: Any, reason: str) -> None:
    """429 for a request of a run that may make passhat keep nothing more (its reason)."""
    body = json.dumps({"error": {"message": reason, "type": "agent_flood"}}).encode()
    headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


Add = Callable[[socket.socket, str], Awaitable[asyncio.AbstractServer]]
"""Serve on one more listening socket, its requests marked as come in for the given
run (the hub's BOUND); the caller closes what is returned."""


@contextlib.asynccontextmanager
async def loopback_server(app: ASGIApp) -> AsyncIterator[tuple[int, Add]]:
    """Serve `app` on 127.0.0.1 at a free port until the block ends; yields the port and
    what adds a listening socket (a run's) to the same server."""
    # proto TCP: asyncio sets TCP_NODELAY on the connections it accepts only then; with 0
    # an answer written in two parts (its head, then its body) waited for the client's
    # delayed ACK, 40 ms, on every request after a keep-alive connection's first (Nagle)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(BACKLOG)
    sock.setblocking(False)
    sockets = [sock]
    config = uvicorn.Config(
        app,
        log_level="error",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=1,
        # no Server header: nothing identifies passhat's version to the agent
        server_header=False,
        ws="none",  # no WebSocket upgrade, whatever is installed: runs speak HTTP alone
        http="h11",  # not httptools, when installed: _capped reads h11's buffer
    )
    server = uvicorn.Server(config)
    config.load()  # (it configures uvicorn's loggers: the filter goes on after)
    logging.getLogger("uvicorn.error").addFilter(_QUIET)  # once: filters are a set
    server.lifespan = config.lifespan_class(config)
    try:
        await server.startup(sockets=[])  # its lifespan: the listener is served below
        if server.should_exit:  # the app's startup failed
            raise RuntimeError("the run's tool and model server did not start")
        serve = _server(server)
        server.servers.append(await serve(sock, server.lifespan.state, shared_connections))
        yield sock.getsockname()[1], _adder(serve, server.lifespan.state)
    finally:
        await asyncio.shield(_stop(server, sockets))


Serve = Callable[[socket.socket, dict[str, Any], Callable[[], int]], Awaitable[asyncio.Server]]
"""Serve on one more listening socket with the given app state, at most the given
number of its connections open at once (read as each comes: the cap may change)."""


def _adder(serve: Serve, state: dict[str, Any]) -> Add:
    """Serve on a run's `sock` too, with `bound` in each request's scope state (beside
    the app's `state`) and at most `connections()` of its connections open."""

    async def add(sock: socket.socket, bound: str) -> asyncio.AbstractServer:
        return await serve(sock, {**state, BOUND: bound}, connections)

    return add


def _server(server: uvicorn.Server) -> Serve:
    """What serves a listening socket as uvicorn's startup serves each socket it is
    given, its connections counted and capped (`_capped`)."""
    config = server.config
    capped = _capped(config.http_protocol_class)  # one class; a count per listener

    async def serve(
        sock: socket.socket, state: dict[str, Any], most: Callable[[], int]
    ) -> asyncio.Server:
        live = _Live(most)

        def protocol(_loop: asyncio.AbstractEventLoop | None = None) -> asyncio.Protocol:
            made = capped(  # type: ignore[call-arg]
                config=config, server_state=server.server_state, app_state=state, _loop=_loop
            )
            made.live = live  # type: ignore[attr-defined]
            return made

        loop = asyncio.get_running_loop()
        if sock.family == socket.AF_UNIX:
            return await loop.create_unix_server(protocol, sock=sock, backlog=BACKLOG)
        return await loop.create_server(protocol, sock=sock, backlog=BACKLOG)

    return serve


class _Live:
    """The connections one listener holds open, oldest first, and the most it may
    (`most()`)."""

    def __init__(self, most: Callable[[], int]) -> None:
        self.open: dict[Any, None] = {}  # an ordered set of Capped protocols
        self.most = most

    def room(self) -> bool:
        """Whether one more connection may be held: below `most()`, or once the oldest
        quiet connection (no request under way: none sent yet, or its answer given) is
        closed to make it. A full listener takes a new connection before an idle one:
        idle connections held by one run at `process`, where every run shares the
        listener, shut every other run out of passhat (tests/test_attack55_listener.py).
        With none quiet, the one whose request's head has been coming longest is closed:
        heads that never ended held the listener full for good (review56); a run's client
        sends its head at once, and its requests under way are capped (hub.py)."""
        if len(self.open) < self.most():
            return True
        quiet = next((held for held in self.open if held.quiet()), None)
        if quiet is None:
            coming = [held for held in self.open if held.coming()]
            quiet = min(coming, key=lambda held: held.head_from, default=None)
        if quiet is None:
            return False
        del self.open[quiet]
        quiet.transport.abort()
        return True


def _capped(base: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """uvicorn's protocol, counting its listener's connections (`live`, set as each is
    made): past `live.most()` open at once, the oldest quiet one is aborted for a new
    one, or the one whose head has been coming longest, or with neither the new one is
    aborted as it is made (its descriptor freed at once)."""

    class Capped(base):  # type: ignore[valid-type,misc]
        live: _Live
        refused = False
        head_from = 0.0

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            if not self.live.room():
                self.refused = True
                transport.abort()  # type: ignore[attr-defined]
                return
            self.live.open[self] = None
            super().connection_made(transport)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.refused:
                return
            self.live.open.pop(self, None)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if not self._head():
                self.head_from = time.monotonic()  # a request's head may start here
            super().data_received(data)

        def quiet(self) -> bool:
            """No request under way: none whose head has come or is coming (its first
            bytes read: h11's buffer), or its answer given and sent (review55b: closing
            one whose head was still coming reset a well-behaved run's request)."""
            return self._between() and not self._head()

        def coming(self) -> bool:
            """A request's head is coming (since `head_from`), nothing else under way."""
            return self._between() and self._head()

        def _between(self) -> bool:
            """No request's answer under way: none yet, or the last given and sent."""
            cycle = getattr(self, "cycle", None)
            if cycle is not None and not cycle.response_complete:
                return False
            transport = getattr(self, "transport", None)
            return transport is None or not transport.get_write_buffer_size()

        def _head(self) -> bool:
            """Bytes read that h11 has not made a request of yet (a head not ended)."""
            conn = getattr(self, "conn", None)
            return conn is not None and bool(conn.trailing_data[0])

    return Capped


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
