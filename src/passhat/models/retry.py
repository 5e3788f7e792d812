"""Retry policy for model calls: what is worth retrying, how long to wait, the loop.

Providers turn every failure into one of two errors (see `passhat.errors`):

    HTTP 429, 408, 409, 5xx      TransientModelError (retry_after from Retry-After),
                                 unless the body says the request is wrong or the
                                 quota spent (context length, validation, quota)
    timeouts, resets, refusals   TransientModelError
    malformed 2xx body           TransientModelError (a proxy or server hiccup)
    any other 4xx (400, 401,
      403, 404, 422...)          PermanentModelError with the provider's message

`error_for_status` and `parse_retry_after` are the shared half of that mapping;
`generate_with_retry` is the loop the runner calls. SDK clients are built with
their own retries off so that every retry happens here and is recorded on the run.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from passhat.errors import ModelError, PermanentModelError, TransientModelError
from passhat.models.base import CallContext, Message, Model, ModelResponse, ToolSpec

__all__ = [
    "error_for_status",
    "generate_with_retry",
    "is_transient",
    "is_transient_status",
    "parse_retry_after",
    "provider_message",
    "redact",
]

_TRANSIENT_4XX = frozenset({408, 409, 429})
"""Request timeout, conflict (lock contention) and rate limit: the server may say yes later."""

_MAX_DETAIL = 500
"""Longest provider message kept in an error; bodies can be whole HTML pages."""


def is_transient_status(status: int) -> bool:
    """True for HTTP statuses worth retrying: 408, 409, 429 and every 5xx."""
    return status in _TRANSIENT_4XX or status >= 500


def parse_retry_after(
    headers: Mapping[str, str], *, now: Callable[[], datetime] | None = None
) -> float | None:
    """Seconds the server asked us to wait, or None when it did not say.

    Reads `retry-after-ms` (OpenAI's precise variant) first, then `Retry-After` as
    delta-seconds or an HTTP date (RFC 9110). Dates in the past give 0.0; values
    that are neither give None. `headers` must look names up case-insensitively
    (httpx headers do) or use lower-case names.
    """
    millis = _finite_float(headers.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _finite_float(value)
    if seconds is None:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or _utcnow)()).total_seconds()
    return max(0.0, seconds)


def provider_message(body: str) -> str:
    """The human-readable error message in a provider's error body.

    Understands OpenAI's and Anthropic's `{"error": {"message": ...}}`, the bare
    `{"error": "..."}` of llama.cpp and Ollama, and FastAPI's `{"detail": ...}`
    (vLLM); anything else is returned as text, shortened.
    """
    text = body.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            error = error.get("message") or error
        for found in (error, data.get("message"), data.get("detail")):
            if isinstance(found, str) and found:
                return _shorten(found)
            if found:
                return _shorten(json.dumps(found, ensure_ascii=False))
    return _shorten(text) or "(empty body)"


def error_for_status(
    source: str, status: int, body: str, headers: Mapping[str, str], *, secret: str = ""
) -> ModelError:
    """The error for an HTTP error response, with the provider's message and status.

    `source` names the model (`openai:gpt-4o`) and starts the message; `secret`
    (the API key) is blanked out of the message in case a server echoes it.
    """
    message = redact(f"{source}: HTTP {status}: {provider_message(body)}", secret)
    if is_transient(status, body):
        return TransientModelError(message, retry_after=parse_retry_after(headers))
    return PermanentModelError(message)


_PERMANENT_BODY = re.compile(
    r"context[ _-]?length|context[ _-]window|maximum context|too many tokens|"
    r"insufficient[ _-]quota|billing|quota exceeded|exceeded your current quota|"
    r"validation error|input should be|field required|"
    r"not supported|unsupported|does not support|"
    r"model[^.]{0,40}(not found|does not exist)|unknown model|no such model",
    re.IGNORECASE,
)
"""Words of an error body that asking again cannot change: the request itself is
wrong (llama-cpp-python answers a validation error with 500), or the quota is spent
(OpenAI's 429 insufficient_quota)."""

_TRANSIENT_BODY = re.compile(
    r"overloaded|try again|temporarily|currently unavailable|server is busy|"
    r"model is loading|loading model|rate[ _-]?limit",
    re.IGNORECASE,
)
"""Words of a 4xx body saying the server will say yes later."""


def is_transient(status: int, body: str) -> bool:
    """Worth retrying? By status first (408, 409, 429, 5xx), corrected by the body:
    a body that says the request is wrong or the quota spent is permanent whatever
    the status, and a 4xx body that says "overloaded, try again" is transient."""
    text = provider_message(body)  # the message, not the type: every OpenAI 400 is
    # "invalid_request_error", overloaded or not
    if _PERMANENT_BODY.search(text):
        return False
    return is_transient_status(status) or bool(_TRANSIENT_BODY.search(text))


def redact(text: str, secret: str) -> str:
    """`text` with every occurrence of `secret` replaced by `***`."""
    return text.replace(secret, "***") if secret else text


async def generate_with_retry(
    model: Model,
    messages: list[Message],
    tools: list[ToolSpec],
    ctx: CallContext,
    *,
    max_retries: int = 4,
    base_delay: float = 0.5,
    max_delay: float = 30.0,
    max_retry_after: float = 300.0,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: Callable[[], float] = random.random,
    record: list[dict[str, Any]] | None = None,
) -> tuple[ModelResponse, list[dict[str, Any]]]:
    """Call `model.generate`, retrying transient failures; return the answer and the retries.

    Before retry n (0-based) it waits `rng() * min(max_delay, base_delay * 2**n)`
    ("full jitter"), and never less than the error's `retry_after`; when the server
    could not be reached (`unreachable`: refused, reset) it waits
    `min(max_delay, 2 * base_delay * 2**n)` without jitter, as a restart takes seconds. A server that
    asks for more than `max_retry_after` seconds (a spent daily quota, say) is not
    waited for: that error is raised at once rather than stalling the run.
    `PermanentModelError` is raised at once; after `max_retries` retries the last
    `TransientModelError` is raised. Each retry is recorded as
    `{"attempt", "error", "message", "retry_after", "waited"}`, where `attempt` is
    the 1-based number of the call that failed and `waited` the seconds slept (fewer
    than planned when the wait is cut short: the run given up or cancelled).
    Pass `record` to have them appended to your list as they happen: when the
    call finally fails, the retries it made are still there to store on the run.
    """
    if max_retries < 0 or base_delay < 0 or max_delay < 0 or max_retry_after < 0:
        raise ValueError("max_retries, base_delay, max_delay and max_retry_after must be >= 0")
    retries: list[dict[str, Any]] = [] if record is None else record
    attempt = 0
    while True:
        attempt += 1
        try:
            return await model.generate(messages, tools, ctx), retries
        except TransientModelError as error:
            asked = error.retry_after
            if attempt > max_retries or (asked is not None and asked > max_retry_after):
                raise
            ceiling = min(max_delay, base_delay * 2 ** (attempt - 1))
            # a server that refuses connections is usually restarting: it needs the whole
            # wait, twice over, not a jittered share that may be a few milliseconds
            backoff = min(max_delay, 2 * ceiling) if error.unreachable else rng() * ceiling
            waited = max(backoff, asked or 0.0)
            retry: dict[str, Any] = {
                "attempt": attempt,
                "error": type(error).__name__,
                "message": str(error),
                "retry_after": asked,
                "waited": waited,
            }
            if error.abandoned:  # given up at --call-timeout: billed, never seen
                retry["abandoned"] = True
            retries.append(retry)
            started = time.monotonic()
            try:
                await sleep(waited)
            except BaseException:
                # the wait was cut short (the run was given up, or cancelled): the retry
                # records the seconds slept, not the seconds planned
                retry["waited"] = round(time.monotonic() - started, 3)
                raise


def _finite_float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _shorten(text: str) -> str:
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _utcnow() -> datetime:
    return datetime.now(UTC)
