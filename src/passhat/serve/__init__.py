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
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.env import Environment
    from passhat.serve.http import Listen
    from passhat.serve.hub import Hub
    from passhat.serve.proxy import ModelProxy

__all__ = ["RunEndpoints", "hub_scope", "serve_run"]

RUN = "passhat.run"
"""The scope key under which the hub hands each request its run (serve/hub.py's Served)."""
_HUB: contextvars.ContextVar[Hub | None] = contextvars.ContextVar("passhat_hub", default=None)


@dataclass(frozen=True)
class RunEndpoints:
    """Where one run's agent process finds its tools and its model."""

    mcp_url: str
    """The MCP endpoint (Streamable HTTP)."""
    openai_base_url: str
    """Base URL of the OpenAI-compatible endpoint (ends in /v1)."""
    token: str
    """Per-run bearer token for both; dies with the run."""
    proxy: ModelProxy
    """The model proxy: its first model error decides the run's error."""
    port: int = 0
    """The loopback port (a sandbox's listener or relay uses the same number)."""
    listen: Listen | None = None
    """Serve the same endpoints on one more listening socket (made inside a sandbox)."""

    def environ(self) -> dict[str, str]:
        """The variables the agent process gets (official SDKs read the OPENAI_ ones)."""
        return {
            "PASSHAT_MCP_URL": self.mcp_url,
            "PASSHAT_MCP_TOKEN": self.token,
            "PASSHAT_OPENAI_BASE_URL": self.openai_base_url,
            "PASSHAT_OPENAI_API_KEY": self.token,
            "OPENAI_BASE_URL": self.openai_base_url,
            "OPENAI_API_KEY": self.token,
            # Anthropic's SDKs append /v1/messages themselves
            "PASSHAT_ANTHROPIC_BASE_URL": self.openai_base_url.removesuffix("/v1"),
            "ANTHROPIC_BASE_URL": self.openai_base_url.removesuffix("/v1"),
            "ANTHROPIC_API_KEY": self.token,
        }


@asynccontextmanager
async def hub_scope() -> AsyncIterator[None]:
    """One server for the command-agent runs started inside the block (tasks made in it
    inherit it); started by the first such run, stopped when the block ends."""
    from passhat.serve.hub import Hub

    hub = Hub()
    token = _HUB.set(hub)
    try:
        yield
    finally:
        _HUB.reset(token)
        await hub.aclose()


@asynccontextmanager
async def serve_run(
    env: Environment, ctx: RunContext, unix_path: str | None = None
) -> AsyncIterator[RunEndpoints]:
    """Serve one run's tools and model until the block ends (on the Unix socket
    `unix_path` too, for a sandboxed run's relay): on the hub of the scope it runs in,
    or on a server of its own outside one."""
    hub = _HUB.get()
    if hub is not None:
        async with hub.serve(env, ctx, unix_path) as endpoints:
            yield endpoints
        return
    async with hub_scope(), serve_run(env, ctx, unix_path) as endpoints:
        yield endpoints
