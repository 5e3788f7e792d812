"""Anthropic's messages API through the official `anthropic` SDK.

One `POST {base_url}/v1/messages` per call, with the SDK's own retries off
(`passhat.models.retry` retries and records). The neutral conversation maps to
the wire like this:

    system messages          the top-level `system` string (joined by blank lines)
    user                     a user message
    assistant + tool_calls   an assistant message: a text block, then tool_use blocks
    tool (is_error)          a tool_result block (with is_error) in a user message;
                             consecutive user-side messages are merged into one,
                             as the API wants all results of a turn together

Choices made here, as for the OpenAI provider:

- The key is read from the environment only (`api_key_env`, default
  ANTHROPIC_API_KEY), never shown in `repr`, `name`, `describe()` or an error
  message; the SDK's exception (its request carries the key) is neither the
  cause nor the context of ours.
  With `base_url` given and no key set, a placeholder is sent (a local proxy);
  with neither, `ConfigError`. ANTHROPIC_BASE_URL is not consulted.
- `max_tokens` is required by the API: it defaults to 4096 and shows in
  `describe()["params"]`; other params (temperature, top_p...) are sent as they are.
- A 2xx body that is not JSON or lacks `content` is a `TransientModelError`
  ("malformed response").
- Stop reasons are normalized: end_turn/stop_sequence → stop, tool_use →
  tool_calls, max_tokens → length; others pass through.
- Usage counts cache reads and writes as input tokens.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import anthropic

from passhat.errors import ConfigError, ModelError, TransientModelError
from passhat.models.base import CallContext, Message, ModelResponse, ToolCall, ToolSpec, Usage
from passhat.models.retry import error_for_status, redact

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MAX_TOKENS", "AnthropicModel"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096

_NO_KEY = "passhat-no-key"
"""Sent to a local endpoint when no key is set."""

_RESERVED = frozenset({"model", "messages", "system", "tools", "stream"})
"""Request fields passhat sets itself (or cannot parse): refused in params."""

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


class AnthropicModel:
    """A model behind Anthropic's messages API (or a compatible proxy)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        params: Mapping[str, Any] | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        timeout: float = 120.0,
    ) -> None:
        """Check the configuration; nothing is sent until the first `generate`.

        `model_name` is the model id; `base_url` the API root without `/v1`;
        `params` extra request fields (max_tokens defaults to 4096); `api_key_env`
        the variable holding the key; `timeout` seconds per call.
        """
        if not model_name:
            raise ConfigError(
                "anthropic model name is empty; write anthropic:MODEL, e.g. anthropic:claude-sonnet-4-5"
            )
        if not timeout > 0:
            raise ConfigError(f"anthropic timeout must be positive seconds, got {timeout!r}")
        self.model_name = model_name
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.params = {"max_tokens": DEFAULT_MAX_TOKENS, **_check_params(params)}
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        key = os.environ.get(api_key_env, "")
        if not key and base_url is None:
            raise ConfigError(
                f"anthropic:{model_name} needs an API key: set {api_key_env}, "
                "or give --base-url for a local endpoint that needs none"
            )
        self._key = key
        self._client: anthropic.AsyncAnthropic | None = None

    @property
    def name(self) -> str:
        return f"anthropic:{self.model_name}"

    def describe(self) -> dict[str, Any]:
        """Provider, model, endpoint, parameters and timeout, for the experiment record."""
        return {
            "provider": "anthropic",
            "model": self.model_name,
            "base_url": self.base_url,
            "params": dict(self.params),
            "timeout": self.timeout,
        }

    def __repr__(self) -> str:
        return (
            f"AnthropicModel(model_name={self.model_name!r}, base_url={self.base_url!r}, "
            f"params={self.params!r}, timeout={self.timeout!r})"
        )

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], ctx: CallContext
    ) -> ModelResponse:
        """One messages call; TransientModelError / PermanentModelError on failure."""
        rest = self.request_body(messages, tools, ctx)
        model, wire_messages, max_tokens = (
            rest.pop("model"),
            rest.pop("messages"),
            rest.pop("max_tokens"),
        )
        try:
            raw = await self._sdk().messages.with_raw_response.create(
                model=model, messages=wire_messages, max_tokens=max_tokens, extra_body=rest
            )
            body = raw.http_response.text
        except (
            anthropic.APIStatusError,
            anthropic.APIConnectionError,
            anthropic.APIResponseValidationError,
        ) as error:
            failure = self._failure(error)
        else:
            return parse_message(body, source=self.name, secret=self._key)
        # Raised outside the handler so the SDK's error (its request carries the key)
        # is neither the cause nor the context of ours.
        raise failure

    def _failure(
        self,
        error: anthropic.APIStatusError
        | anthropic.APIConnectionError
        | anthropic.APIResponseValidationError,
    ) -> ModelError:
        if isinstance(error, anthropic.APIStatusError):
            return error_for_status(
                self.name,
                error.status_code,
                error.response.text,
                error.response.headers,
                secret=self._key,
            )
        if isinstance(error, anthropic.APITimeoutError):
            return TransientModelError(f"{self.name}: no response within {self.timeout:g}s")
        if isinstance(error, anthropic.APIConnectionError):
            cause = error.__cause__ or error
            detail = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
            return TransientModelError(
                redact(f"{self.name}: connection failed: {detail}", self._key)
            )
        return TransientModelError(
            redact(f"{self.name}: malformed response: {error.message}", self._key)
        )

    def request_body(
        self, messages: list[Message], tools: list[ToolSpec], ctx: CallContext
    ) -> dict[str, Any]:
        """The JSON body sent for this call (without the key, which is a header)."""
        system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": _wire_messages([m for m in messages if m.role != "system"]),
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools
            ]
        body.update(self.params)
        return body

    async def aclose(self) -> None:
        """Close the HTTP client; the model can still be used (a new one is made)."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def __aenter__(self) -> AnthropicModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _sdk(self) -> anthropic.AsyncAnthropic:
        # Made on first use, inside the event loop that will drive it.
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._key or _NO_KEY,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
            )
        return self._client


def parse_message(text: str, *, source: str, secret: str = "") -> ModelResponse:
    """Map a messages API body to a ModelResponse; malformed → TransientModelError.

    `secret` is blanked out of error messages.
    """

    def malformed(what: str) -> TransientModelError:
        return TransientModelError(redact(f"{source}: malformed response: {what}", secret))

    try:
        data = json.loads(text)
    except ValueError:
        snippet = text.strip()[:80]
        raise malformed(f"body is not JSON: {snippet!r}") from None
    if not isinstance(data, dict):
        raise malformed("body is not a JSON object")
    blocks = data.get("content")
    if not isinstance(blocks, list):
        error = data.get("error")
        raise malformed(f"no content (error: {error})" if error else "no content")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for index, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use":
            call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
            if not (isinstance(call_id, str) and isinstance(name, str)):
                raise malformed(f"content[{index}] tool_use has no id or name")
            if not isinstance(arguments, dict):
                raise malformed(f"content[{index}] tool_use input is not an object")
            calls.append(ToolCall(call_id, name, arguments))
        elif kind is None or kind == "text":
            raise malformed(f"content[{index}] is not a content block")
        # thinking and other block kinds carry nothing the neutral message holds
    reason = data.get("stop_reason")
    stop = _STOP_REASONS.get(reason, reason) if isinstance(reason, str) else "stop"
    message = Message(role="assistant", content="".join(texts), tool_calls=tuple(calls))
    return ModelResponse(message=message, usage=_usage(data.get("usage")), stop_reason=stop)


def _check_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    checked = dict(params or {})
    reserved = sorted(_RESERVED & checked.keys())
    if reserved:
        raise ConfigError(f"anthropic params {', '.join(reserved)} are set by passhat; remove them")
    try:
        json.dumps(checked)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"anthropic params must be JSON values: {error}") from None
    max_tokens = checked.get("max_tokens", DEFAULT_MAX_TOKENS)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ConfigError(f"anthropic max_tokens must be a positive integer, got {max_tokens!r}")
    return checked


def _wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if wire and wire[-1]["role"] == role == "user":
            wire[-1]["content"] = _as_blocks(wire[-1]["content"]) + blocks
        elif role == "user" and message.role == "user":
            wire.append({"role": "user", "content": message.content})
        else:
            wire.append({"role": role, "content": blocks})
    return wire


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
        }
        if message.is_error:
            result["is_error"] = True
        return [result]
    blocks: list[dict[str, Any]] = []
    if message.content or not message.tool_calls:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in message.tool_calls
    )
    return blocks


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _usage(value: object) -> Usage:
    if not isinstance(value, dict):
        return Usage()
    read = sum(
        _count(value.get(k))
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return Usage(read, _count(value.get("output_tokens")))


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
