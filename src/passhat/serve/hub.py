"""One server for every command-agent run of an experiment, routing each request by its token.

The runner opens a hub around an experiment's runs (`hub_scope`, serve/__init__.py);
the first command-agent run starts it: one uvicorn server on 127.0.0.1 with one
app (MCP at /mcp, the model proxy at /v1/...). Each run registers a random token
with its environment and its model proxy, and every request is handed the run its
token names (`Served`, under the scope key RUN); a request with no live run's token
is answered 401. A run's sandbox gets a listening socket of its own (made in its
network namespace, or a Unix socket its relay forwards to), served by the same
server and bound to that run: a request arriving there must carry that run's token.

When a run ends its token is dropped, its listeners are closed, and its requests
still in flight get STOP_GRACE_S to finish before they are cancelled. Starting one
server per experiment instead of per run saves each run uvicorn's configuration
(logging set up anew), an ASGI app and MCP server, and their lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from passhat.serve.endpoints import (
    BOUND,
    CONNECTIONS_FLOOR,
    REQUESTS,
    RUN,
    RunEndpoints,
    ToolBudget,
    connections,
    listening,
)

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.env import Environment
    from passhat.serve.http import Add
    from passhat.serve.proxy import ModelProxy

STOP_GRACE_S = 1.0
"""Seconds an ended run's requests still in flight get before they are cancelled."""


@dataclass(eq=False)
class Served:
    """One run as the hub serves it."""

    token: str
    env: Environment
    proxy: ModelProxy
    tools: ToolBudget = field(default_factory=ToolBudget)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    listeners: list[asyncio.AbstractServer] = field(default_factory=list)
    turns: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(REQUESTS))
    """The run's POSTs served at once (endpoints.REQUESTS); the others wait unread."""
    under_way: int = 0
    """The run's requests under way (served or waiting their turn); past its share of
    connections, one more is answered 429 at once (Hub._dispatch)."""


class Hub:
    """The server of every command-agent run on this event loop, started by the first."""

    def __init__(self) -> None:
        self.runs: dict[str, Served] = {}
        self.port = 0
        self.strangers = 0  # requests with no live run's token under way (their drain)
        self._add: Add | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._starting = asyncio.Lock()

    async def _start(self) -> Add:
        async with self._starting:
            if self._add is None:
                from passhat.serve.app import build_app
                from passhat.serve.http import loopback_server

                stack = contextlib.AsyncExitStack()
                self.port, self._add = await stack.enter_async_context(
                    loopback_server(self._dispatch(build_app()))
                )
                self._stack = stack
            assert self._add is not None
            return self._add

    async def aclose(self) -> None:
        if self._stack is not None:
            stack, self._stack, self._add = self._stack, None, None
            await stack.aclose()

    @contextlib.asynccontextmanager
    async def serve(
        self, env: Environment, ctx: RunContext, unix_path: str | None = None
    ) -> AsyncIterator[RunEndpoints]:
        """Serve one run until the block ends (on the Unix socket `unix_path` too)."""
        from passhat.serve.proxy import ModelProxy

        add = await self._start()
        served = Served(secrets.token_urlsafe(32), env, ModelProxy(ctx))
        self.runs[served.token] = served

        async def listen(sock: socket.socket) -> None:
            try:
                served.listeners.append(await add(sock, served.token))
            except BaseException:  # not served: not kept open (nor its sandbox's namespace)
                sock.close()
                raise

        try:
            if unix_path is not None:
                await listen(unix_listener(unix_path))
            base = f"http://127.0.0.1:{self.port}"
            yield RunEndpoints(
                f"{base}/mcp",
                f"{base}/v1",
                served.token,
                served.proxy,
                self.port,
                listen,
                served.tools,
            )
        finally:
            self._end(served)
            if served.tasks:  # most runs end with none: no task made to shield then
                await asyncio.shield(self._settle(served))

    def _end(self, served: Served) -> None:
        """Stop taking the run's requests."""
        self.runs.pop(served.token, None)
        for listener in served.listeners:
            listener.close()

    async def _settle(self, served: Served) -> None:
        """Give the run's requests still in flight a moment, then cancel them."""
        await asyncio.wait(set(served.tasks), timeout=STOP_GRACE_S)
        cancelled = list(served.tasks)
        for task in cancelled:
            task.cancel()
        if cancelled:  # a tool call cancelled is kept on its run (Environment.call) before
            # the run's record is made from its calls
            await asyncio.wait(cancelled, timeout=STOP_GRACE_S)

    def _find(self, headers: dict[bytes, bytes]) -> Served | None:
        """The run of the token in `Authorization: Bearer`, else in `x-api-key` (as
        Anthropic's SDKs send it)."""
        bearer = headers.get(b"authorization", b"")
        found = None
        if bearer[:7].lower() == b"bearer ":
            found = self.runs.get(bearer[7:].decode("latin-1"))
        key = headers.get(b"x-api-key")
        if found is None and key is not None:
            found = self.runs.get(key.decode("latin-1"))
        return found

    def _dispatch(self, app: Any) -> Any:
        """The app, handed the run each request's token names; 401 without one, and for a
        request that came in through another run's listener (its body read first:
        http.drain); 429, its body unread, for any
        request of a run whose budget is spent (endpoints.ToolBudget). A run's requests
        are served REQUESTS POSTs at a time; the others wait, their bodies unread. Only
        HTTP reaches the app (and its start and end): never a WebSocket."""
        from passhat.serve.http import too_many

        async def dispatch(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "lifespan":
                await app(scope, receive, send)
                return
            if scope["type"] != "http":  # a WebSocket (none is served: http.py): no token
                return
            served = self._find(dict(scope.get("headers") or ()))
            bound = (scope.get("state") or {}).get(BOUND)
            if served is None or (bound is not None and bound != served.token):
                await self._refuse(receive, send)
                return
            if served.tools.spent is not None:
                await too_many(send, served.tools.spent)
                return
            if served.under_way >= connections():  # its connections made quiet, not held
                await too_many(send, f"more than {connections()} requests of this run at once")
                return
            task = asyncio.current_task()
            if task is not None:
                served.tasks.add(task)
            served.under_way += 1
            try:
                # REQUESTS at once: the others' bodies wait unread; a request without a
                # body (an MCP client's GET stream, held open all the run) takes no turn
                turn = served.turns if scope.get("method") == "POST" else contextlib.nullcontext()
                async with turn:
                    if served.tools.spent is not None:  # spent while this one waited
                        await too_many(send, served.tools.spent)
                        return
                    await app({**scope, RUN: served}, receive, send)
            finally:
                served.under_way -= 1
                served.tasks.discard(task)

        return dispatch

    async def _refuse(self, receive: Any, send: Any) -> None:
        """401, the request's body read first (http.drain: answered, not dropped), for
        CONNECTIONS_FLOOR such requests at once; past them at once, unread. A listener
        full of connections whose requests wait for a drain has none quiet to close for a
        new one (http._Live.room): at `process`, where every run shares it, they shut the
        other runs out (tests/test_attack55_listener.py)."""
        from passhat.serve.http import drain, unauthorized

        if self.strangers >= CONNECTIONS_FLOOR:
            await unauthorized(send)
            return
        self.strangers += 1
        try:
            await drain(receive)
        finally:
            self.strangers -= 1
        await unauthorized(send)


def unix_listener(path: str) -> socket.socket:
    return listening(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), path)
