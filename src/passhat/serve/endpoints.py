"""What a command agent's run is given to reach passhat, and the names the server's parts share.

A leaf of serve/: the hub, the app, the tools and the HTTP server import it, and it
imports none of them.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from passhat.serve.proxy import ModelProxy

RUN = "passhat.run"
"""The scope key under which the hub hands each request its run (serve/hub.py's Served)."""
BOUND = "passhat.bound"
"""The key, in a request's scope state, of the token of the run whose listener took it."""
CONNECTIONS = 128
"""Connections one run's own listener (its endpoint, in its sandbox or behind its relay's
Unix socket) and its proxy to allowed hosts each hold open at once: one more is closed
as it comes, so an agent that opens thousands cannot take passhat's file descriptors
from the other runs."""
Listen = Callable[[socket.socket], Awaitable[None]]
"""Serve on one more listening socket (one made in a sandbox's network namespace); it
owns the socket from the call on, and closes it when it cannot serve it."""


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


def listening(sock: socket.socket, address: str | tuple[str, int]) -> socket.socket:
    """`sock` bound to `address`, listening and non-blocking (closed if any step fails)."""
    try:
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock
