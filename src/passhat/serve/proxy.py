"""An OpenAI-compatible chat-completions endpoint in front of the experiment's model.

An agent in another process sends `POST /v1/chat/completions` as it would to
OpenAI; passhat answers through `RunContext.generate`: the experiment's model
(its own parameters, transient errors retried with backoff, usage counted) or
its replay cassette. The request's `model` and sampling fields are ignored: the
experiment decides the model, so runs of one experiment mean the same thing.

Calls are served one at a time per run, in arrival order, and the n-th call of
a run is its turn n: the key a replay cassette answers by, so a recorded run
replays through the proxy exactly as through the in-process loop.

The transcript gets what is new in each request (the messages after the last
assistant message: the system and user messages of the first call, then tool
results) and then the answer, so its assistant messages are exactly the
model's answers in order and `passhat cassette` turns it into a cassette.

A model error (after retries, or a replay with no answer) is answered with an
HTTP error the agent can see, and it decides the run: errored (model_error)
whatever the agent does next.

The experiment's limits hold per run: a call past `max_turns` model turns, or
made once the run has spent its `token_budget` (input + output tokens, when
the experiment sets one), never reaches the provider (`RunContext.generate` holds
them). It is answered with 403 and ends the run, counted and graded on the state
it reached, marked `limit` (passhat.limits). A budget is checked before each call,
so the call that crosses it is the last one let through.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from passhat.errors import ModelError
from passhat.limits import RunLimitError
from passhat.models.base import Message, ModelResponse, Role, ToolCall, ToolSpec
from passhat.serve.endpoints import json_size

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.serve.endpoints import ToolBudget

ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
}
"""Request roles and what they become (OpenAI's newer `developer` is a system message)."""


class RequestError(ValueError):
    """A request the proxy cannot read; answered with HTTP 400."""


def _text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    raise RequestError(
        f"message content must be text or a list of parts, got {type(content).__name__}"
    )


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {"_not_json": raw}
    except RecursionError:  # past json's own limit (about 1,000 levels): not a 500
        raise RequestError("a tool call's arguments are JSON nested too deep to read") from None
    return parsed if isinstance(parsed, dict) else {"_not_an_object": parsed}


def parse_messages(raw: Any) -> list[Message]:
    """OpenAI chat messages as passhat messages (tool results get their tool's name)."""
    if not isinstance(raw, list) or not raw:
        raise RequestError("messages must be a non-empty list")
    names: dict[str, str] = {}
    out: list[Message] = []
    for index, m in enumerate(raw):
        if not isinstance(m, dict):
            raise RequestError(f"messages[{index}] is not an object")
        role = m.get("role")
        if role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            out.append(
                Message(
                    "tool",
                    _text(m.get("content")),
                    tool_call_id=call_id,
                    name=names.get(call_id, m.get("name")),
                )
            )
            continue
        if role not in ROLES:
            raise RequestError(
                f"messages[{index}].role is {role!r}; use system, user, assistant or tool"
            )
        calls = []
        for c in m.get("tool_calls") or ():
            function = c.get("function") or {}
            call = ToolCall(
                str(c.get("id") or ""),
                str(function.get("name") or ""),
                _arguments(function.get("arguments")),
            )
            names[call.id] = call.name
            calls.append(call)
        out.append(Message(ROLES[role], _text(m.get("content")), tool_calls=tuple(calls)))
    return out


def parse_tools(raw: Any) -> list[ToolSpec]:
    """OpenAI function tools as passhat tool specs."""
    specs = []
    for index, tool in enumerate(raw or ()):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            raise RequestError(f"tools[{index}] is not a function tool with a name")
        specs.append(
            ToolSpec(
                str(function["name"]),
                str(function.get("description") or ""),
                dict(function.get("parameters") or {"type": "object", "properties": {}}),
            )
        )
    return specs


def new_in_request(messages: list[Message]) -> list[Message]:
    """The messages after the request's last assistant message: what the model has not answered yet."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    return messages[last + 1 :]


def _wire_calls(message: Message) -> list[dict[str, Any]]:
    return [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
        }
        for c in message.tool_calls
    ]


def _finish_reason(response: ModelResponse) -> str:
    if response.message.tool_calls:
        return "tool_calls"
    return "length" if response.stop_reason in ("length", "max_tokens") else "stop"


def _usage(response: ModelResponse) -> dict[str, int]:
    u = response.usage
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
    }


def completion(response: ModelResponse, *, model: str, turn: int) -> dict[str, Any]:
    """A chat.completion object for one answer."""
    message: dict[str, Any] = {"role": "assistant", "content": response.message.content or None}
    if response.message.tool_calls:
        message["tool_calls"] = _wire_calls(response.message)
    return {
        "id": f"chatcmpl-passhat-{turn}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish_reason(response),
                "logprobs": None,
            }
        ],
        "usage": _usage(response),
    }


def completion_chunks(
    response: ModelResponse, *, model: str, turn: int, usage: bool
) -> list[dict[str, Any]]:
    """The same answer as stream chunks: the whole delta at once, then the finish."""
    head = {
        "id": f"chatcmpl-passhat-{turn}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    delta: dict[str, Any] = {"role": "assistant", "content": response.message.content or ""}
    if response.message.tool_calls:
        delta["tool_calls"] = [
            {"index": i, **c} for i, c in enumerate(_wire_calls(response.message))
        ]
    chunks = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish_reason(response)}]},
    ]
    if usage:
        chunks.append({**head, "choices": [], "usage": _usage(response)})
    return chunks


def error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class ModelProxy:
    """One run's model, answering OpenAI-format requests in arrival order."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.error: ModelError | RunLimitError | None = None
        """The first model error or limit of the run (it makes the run errored)."""
        self._lock = asyncio.Lock()

    @property
    def model_name(self) -> str:
        return self.ctx.model.name if self.ctx.model is not None else "none"

    async def answer(
        self, body: Any, budget: ToolBudget | None = None
    ) -> tuple[int, ModelResponse | dict[str, Any]]:
        """(200, the model's answer) or (an HTTP status, an OpenAI-style error body). The
        request's new messages (what the transcript keeps) count against the run's
        `budget`: past it, 429 and nothing sent or kept."""
        if not isinstance(body, dict):
            return 400, error_body("the request body is not a JSON object", "invalid_request_error")
        try:
            messages = parse_messages(body.get("messages"))
            tools = parse_tools(body.get("tools"))
        except (RequestError, AttributeError, TypeError) as error:
            return 400, error_body(
                f"passhat's proxy cannot read this request: {error}", "invalid_request_error"
            )
        if self.ctx.model is None:
            return 400, error_body("this experiment has no model", "invalid_request_error")
        fresh = new_in_request(messages)
        if budget is not None and not budget.admit_messages(
            json_size([m.to_dict() for m in fresh])
        ):
            return 429, error_body(budget.spent or "", "agent_flood")
        async with self._lock:
            if isinstance(self.error, RunLimitError):
                return 403, error_body(str(self.error), "run_limit")
            if self.error is not None:
                return 502, error_body(
                    f"the run's model failed earlier: {self.error}", "model_error"
                )
            try:
                response = await self.ctx.generate(messages, tools)
            except RunLimitError as error:
                self.error = error
                return 403, error_body(str(error), "run_limit")
            except ModelError as error:
                self.error = error
                return 502, error_body(f"{type(error).__name__}: {error}", "model_error")
            self.ctx.transcript.extend(fresh)
            self.ctx.transcript.append(response.message)
        return 200, response
