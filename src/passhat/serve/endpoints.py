"""What a command agent's run is given to reach passhat, and the names the server's parts share.

A leaf of serve/: the hub, the app, the tools and the HTTP server import it, and it
imports none of them.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
from the other runs. The most: a run's own share of the descriptors is lower under a
low limit or a high --concurrency (`share`)."""
CONNECTIONS_FLOOR = 8
"""Connections a run may hold however low passhat's descriptor limit and however high
--concurrency: a real agent holds a few (its HTTP client's pool, one MCP stream)."""
OWN_DESCRIPTORS = 64
"""Descriptors passhat keeps for itself, whatever the runs hold: the store and its
journal, the event loop, the hub's listener, the look for answers, imports."""
RUN_DESCRIPTORS = 24
"""Descriptors one run takes besides its connections: its agent's pipes and pidfd, its
sandbox's helpers, its listening sockets, the look for answers before it starts."""
_share = CONNECTIONS
_open: list[int] = []
"""The runs at once (--concurrency) of each hub scope open now (serve.hub_scope): two
experiments in one process (`asyncio.gather` of two `evaluate_async`) share its
descriptors, and the one that ends first leaves the other's cap in place."""


def connections_for(limit: int, concurrency: int) -> int:
    """Connections one run's listener, and its proxy to allowed hosts, may each hold at
    once so that `concurrency` runs all holding theirs leave passhat descriptors under
    `limit` (its soft RLIMIT_NOFILE): one connection to the listener takes one, one
    tunnel through the proxy two. At most CONNECTIONS, at least CONNECTIONS_FLOOR."""
    per_run = (limit - OWN_DESCRIPTORS) // max(1, concurrency) - RUN_DESCRIPTORS
    return max(CONNECTIONS_FLOOR, min(CONNECTIONS, per_run // 3))


def most_at_once(limit: int) -> int:
    """Runs at once that `limit` descriptors hold, each with CONNECTIONS_FLOOR connections
    (`connections_for`'s arithmetic): more, and runs past it are errored for want of one."""
    return max(0, (limit - OWN_DESCRIPTORS) // (RUN_DESCRIPTORS + 3 * CONNECTIONS_FLOOR))


def descriptor_limit() -> int:
    """This process's soft limit of open files (RLIMIT_NOFILE), a number however unlimited."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else soft


def share(concurrency: int | None, *, ending: int | None = None) -> int:
    """Cap each run's connections (`connections()`) from this process's descriptor limit
    (raised to its hard limit at start: agents/isolation.seal_this_process) and the runs
    it makes at once, so one run holding all of its own cannot keep another from
    starting (attack50: 128 held under a limit of 160 left run 3 no descriptor to start
    its agent). `concurrency`: a hub scope opening with that many runs at once;
    `ending`: one that opened with that many ends; the cap counts every scope still
    open (CONNECTIONS when none is). Returns the cap."""
    global _share
    if concurrency is not None:
        _open.append(concurrency)
    if ending is not None and ending in _open:
        _open.remove(ending)
    _share = connections_for(descriptor_limit(), sum(_open)) if _open else CONNECTIONS
    return _share


def connections() -> int:
    """Connections one run's listener and its proxy each hold at once now (`share`)."""
    return _share


def shared_connections() -> int:
    """Connections the experiment's one listener on the host's loopback (serve/http.py)
    holds at once now: `connections()` for each run at once. A run at `--isolation
    process` reaches passhat there, where a connection is taken before its token is read,
    so no run's own cap applies: one run holding 500 took every descriptor passhat had
    (attack54), and asyncio's accept loop printed a traceback per connection it could
    not take, thousands a second. Past this cap each is closed as it comes instead."""
    return _share * max(1, sum(_open))


EGRESS_PORT = 3128
"""The port of a sandboxed run's proxy to its allowed hosts, on the sandbox's 127.0.0.1
(its own network namespace: no other program's port)."""


def proxy_environ(port: int) -> dict[str, str]:
    """The variables HTTP clients read their proxy from; the run's own endpoints stay direct."""
    url = f"http://127.0.0.1:{port}"
    names = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
    return {**dict.fromkeys(names, url), "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}


REQUESTS = 8
"""Requests of one run the server reads and answers at once; the others wait their turn,
their bodies unread (uvicorn stops reading a connection whose request is not read), so a
run holding its connections full of half-sent 32 MiB bodies makes passhat hold at most
this many (it held every one: 4 GiB at CONNECTIONS)."""
Listen = Callable[[socket.socket], Awaitable[None]]
"""Serve on one more listening socket (one made in a sandbox's network namespace); it
owns the socket from the call on, and closes it when it cannot serve it."""


TOOL_CALLS = 10_000
"""Tool calls one command-agent run may make over MCP (a real agent makes tens)."""
ARGUMENT_BYTES = 4 << 20
"""Bytes (as JSON) of the names and arguments of one run's tool calls, all calls together
(the name as called is kept with the call, an unknown tool's too)."""
RESULT_BYTES = 32 << 20
"""Characters of the answers passhat keeps for one run's tool calls, all together."""
READ_BYTES = 4 << 30
"""Bytes of model requests one run may send passhat, all requests together (refused ones
too). Each request repeats the conversation: a long real run, 500 turns near a 1M-token
context, sends about 1 GiB; a run resending 32 MiB requests, each read and counted on
the event loop every run shares, is stopped after 128 of them."""
MESSAGES = 10_000
"""Messages one model request may bring (413 past it). A real agent sends hundreds, a
long one a few thousand (a 1M-token context holds about 2,000 tool turns); Anthropic's
API takes at most 100,000, OpenAI's names no number. passhat reads each message on the
event loop every run shares, and so does the experiment's model, which gets them all."""
VALUES = 500_000
"""JSON values (objects, arrays, keys, strings, numbers) one model request may bring,
counted before it is parsed (413 past it): parsing 1.1 million empty messages (5.8
million values in 32 MiB) held the event loop still 6 s; half a million take it about
0.1 s. A real request of MESSAGES messages with their content blocks and 128 tools brings
under 200,000."""
REFUSED = 4
"""Model requests of one run refused for their size (413: past MAX_BODY, VALUES or
MESSAGES) before the run is spent (`agent_flood`) and its later requests are refused
unread. Each was read and counted on the event loop every run shares (~0.6 s of
passhat's CPU for 32 MiB of empty messages, ~0.17 s for a megabyte of `0,`), bounded
only by READ_BYTES (~70 s of CPU a run at 32 MiB each, far more at a megabyte). A real
agent told its request is too large makes it no smaller by sending it again."""
MESSAGE_BYTES = 32 << 20
"""Bytes (as JSON) of the messages passhat keeps of one run's model requests, all together
(the run's transcript: what each request brings after its last assistant answer)."""


def json_size(value: Any) -> int:
    """Bytes of `value` as JSON: what a run's budget counts of a tool call's name and
    arguments, and of a model request's new messages."""
    from pydantic_core import to_json

    try:
        return len(to_json(value, fallback=str))
    except (ValueError, RecursionError):  # a value JSON cannot hold: counted as the store keeps it
        from passhat.store.columns import json_safe

        return len(to_json(json_safe(value)))


@dataclass(eq=False)
class ToolBudget:
    """What one run's tool calls over MCP and its model requests may make passhat keep
    (env.calls holds each call's arguments and result, the transcript each request's new
    messages, until the run is written, several times their size as Python objects, and
    writing them takes more). A call past TOOL_CALLS or ARGUMENT_BYTES is neither run nor
    kept; a result past RESULT_BYTES is the last kept; a model request whose messages take
    the run past MESSAGE_BYTES, or whose bytes take it past READ_BYTES, is neither sent to
    the model nor kept; the REFUSED-th request refused for its size spends it too. Once
    spent, the run is errored (`agent_flood`, its reason `spent`), its agent is stopped,
    and every further request of the run is refused unread."""

    calls: int = 0
    argument_bytes: int = 0
    result_bytes: int = 0
    message_bytes: int = 0
    read_bytes: int = 0
    spent: str | None = None
    """Why the budget is spent (None while it is not)."""
    refused: int = 0
    """Model requests refused for their size so far (REFUSED spends the budget)."""
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when it is spent: the run's agent is stopped then."""
    failed: str | None = None
    """Why passhat failed to serve one of the run's requests (its MCP server could not
    start): the run is passhat's failure (`passhat_error`), not its agent's."""

    def fail(self, why: str) -> None:
        if self.failed is None:
            self.failed = why

    def admit(self, argument_bytes: int) -> bool:
        """Whether one more call whose name and arguments take this many bytes may be run
        and kept."""
        if self.spent is None and self.calls >= TOOL_CALLS:
            self._spend(f"more than {TOOL_CALLS:,} tool calls")
        elif self.spent is None and self.argument_bytes + argument_bytes > ARGUMENT_BYTES:
            self._spend(
                f"tool-call names and arguments past {ARGUMENT_BYTES >> 20} MiB in all (call "
                f"{self.calls + 1} brought {argument_bytes:,} bytes to "
                f"{self.argument_bytes + argument_bytes:,})"
            )
        if self.spent is not None:
            return False
        self.calls += 1
        self.argument_bytes += argument_bytes
        return True

    def answered(self, result_chars: int) -> None:
        what = f"tool-call results past {RESULT_BYTES >> 20} MiB in all"
        self._count("result_bytes", result_chars, RESULT_BYTES, what)

    def admit_messages(self, size: int) -> bool:
        """Whether a model request's new messages (`size` bytes as JSON) may be kept."""
        if self.spent is None and self.message_bytes + size > MESSAGE_BYTES:
            self._spend(
                f"model-request messages past {MESSAGE_BYTES >> 20} MiB in all (a request "
                f"brought {size:,} bytes to {self.message_bytes + size:,})"
            )
        if self.spent is not None:
            return False
        self.message_bytes += size
        return True

    def admit_read(self, size: int) -> bool:
        """Whether `size` more bytes of a model request may be read (READ_BYTES)."""
        what = f"model requests past {READ_BYTES >> 30} GiB in all"
        return self._count("read_bytes", size, READ_BYTES, what)

    def refuse(self) -> None:
        """One more model request refused for its size (413); the REFUSED-th spends the
        run (that request is still answered 413, the later ones 429 unread)."""
        what = f"{REFUSED} model requests too large to read"
        self._count("refused", 1, REFUSED - 1, what)

    def _count(self, name: str, size: int, limit: int, what: str) -> bool:
        """`size` more of the total `name`; past `limit` the run is spent (`what`).
        Whether it is not spent."""
        total = getattr(self, name) + size
        setattr(self, name, total)
        if self.spent is None and total > limit:
            self._spend(what)
        return self.spent is None

    def _spend(self, what: str) -> None:
        self.spent = (
            f"the agent sent {what}, past what one run may make passhat keep; its later "
            "calls were neither run nor kept, and it was stopped"
        )
        self.stop.set()


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
    tools: ToolBudget = field(default_factory=ToolBudget)
    """What the run's tool calls may make passhat keep; spent: the run is `agent_flood`."""

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
