"""A scripted HTTP server on 127.0.0.1 that speaks OpenAI's and Anthropic's wire formats.

Tests drive the real SDKs against it, over real HTTP, instead of mocking them.
Every request takes the next step from one queue; a step is a reply (rendered in
the format of the endpoint that was called), a verbatim body, or an injected
failure. Every request is recorded for assertions.

    server.fail(429, retry_after=1, times=2)          # two rate limits...
    server.reply(tool_calls=[call("get_ticket", {"key": "T-1"}, id="c1")])
    server.reply("done", usage=(30, 4))               # ...then two answers
    model = OpenAIModel("m", base_url=server.openai_url)
    ...
    assert server.requests[-1].body["messages"][-1]["role"] == "tool"

Endpoints: POST /v1/chat/completions (OpenAI; base URL `server.openai_url`) and
POST /v1/messages (Anthropic; base URL `server.anthropic_url`). Test modules
import it as `from fakeserver import FakeServer, call` (pytest puts tests/ on
sys.path) and get the `fake_server` fixture with `pytest_plugins = ["fakeserver"]`.

PYTEST_DONT_REWRITE: test modules import this file before pytest registers it
as a plugin, too late for assertion rewriting; the marker tells pytest not to try.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The JSON body, parsed; None when it was not JSON."""
    raw: bytes


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call in a scripted reply; `arguments` as a str is sent verbatim (OpenAI)."""

    name: str
    arguments: dict[str, Any] | str
    id: str


def call(name: str, arguments: dict[str, Any] | str, id: str | None = None) -> ScriptedCall:
    """A tool call for `FakeServer.reply`; the id defaults to `call_<name>`."""
    return ScriptedCall(name, arguments, id or f"call_{name}")


@dataclass(frozen=True)
class _Step:
    status: int = 200
    text: str = ""
    tool_calls: Sequence[ScriptedCall] = ()
    usage: tuple[int, int] = (0, 0)
    stop_reason: str | None = None
    body: Any = None
    """A verbatim JSON body, instead of a rendered reply."""
    raw: bytes | None = None
    """Verbatim bytes, instead of any JSON."""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    """For an error status: the provider's message."""
    delay: float = 0.0
    reset: bool = False


class FakeServer:
    """The scripted server; start with `with FakeServer() as server:` or the fixture."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []
        """Requests nothing was scripted for, to unknown paths, and handler crashes.

        The `fake_server` fixture fails the test if any are left at teardown; a test
        that means to cause one clears the list after asserting on it."""
        self._steps: deque[_Step] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting --------------------------------------------------------------

    def reply(
        self,
        text: str = "",
        *,
        tool_calls: Sequence[ScriptedCall] = (),
        usage: tuple[int, int] = (10, 5),
        stop_reason: str | None = None,
        delay: float = 0.0,
        times: int = 1,
    ) -> FakeServer:
        """Answer with an assistant message: text and/or tool calls, usage (in, out).

        `stop_reason` defaults to the provider's word for "tool calls" or "stop".
        `delay` (seconds) makes the answer slow.
        """
        step = _Step(
            text=text,
            tool_calls=tuple(tool_calls),
            usage=usage,
            stop_reason=stop_reason,
            delay=delay,
        )
        return self._push(step, times)

    def reply_json(self, body: Any, *, status: int = 200, times: int = 1) -> FakeServer:
        """Answer with exactly this JSON body."""
        return self._push(_Step(status=status, body=body), times)

    def fail(
        self,
        status: int,
        *,
        message: str | None = None,
        retry_after: float | str | None = None,
        delay: float = 0.0,
        times: int = 1,
    ) -> FakeServer:
        """Answer with an HTTP error in the provider's error shape.

        `retry_after` sets the Retry-After header (seconds, or an HTTP date as str).
        """
        headers = {} if retry_after is None else {"Retry-After": _header_value(retry_after)}
        error = message or f"scripted {status}"
        return self._push(_Step(status=status, headers=headers, error=error, delay=delay), times)

    def malformed(
        self,
        raw: bytes | str = b"<html><body>502 Bad Gateway</body></html>",
        *,
        content_type: str = "text/html",
        status: int = 200,
        times: int = 1,
    ) -> FakeServer:
        """Answer with a body that is not what the SDK expects (default: an HTML page)."""
        data = raw.encode() if isinstance(raw, str) else raw
        return self._push(_Step(status=status, raw=data, content_type=content_type), times)

    def reset(self, *, times: int = 1) -> FakeServer:
        """Read the request, then reset the connection without answering."""
        return self._push(_Step(reset=True), times)

    @property
    def pending(self) -> int:
        """Steps not yet consumed."""
        with self._lock:
            return len(self._steps)

    # -- addresses --------------------------------------------------------------

    @property
    def url(self) -> str:
        """http://127.0.0.1:PORT"""
        if self._httpd is None:
            raise RuntimeError("the fake server is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK (with /v1)."""
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        """Base URL for the Anthropic SDK (it adds /v1 itself)."""
        return self.url

    # -- lifecycle --------------------------------------------------------------

    def start(self) -> FakeServer:
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fakeserver",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow answers still waiting are dropped; handler threads joined."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- serving (handler threads) ----------------------------------------------

    def _push(self, step: _Step, times: int) -> FakeServer:
        with self._lock:
            self._steps.extend([step] * times)
        return self

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.requests.append(RecordedRequest(handler.command, handler.path, headers, body, raw))
            number = len(self.requests)
            step = self._steps.popleft() if self._steps else None
        flavour = _flavour(handler.path)
        if flavour is None or step is None:
            # A test that did not expect this request: answer, and fail it at teardown.
            problem = (
                f"fake server: no route {handler.path}"
                if flavour is None
                else f"fake server: nothing scripted for request {number}"
            )
            self.errors.append(AssertionError(problem))
            status = 404 if flavour is None else 500
            _send(handler, status, _error_body(flavour, status, problem))
            return
        if step.delay and self._stopping.wait(step.delay):
            return
        if step.reset:
            _reset(handler)
            return
        if step.raw is not None:
            payload = step.raw
        elif step.body is not None:
            payload = json.dumps(step.body).encode()
        elif step.status >= 400:
            payload = _error_body(flavour, step.status, step.error or "")
        else:
            payload = json.dumps(_render(flavour, step, number)).encode()
        _send(handler, step.status, payload, step.content_type, step.headers)


class _HTTPServer(ThreadingHTTPServer):
    # Handler threads are joined on close; slow answers wake up on stop.
    daemon_threads = False
    block_on_close = True
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        # The client gave up (a timeout test): nothing to report.
        if error is not None and not isinstance(error, ConnectionError):
            self.fake.errors.append(error)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def do_POST(self) -> None:
        self.server.fake._handle(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _flavour(path: str) -> str | None:
    path = path.split("?", 1)[0]
    return {OPENAI_PATH: "openai", ANTHROPIC_PATH: "anthropic"}.get(path)


def _render(flavour: str, step: _Step, number: int) -> dict[str, Any]:
    if flavour == "openai":
        return _render_openai(step, number)
    return _render_anthropic(step, number)


def _render_openai(step: _Step, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
    if step.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.arguments
                    if isinstance(c.arguments, str)
                    else json.dumps(c.arguments),
                },
            }
            for c in step.tool_calls
        ]
    prompt, completion = step.usage
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": step.stop_reason or ("tool_calls" if step.tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _render_anthropic(step: _Step, number: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if step.text:
        content.append({"type": "text", "text": step.text})
    content.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
        for c in step.tool_calls
    )
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": content,
        "stop_reason": step.stop_reason or ("tool_use" if step.tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": step.usage[0], "output_tokens": step.usage[1]},
    }


def _error_body(flavour: str | None, status: int, message: str) -> bytes:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }.get(status, "api_error")
    if flavour == "anthropic":
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    return json.dumps({"error": {"message": message, "type": kind, "code": None}}).encode()


def _send(
    handler: _Handler,
    status: int,
    payload: bytes,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> None:
    # One request per connection: no idle keep-alive socket outlives a test.
    handler.close_connection = True
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(payload)))
        handler.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)
    except ConnectionError:
        pass  # the client gave up waiting


def _reset(handler: _Handler) -> None:
    # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
    handler.close_connection = True
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()


def _header_value(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return str(int(value)) if float(value).is_integer() else str(value)


@contextmanager
def refused_url() -> Iterator[str]:
    """A URL on 127.0.0.1 whose connections are refused for as long as the block lasts: a
    port bound and never listened on (the kernel answers a connection with a reset). Not a
    stopped server's port, which another test's server may take in the meantime (xdist
    workers and other processes pick ports from the same pool)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        host, port = held.getsockname()[:2]
        yield f"http://{host!s}:{port}"


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    """A running FakeServer; at teardown, fails the test if `errors` is not empty."""
    with FakeServer() as server:
        yield server
    assert not server.errors, f"fake server: {server.errors!r}"
