"""The model interface: one small Protocol every provider implements.

Messages are provider-neutral and JSON-ready; each provider maps them to and
from its own wire format (OpenAI chat completions, Anthropic messages, a
replay cassette). Providers raise `TransientModelError` (with `retry_after`
when the server gave one) for failures worth retrying and
`PermanentModelError` for the rest; retrying is the runner's job, so SDK
clients are built with their own retries turned off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call."""

    name: str
    """Name the model calls it by."""
    description: str
    """What it does, for the model."""
    parameters: dict[str, Any]
    """JSON schema of its arguments (an object schema)."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call asked for by the model."""

    id: str
    """Provider's id of the call; tool results answer it."""
    name: str
    """The tool's name."""
    arguments: dict[str, Any]
    """Parsed arguments (a JSON object; arguments that were not one are kept verbatim
    under `RAW_ARGUMENTS`)."""


RAW_ARGUMENTS = "_raw"
"""Key holding a model's tool call arguments that were not a JSON object, verbatim."""


@dataclass(frozen=True)
class Message:
    """One message of a conversation."""

    role: Role
    """system, user, assistant or tool."""
    content: str = ""
    """Text content (may be empty for an assistant message that only calls tools)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls of an assistant message."""
    tool_call_id: str | None = None
    """For a tool message: the id of the call it answers."""
    name: str | None = None
    """For a tool message: the tool's name."""
    is_error: bool = False
    """For a tool message: the tool failed and `content` is its error."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            d["name"] = self.name
        if self.is_error:
            d["is_error"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Message:
        return cls(
            role=d["role"],
            content=d.get("content") or "",
            tool_calls=tuple(
                ToolCall(id=c["id"], name=c["name"], arguments=dict(c.get("arguments") or {}))
                for c in d.get("tool_calls") or ()
            ),
            tool_call_id=d.get("tool_call_id"),
            name=d.get("name"),
            is_error=bool(d.get("is_error", False)),
        )


@dataclass(frozen=True)
class Usage:
    """Token usage of one model call (zeros when the provider does not say)."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


@dataclass(frozen=True)
class ModelResponse:
    """What a model answered to one call."""

    message: Message
    """The assistant message, with any tool calls."""
    usage: Usage = field(default_factory=Usage)
    """Tokens used by this call."""
    stop_reason: str = "stop"
    """Why the model stopped: stop, tool_calls, length..."""


@dataclass(frozen=True)
class CallContext:
    """Where a model call sits: which case, which run, which turn."""

    case_id: str
    """The case being run."""
    run_index: int
    """1-based run index."""
    turn: int
    """0-based index of this call within the run."""
    seed: int | None = None
    """Per-run seed derived from the experiment seed, case and run index."""


@runtime_checkable
class Model(Protocol):
    """A model provider: answers a conversation with one assistant message."""

    @property
    def name(self) -> str:
        """`provider:model`, as given on the command line."""
        ...

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], ctx: CallContext
    ) -> ModelResponse:
        """Answer the conversation; raise TransientModelError / PermanentModelError."""
        ...
