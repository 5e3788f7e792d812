"""The ASGI app every command-agent run is served by: the MCP endpoint and the model proxy.

/mcp                    MCP, Streamable HTTP (stateless, JSON responses)
/v1/chat/completions    OpenAI chat completions (and /chat/completions)
/v1/messages            Anthropic messages

One app serves every run of an experiment (serve/hub.py): each request finds its
run's environment and model proxy under the scope key RUN, put there by the hub
from the request's token.

A model request is bounded before it is parsed, since every run's requests are read on
the same event loop: MAX_BODY bytes, VALUES JSON values (counted with the loop turning),
MESSAGES messages (413 past any), and its run's READ_BYTES in all (429, `agent_flood`);
its run's REFUSED-th request refused for its size spends the run too.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from passhat.serve import anthropic_proxy as anthropic
from passhat.serve.endpoints import MESSAGES, RUN, VALUES
from passhat.serve.lazy_mcp import MCP_PATH, LazyMcp, lifespan, warming
from passhat.serve.proxy import ModelProxy, completion, completion_chunks, error_body

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from passhat.serve.endpoints import ToolBudget

MAX_BODY = 32 * 1024 * 1024
"""Largest model request read (bytes): a conversation, not a flood (Anthropic's API takes
32 MB too)."""
TOO_LARGE = "request too large"
"""What a request past MAX_BODY is told (as OpenAI's and Anthropic's APIs word it)."""


class TooLarge(Exception):
    """A request past MAX_BODY, VALUES or MESSAGES (HTTP 413); its message says which."""


class Spent(Exception):
    """A request that takes its run past endpoints.READ_BYTES (HTTP 429, `agent_flood`);
    its message is the run's budget's reason."""


_IN_STRING = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
"""A string's characters up to its closing quote (escapes taken whole, whatever follows
the backslash: without DOTALL a backslash before a newline stopped it for ever)."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
"""A whole string, its quotes with it."""
_CLOSED = re.compile(rb'(?:[^"]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.DOTALL)
"""What lies outside strings and the strings that close, up to a string that does not
(or the end): a window's whole work in one C call, not one step a value."""
WINDOW = 1 << 18
"""Bytes one step of the count reads at most (a regular expression holds the loop for
its whole call: 30 MiB of escapes took 1 s in one, 256 KiB of them take 9 ms)."""
SLICE_S = 0.01
"""Seconds the count runs before it lets the event loop turn."""


def _marks_outside(raw: bytes, pos: int, end: int) -> int:
    """The marks `[{,:` in raw[pos:end] outside its strings (each of them closed there)."""
    return marks(_STRING.sub(b"", raw[pos:end]))


async def count_values(raw: bytes) -> int:
    """The JSON values and keys in `raw` (each begins after `[`, `{`, `,` or `:` outside
    a string, the top one aside), counted up to VALUES: what json.loads would make. The
    count reads a window (WINDOW) a step, its strings that close there and what lies
    between them at once (_CLOSED; a string longer than that a window at a time), and
    lets the event loop turn every SLICE_S; json.loads, a C call, would not."""
    size, pos, count, in_string = len(raw), 0, 0, False
    turn = time.perf_counter() + SLICE_S
    while count < VALUES:
        if time.perf_counter() > turn:
            await asyncio.sleep(0)
            turn = time.perf_counter() + SLICE_S
        end = min(pos + WINDOW, size)
        if in_string:
            pos = _IN_STRING.match(raw, pos, end).end()  # type: ignore[union-attr]
            if pos < size and raw[pos] == 0x22:
                in_string, pos = False, pos + 1
            elif pos >= size - 1:  # a string never closed: not JSON, as json.loads says
                return count
            continue  # else the window ended (perhaps at an escape's backslash): go on
        closed = _CLOSED.match(raw, pos, end).end()  # type: ignore[union-attr]
        count += _marks_outside(raw, pos, closed)
        if closed == size:
            break
        if closed == pos:  # a string that does not close in this window: read it on
            in_string, pos = True, pos + 1
        else:
            pos = closed
    return min(count, VALUES)


def marks(raw: bytes) -> int:
    """The bytes `[{,:` in `raw`: a bound on its JSON values that is quick (30 ms for 32
    MiB, taken a chunk at a time as the body comes) but counts those in strings too."""
    return sum(raw.count(c) for c in (b"[", b"{", b",", b":"))


async def bounded(raw: bytes, bound: int) -> None:
    """TooLarge when `raw` brings VALUES JSON values or more; `bound` is its `marks`:
    only past it are the values counted one by one."""
    if bound < VALUES:
        return
    if await count_values(raw) >= VALUES:
        raise TooLarge(
            f"the request brings more than {VALUES:,} JSON values; passhat's proxy reads "
            "at most that many in one model request"
        )


def check_messages(body: Any) -> None:
    """TooLarge when the request brings more than MESSAGES messages."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if isinstance(messages, list) and len(messages) > MESSAGES:
        raise TooLarge(
            f"the request brings {len(messages):,} messages; passhat's proxy reads at most "
            f"{MESSAGES:,} in one model request"
        )


GONE = 400
"""The status of a request whose agent closed its connection before sending the whole
body: nobody reads it (uvicorn sends nothing on a closed connection), and the request is
answered rather than left to uvicorn, which logged each one on passhat's stderr as an
exception in the app, with its traceback (an agent could fill passhat's output with them)."""


async def read_capped(request: Request) -> tuple[bytes, int]:
    """The request's body, read as it streams in, never whole first (a 400 MB body
    would otherwise sit in passhat's memory before it is refused), and its `marks`;
    TooLarge past MAX_BODY, Spent once the run's requests pass READ_BYTES."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise TooLarge(TOO_LARGE)
    budget: ToolBudget = request.scope[RUN].tools
    raw = bytearray()
    bound = 0
    async for chunk in request.stream():
        raw += chunk
        bound += marks(chunk)
        if len(raw) > MAX_BODY:
            if not budget.admit_read(len(raw)):  # refused, yet read: counted as well
                raise Spent(budget.spent)
            raise TooLarge(TOO_LARGE)
    # counted once read whole: answered mid-body, an agent's SDK saw its connection reset
    if not budget.admit_read(len(raw)):
        raise Spent(budget.spent)
    return bytes(raw), bound


async def read_request(request: Request) -> tuple[ModelProxy, Any]:
    """What a model endpoint reads of a request: the model proxy of the run its token
    names, and its body as JSON. TooLarge past MAX_BODY, VALUES or MESSAGES, ValueError
    when it is not JSON: each endpoint answers them in its own API's words. What is read
    on the event loop every run shares is bounded first (`bounded`, then MESSAGES before
    any message is read)."""
    proxy: ModelProxy = request.scope[RUN].proxy
    try:
        raw, bound = await read_capped(request)
        await bounded(raw, bound)
        try:
            body = json.loads(raw)
        except RecursionError:  # nested past json's limit (~1,000 levels): a 400, not a 500
            raise ValueError("the body is JSON nested too deep to read") from None
        check_messages(body)
    except TooLarge:
        request.scope[RUN].tools.refuse()  # the run's REFUSED-th spends it (endpoints.py)
        raise
    return proxy, body


async def chat_completions(request: Request) -> Response:
    """OpenAI's `POST /v1/chat/completions` (and `/chat/completions`)."""
    try:
        proxy, body = await read_request(request)
    except TooLarge as error:
        return JSONResponse(error_body(str(error), "invalid_request_error"), 413)
    except Spent as error:
        return JSONResponse(error_body(str(error), "agent_flood"), 429)
    except ClientDisconnect:
        return Response(status_code=GONE)
    except ValueError:
        return JSONResponse(error_body("the body is not JSON", "invalid_request_error"), 400)
    status, answer = await proxy.answer(body, request.scope[RUN].tools)
    if isinstance(answer, dict):
        return JSONResponse(answer, status)
    turn = proxy.ctx.turns - 1
    if isinstance(body, dict) and body.get("stream"):
        options = body.get("stream_options") or {}
        chunks = completion_chunks(
            answer,
            model=proxy.model_name,
            turn=turn,
            usage=bool(isinstance(options, dict) and options.get("include_usage")),
        )

        async def events() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")
    return JSONResponse(completion(answer, model=proxy.model_name, turn=turn))


async def messages(request: Request) -> Response:
    """Anthropic's `POST /v1/messages`, answered by the same proxy."""
    try:
        proxy, body = await read_request(request)
        shaped = anthropic.openai_shaped(body) if isinstance(body, dict) else body
    except TooLarge as error:
        return JSONResponse(anthropic.error(413, str(error)), 413)
    except Spent as error:
        return JSONResponse(anthropic.error(429, str(error)), 429)
    except ClientDisconnect:
        return Response(status_code=GONE)
    except (ValueError, AttributeError, TypeError) as error:
        return JSONResponse(anthropic.error(400, f"passhat cannot read this request: {error}"), 400)
    status, answer = await proxy.answer(shaped, request.scope[RUN].tools)
    if isinstance(answer, dict):
        return JSONResponse(anthropic.error_from_openai(status, answer), status)
    turn = proxy.ctx.turns - 1
    return JSONResponse(anthropic.message(answer, model=proxy.model_name, turn=turn))


def build_app() -> Any:
    """MCP at /mcp and chat completions at /v1/chat/completions, for the run each
    request's scope names (the hub checks the token before). The MCP server is made
    from the first request on (serve/lazy_mcp.py)."""
    mcp = LazyMcp()
    routes = [
        Route(MCP_PATH, endpoint=mcp),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
    ]
    return warming(Starlette(routes=routes, lifespan=lambda app: lifespan(mcp)), mcp)
