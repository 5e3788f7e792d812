"""OpenAI-compatible chat completions: OpenAI itself, vLLM, Ollama, llama.cpp's server.

One `POST {base_url}/chat/completions` per call through the official `openai`
SDK, with the SDK's own retries off (`passhat.models.retry` retries and records).

Choices made here:

- The key is read from the environment only (`api_key_env`, default
  OPENAI_API_KEY) and is never shown: not in `repr`, `name`, `describe()` nor any
  error message (a server that echoes it gets it blanked). The SDK's exception,
  whose request carries the key, is neither the cause nor the context of ours.
- A local endpoint needs no key: with `base_url` given and the variable unset, a
  placeholder key is sent. With neither, `ConfigError`.
- `base_url` defaults to OpenAI's; OPENAI_BASE_URL is deliberately not consulted,
  so the endpoint recorded by `describe()` is the one called.
- `params` (temperature, max_tokens, top_p...) go into the request body as they
  are. `CallContext.seed` is sent as `seed` unless `params` sets one.
- Tool call arguments that are not a JSON object (the model wrote broken JSON)
  are kept as `{"_raw": "<what it wrote>"}` rather than failing the call: the
  environment answers "the arguments were not valid JSON: ...", and the run
  records what the model did. Sent back in a later turn, `_raw` goes out verbatim.
- An assistant message with tool calls and no text goes out with `"content": ""`,
  not null: llama.cpp-style servers reject null (HTTP 500).
- A 2xx body that is not JSON or lacks the fields of a completion is a
  `TransientModelError` ("malformed response"): it comes from proxies and
  overloaded servers and usually goes away when asked again.
- `is_error` on a tool message has no OpenAI field; the content says it.
"""

from __future__ import annotations

import json
from typing import Any

import openai

from passhat.errors import TransientModelError
from passhat.models.base import (
    RAW_ARGUMENTS,
    CallContext,
    Message,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
)
from passhat.models.provider import ProviderModel, json_body
from passhat.models.provider import malformed as _malformed

__all__ = ["DEFAULT_BASE_URL", "RAW_ARGUMENTS", "OpenAIModel"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"

_RESERVED = frozenset({"model", "messages", "tools", "stream", "n"})
"""Request fields passhat sets itself (or cannot parse): refused in params."""


class OpenAIModel(ProviderModel["openai.AsyncOpenAI"]):
    """A model behind an OpenAI-compatible chat completions endpoint.

    `base_url` is the API root including `/v1` (e.g. http://localhost:11434/v1 for
    Ollama); the key comes from OPENAI_API_KEY unless `api_key_env` names another.
    """

    provider = "openai"
    default_base_url = DEFAULT_BASE_URL
    key_env = "OPENAI_API_KEY"
    example = "openai:gpt-4o"
    reserved = _RESERVED

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], ctx: CallContext
    ) -> ModelResponse:
        """One chat completion; TransientModelError / PermanentModelError on failure."""
        # Only model and messages go through the SDK's typed arguments; the rest is
        # sent as it is, so any server-specific parameter passes untouched.
        rest = self.request_body(messages, tools, ctx)
        model, wire_messages = rest.pop("model"), rest.pop("messages")
        create = self._sdk().chat.completions.with_raw_response.create
        body = await self._raw_text(
            create(model=model, messages=wire_messages, extra_body=rest), openai
        )
        return parse_completion(body, source=self.name, turn=ctx.turn, secret=self._key)

    def request_body(
        self, messages: list[Message], tools: list[ToolSpec], ctx: CallContext
    ) -> dict[str, Any]:
        """The JSON body sent for this call (without the key, which is a header)."""
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": [_wire_message(m) for m in messages],
        }
        if tools:
            body["tools"] = [_wire_tool(t) for t in tools]
        if ctx.seed is not None:
            body["seed"] = ctx.seed
        body.update(self.params)
        return body

    def _new_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(**self._client_options())


def parse_completion(text: str, *, source: str, turn: int = 0, secret: str = "") -> ModelResponse:
    """Map a chat completion body to a ModelResponse; malformed → TransientModelError.

    Tool calls without an id (some local servers) get `call_<turn>_<index>`;
    `secret` is blanked out of error messages.
    """

    def malformed(what: str) -> TransientModelError:
        return _malformed(source, secret, what)

    data = json_body(text, source=source, secret=secret)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = data.get("error")
        raise malformed(f"no choices (error: {error})" if error else "no choices")
    wire = choices[0].get("message")
    if not isinstance(wire, dict):
        raise malformed("choices[0].message is missing")
    content = wire.get("content")
    if content is not None and not isinstance(content, str):
        raise malformed("message content is not a string")
    calls = []
    for index, call in enumerate(wire.get("tool_calls") or ()):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise malformed(f"tool_calls[{index}] has no function name")
        call_id = call.get("id") or f"call_{turn}_{index}"
        calls.append(
            ToolCall(str(call_id), function["name"], _arguments(function.get("arguments")))
        )
    finish = choices[0].get("finish_reason")
    stop = finish if isinstance(finish, str) else ("tool_calls" if calls else "stop")
    message = Message(role="assistant", content=content or "", tool_calls=tuple(calls))
    return ModelResponse(message=message, usage=_usage(data.get("usage")), stop_reason=stop)


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        # "" rather than null: llama.cpp-style servers (llama-cpp-python) answer a null
        # content with HTTP 500, and OpenAI and the SDK accept an empty string
        wire["content"] = message.content
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _wire_arguments(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return wire


def _wire_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _wire_arguments(arguments: dict[str, Any]) -> str:
    raw = arguments.get(RAW_ARGUMENTS)
    if set(arguments) == {RAW_ARGUMENTS} and isinstance(raw, str):
        return _escape_surrogates(raw)
    return _escape_surrogates(json.dumps(arguments, ensure_ascii=False))


def _escape_surrogates(text: str) -> str:
    """A lone surrogate (a model wrote "\\ud83d") cannot go out as UTF-8: written as
    its JSON escape, the server reads back the same string."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _arguments(value: object) -> dict[str, Any]:
    # Servers send a JSON string (the spec); some local ones send the object itself.
    if isinstance(value, dict):
        return value
    if value is None or value == "":
        return {}
    text = value if isinstance(value, str) else json.dumps(value)
    try:
        parsed = json.loads(text)
    except ValueError:
        return {RAW_ARGUMENTS: text}
    return parsed if isinstance(parsed, dict) else {RAW_ARGUMENTS: text}


def _usage(value: object) -> Usage:
    if not isinstance(value, dict):
        return Usage()
    return Usage(_count(value.get("prompt_tokens")), _count(value.get("completion_tokens")))


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
