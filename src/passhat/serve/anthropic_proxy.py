"""The Anthropic-compatible side of the model proxy: `POST /v1/messages`.

The same `ModelProxy` answers (experiment's model, retries, usage, transcript,
replay turns); only the wire format differs. An Anthropic request is read into
OpenAI-shaped messages, so one reader serves both:

    system (text or text blocks)      a system message
    text blocks                       the message's text
    assistant tool_use blocks         tool calls
    user tool_result blocks           tool messages (answering the call's id)

Streaming is not offered here: `stream: true` is refused with a 400 that says so.
"""

from __future__ import annotations

import json
from typing import Any

from passhat.models.base import ModelResponse
from passhat.serve.proxy import RequestError


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list) and all(isinstance(b, dict) for b in content):
        return content
    raise RequestError("message content must be text or a list of content blocks")


def _text(blocks: list[dict[str, Any]]) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def openai_shaped(body: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic messages request as the OpenAI-shaped body the proxy reads."""
    if body.get("stream"):
        raise RequestError("passhat's Anthropic endpoint does not stream; send stream: false")
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": _text(_blocks(system))})
    for index, m in enumerate(body.get("messages") or ()):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise RequestError(f"messages[{index}] is not a user or assistant message")
        blocks = _blocks(m.get("content"))
        if m["role"] == "assistant":
            calls = [
                {
                    "id": b.get("id"),
                    "type": "function",
                    "function": {"name": b.get("name"), "arguments": b.get("input") or {}},
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            messages.append({"role": "assistant", "content": _text(blocks), "tool_calls": calls})
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                content = b.get("content")
                text = content if isinstance(content, str) else _text(_blocks(content or []))
                messages.append(
                    {"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": text}
                )
        text = _text(blocks)
        if text or not any(b.get("type") == "tool_result" for b in blocks):
            messages.append({"role": "user", "content": text})
    tools = [
        {
            "type": "function",
            "function": {
                "name": t.get("name"),
                "description": t.get("description") or "",
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for t in body.get("tools") or ()
        if isinstance(t, dict)
    ]
    return {"messages": messages, "tools": tools}


def message(response: ModelResponse, *, model: str, turn: int) -> dict[str, Any]:
    """An Anthropic `message` object for one answer."""
    content: list[dict[str, Any]] = []
    if response.message.content:
        content.append({"type": "text", "text": response.message.content})
    for call in response.message.tool_calls:
        content.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    if response.message.tool_calls:
        stop = "tool_use"
    elif response.stop_reason in ("length", "max_tokens"):
        stop = "max_tokens"
    else:
        stop = "end_turn"
    return {
        "id": f"msg_passhat_{turn}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
        },
    }


def error(status: int, text: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "api_error"
    return {"type": "error", "error": {"type": kind, "message": text}}


def error_from_openai(status: int, body: dict[str, Any]) -> dict[str, Any]:
    detail = body.get("error") if isinstance(body, dict) else None
    text = detail.get("message") if isinstance(detail, dict) else json.dumps(body)
    return error(status, str(text))
