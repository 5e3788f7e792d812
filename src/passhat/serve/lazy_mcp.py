"""The /mcp route of the run server (serve/app.py): its MCP server made at the first
request that reaches it.

Importing the `mcp` SDK costs about a second of CPU (its pydantic models are built as
it loads), 80 % of a whole `passhat run` of one command-agent run, and many agents never
call a tool (they talk to the model proxy alone, or to nothing of passhat's). The SDK is
imported when an agent first speaks to the server (any request with a run's token: an
agent asks its model before it calls a tool, so the import overlaps the model's answer),
in a worker thread (the event loop serves the other runs meanwhile); a request for /mcp
waits for it, and the session manager runs from then until the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from passhat.serve.endpoints import RUN

MCP_PATH = "/mcp"


def _import_mcp() -> Any:
    from passhat.serve.tools import mcp_server

    return mcp_server


def _made(mcp_server: Any) -> Any:
    """The Streamable HTTP app of passhat's MCP server: stateless, JSON responses."""
    return mcp_server().streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        session_idle_timeout=None,
    )


class LazyMcp:
    """An ASGI app that hands each request to the MCP app, made (and its session manager
    started) by the first; `aclose` stops it, when the server's lifespan ends."""

    def __init__(self) -> None:
        self._start: asyncio.Task[Any] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    def warm(self) -> asyncio.Task[Any]:
        """The MCP app's making, started by the first call, and again by the first after a
        start that failed (its error is told to the requests that waited for it: a
        failure, say a thread that could not be started, is not kept for the server's
        life, every later /mcp request failing with it)."""
        if self._start is None or _failed(self._start):
            self._start = asyncio.ensure_future(self._started())
            self._start.add_done_callback(_seen)
        return self._start

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:  # shielded: a request that goes away leaves the start to the next one
            app = await asyncio.shield(self.warm())
        except Exception as error:
            served = scope.get(RUN)
            if served is not None:  # passhat's failure, not the agent's (hub.py)
                served.tools.fail(f"passhat's MCP server could not start: {error!r}")
            raise
        await app(scope, receive, send)

    async def _started(self) -> Any:
        app = _made(await asyncio.to_thread(_import_mcp))
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._keeper = asyncio.create_task(self._keep(app, ready))
        await asyncio.wait([self._keeper, ready], return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            self._keeper.result()  # its start's error
        return app

    async def _keep(self, app: Any, ready: asyncio.Future[None]) -> None:
        """The MCP app's lifespan (its session manager's task group), in a task of its
        own: entered and left by the same task, whichever request started it."""
        async with app.router.lifespan_context(app):
            ready.set_result(None)
            await self._stop.wait()

    async def aclose(self) -> None:
        self._stop.set()
        if self._start is not None and not self._start.done():
            self._start.cancel()
        if self._keeper is not None:
            await asyncio.gather(self._keeper, return_exceptions=True)


def _failed(task: asyncio.Task[Any]) -> bool:
    """Whether a start ended in an error (cancelled: the server is stopping)."""
    return task.done() and not task.cancelled() and task.exception() is not None


def _seen(task: asyncio.Task[Any]) -> None:
    """Marks a start's error retrieved: no request for /mcp may come to be told it."""
    if not task.cancelled():
        task.exception()


def warming(app: Any, mcp: LazyMcp) -> Any:
    """`app`, whose every HTTP request (the hub lets in only those with a live run's
    token) starts the MCP app's making."""

    async def warmed(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            mcp.warm()
        await app(scope, receive, send)

    return warmed


@contextlib.asynccontextmanager
async def lifespan(mcp: LazyMcp) -> AsyncIterator[None]:
    """The server's lifespan: the MCP app's, if a request started it, ends with it."""
    try:
        yield
    finally:
        await mcp.aclose()
