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

from collections.abc import Mapping
from typing import Any

import anthropic

from passhat.errors import ConfigError, TransientModelError
from passhat.models.base import CallContext, Message, ModelResponse, ToolCall, ToolSpec, Usage
from passhat.models.provider import ProviderModel, json_body
from passhat.models.provider import malformed as _malformed

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MAX_TOKENS", "AnthropicModel"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096


_RESERVED = frozenset({"model", "messages", "system", "tools", "stream"})
"""Request fields passhat sets itself (or cannot parse): refused in params."""

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


class AnthropicModel(ProviderModel["anthropic.AsyncAnthropic"]):
    """A model behind Anthropic's messages API (or a compatible proxy).

    `base_url` is the API root without `/v1`; `max_tokens` defaults to 4096; the
    key comes from ANTHROPIC_API_KEY unless `api_key_env` names another.
    """

    provider = "anthropic"
    default_base_url = DEFAULT_BASE_URL
    key_env = "ANTHROPIC_API_KEY"
    example = "anthropic:claude-sonnet-4-5"
    reserved = _RESERVED

    def _check_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        checked = {"max_tokens": DEFAULT_MAX_TOKENS, **super()._check_params(params)}
        max_tokens = checked["max_tokens"]
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ConfigError(
                f"anthropic max_tokens must be a positive integer, got {max_tokens!r}"
            )
        return checked

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
        create = self._sdk().messages.with_raw_response.create
        body = await self._raw_text(
            create(model=model, messages=wire_messages, max_tokens=max_tokens, extra_body=rest),
            anthropic,
        )
        return parse_message(body, source=self.name, secret=self._key)

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

    def _new_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(**self._client_options())


def parse_message(text: str, *, source: str, secret: str = "") -> ModelResponse:
    """Map a messages API body to a ModelResponse; malformed → TransientModelError.

    `secret` is blanked out of error messages.
    """

    def malformed(what: str) -> TransientModelError:
        return _malformed(source, secret, what)

    data = json_body(text, source=source, secret=secret)
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
