"""What passhat serves to an agent process for one run, on one loopback port.

A command agent (agents/command.py) runs in its own process; for each run
passhat opens one HTTP server on 127.0.0.1 with a random port and a random
bearer token, serving:

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

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.env import Environment
    from passhat.serve.proxy import ModelProxy

__all__ = ["RunEndpoints", "serve_run"]


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
    """The loopback port (a sandboxed run's relay listens on the same number)."""

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
async def serve_run(
    env: Environment, ctx: RunContext, unix_path: str | None = None
) -> AsyncIterator[RunEndpoints]:
    """Serve one run's tools and model on a fresh loopback port until the block ends (and
    on the Unix socket `unix_path`, for a run in a sandbox of its own)."""
    from passhat.serve.app import build_app
    from passhat.serve.http import loopback_server
    from passhat.serve.proxy import ModelProxy

    token = secrets.token_urlsafe(32)
    proxy = ModelProxy(ctx)
    app = build_app(env, proxy, token)
    async with loopback_server(app, unix_path) as port:
        base = f"http://127.0.0.1:{port}"
        yield RunEndpoints(f"{base}/mcp", f"{base}/v1", token, proxy, port)
