"""What passhat serves to an agent process for one run, on one loopback port.

A command agent (agents/command.py) runs in its own process; passhat serves it on
127.0.0.1, one server for every run of an experiment (serve/hub.py: the runner
opens `hub_scope()` around its runs), each run behind a random bearer token of its
own, and inside a sandboxed run's network namespace at the same port:

    /mcp                    the run's environment tools over MCP (Streamable HTTP,
                            the official `mcp` SDK): serve/tools.py
    /v1/chat/completions    an OpenAI-compatible endpoint that answers with the
                            experiment's model (retries, usage, transcript) or its
                            replay cassette: serve/proxy.py
    /v1/messages            the same, Anthropic-compatible: serve/anthropic_proxy.py

Every tool call goes through `env.call` and every model call through
`RunContext.generate`, the same doors an in-process agent uses, so the run is
recorded exactly as one. The token is the only credential the agent sees; the
provider's real key never leaves passhat's process.

Needs the `agents` extra (`pip install 'passhat[agents]'`): mcp, starlette, uvicorn.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

from passhat.serve.endpoints import RunEndpoints

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.env import Environment
    from passhat.serve.hub import Hub

__all__ = ["RunEndpoints", "hub_scope", "serve_run"]


class _Scope:
    """A hub scope's hub, made by the first run that is served in it: the runs of an
    in-process agent serve nothing, and importing the hub's module (1.4 ms) held up the
    first of them."""

    __slots__ = ("hub",)

    def __init__(self) -> None:
        self.hub: Hub | None = None

    def made(self) -> Hub:
        if self.hub is None:
            from passhat.serve.hub import Hub

            self.hub = Hub()
        return self.hub


_HUB: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("passhat_hub", default=None)


@asynccontextmanager
async def hub_scope(concurrency: int | None = None) -> AsyncIterator[None]:
    """One server for the command-agent runs started inside the block (tasks made in it
    inherit it); started by the first such run, stopped when the block ends. Given the
    runs made at once, each run's connections are capped for the block from passhat's
    descriptor limit (serve/endpoints.share)."""
    from passhat.serve import endpoints

    if concurrency is not None:
        endpoints.share(concurrency)
    scope = _Scope()
    token = _HUB.set(scope)
    try:
        yield
    finally:
        _HUB.reset(token)
        try:
            if scope.hub is not None:
                await scope.hub.aclose()
        finally:
            if concurrency is not None:
                endpoints.share(None, ending=concurrency)


def serve_run(
    env: Environment, ctx: RunContext, unix_path: str | None = None
) -> AbstractAsyncContextManager[RunEndpoints]:
    """Serve one run's tools and model until the block ends (on the Unix socket
    `unix_path` too, for a sandboxed run's relay): on the hub of the scope it runs in
    (its own block, not one wrapped in another: this is on every run's way), or on a
    server of its own outside one."""
    scope = _HUB.get()
    if scope is not None:
        return scope.made().serve(env, ctx, unix_path)
    return _alone(env, ctx, unix_path)


@asynccontextmanager
async def _alone(
    env: Environment, ctx: RunContext, unix_path: str | None
) -> AsyncIterator[RunEndpoints]:
    """One run served outside a hub scope: on a hub of its own."""
    async with hub_scope(), serve_run(env, ctx, unix_path) as endpoints:
        yield endpoints
