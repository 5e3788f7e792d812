"""The steps runs are compared by: a transcript cut into turns (what the model was sent,
then each of its messages with what followed), the run's tool calls, and two runs'
calls aligned. Ids a provider makes up and token usage are left out of a step's shape.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from passhat.plain import canonical_json
from passhat.records import RunRecord

MODEL = "assistant"
"""The role of the model's own messages."""


# ------------------------------------------------------------------------ turns


@dataclass(frozen=True)
class Turn:
    """One turn of a transcript (see the module docstring)."""

    number: int
    """0 for what the model was sent first; n for its n-th message and what followed."""
    messages: tuple[int, ...]
    """Indices of its messages in the transcript."""
    shape: tuple[dict[str, Any], ...]
    """What is compared of each message: role, text, tool calls, tool name."""
    key: str
    """Canonical JSON of `shape`: equal turns, equal keys."""


def _arguments(value: Any) -> Any:
    """Tool-call arguments as data: a provider's JSON text is read."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def call_shape(call: Mapping[str, Any]) -> dict[str, Any]:
    """A transcript's tool call as compared: its name and arguments (OpenAI's nested
    `function` too), without the id the provider made up."""
    function = call.get("function")
    if isinstance(function, Mapping):
        return {"name": function.get("name"), "arguments": _arguments(function.get("arguments"))}
    return {"name": call.get("name"), "arguments": _arguments(call.get("arguments"))}


def message_shape(message: Mapping[str, Any]) -> dict[str, Any]:
    """What is compared of one message."""
    shape: dict[str, Any] = {"role": message.get("role"), "content": message.get("content")}
    calls = message.get("tool_calls")
    if calls:
        shape["tool_calls"] = [call_shape(c) for c in calls if isinstance(c, Mapping)]
    if message.get("name"):
        shape["name"] = message["name"]
    if message.get("is_error"):
        shape["is_error"] = True
    return shape


def turns(transcript: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """The transcript cut into turns; [] for no transcript."""
    groups: list[list[int]] = []
    for i, message in enumerate(transcript):
        if not groups or message.get("role") == MODEL:
            groups.append([])
        groups[-1].append(i)
    if groups and transcript and transcript[0].get("role") == MODEL:
        groups.insert(0, [])  # no input before the first answer: turn 0 is empty
    out = []
    for number, indices in enumerate(groups):
        shape = tuple(message_shape(transcript[i]) for i in indices)
        out.append(Turn(number, tuple(indices), shape, canonical_json(list(shape))))
    return out


# --------------------------------------------------------------------- tool calls


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a run, numbered in call order (1-based)."""

    number: int
    tool: str
    arguments: Any
    result: Any = None
    error: Any = None
    turn: int | None = None
    """The turn whose model message made it; None when the transcript does not show it."""
    recorded: bool = True
    """Recorded by the environment (True), or read from the transcript (no result)."""

    @property
    def key(self) -> str:
        """Tool and arguments, as compared across runs."""
        return canonical_json([self.tool, self.arguments])

    def to_dict(self) -> dict[str, Any]:
        """Every field by its name, in the order declared (a new field is in the JSON too)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def run_calls(run: RunRecord, cut: Sequence[Turn] | None = None) -> list[ToolCall]:
    """The run's tool calls: the environment's records, each with the turn that made it
    (matched in order by tool and arguments); a run whose environment recorded none (an
    imported log) has the calls its transcript shows. `cut`: the run's `turns`, when
    the caller has them."""
    made: list[tuple[int, str]] = []  # (turn, key) of every call the transcript shows
    for part in turns(run.transcript) if cut is None else cut:
        for shape in part.shape:
            for call in shape.get("tool_calls", ()):
                made.append((part.number, canonical_json([call["name"], call["arguments"]])))
    if not run.tool_calls:
        return [
            ToolCall(n, json.loads(key)[0], json.loads(key)[1], turn=number, recorded=False)
            for n, (number, key) in enumerate(made, 1)
        ]
    out = []
    at = 0
    for n, call in enumerate(run.tool_calls, 1):
        tool, arguments = str(call.get("tool")), call.get("arguments")
        key = canonical_json([tool, arguments])
        made_in: int | None = None
        for j in range(at, len(made)):
            if made[j][1] == key:
                made_in, at = made[j][0], j + 1
                break
        out.append(ToolCall(n, tool, arguments, call.get("result"), call.get("error"), made_in))
    return out


@dataclass(frozen=True)
class CallPair:
    """Two runs' tool calls aligned: a call of each, or of one only."""

    a: ToolCall | None
    b: ToolCall | None

    @property
    def same(self) -> bool:
        """The same tool, arguments, result and error."""
        a, b = self.a, self.b
        return (
            a is not None
            and b is not None
            and a.key == b.key
            and canonical_json([a.result, a.error]) == canonical_json([b.result, b.error])
        )


def align_calls(a: Sequence[ToolCall], b: Sequence[ToolCall]) -> list[CallPair]:
    """The calls of two runs aligned on tool and arguments (difflib's matching): equal
    calls side by side, changed ones side by side, a call one run alone made on its own row."""
    matcher = difflib.SequenceMatcher(None, [c.key for c in a], [c.key for c in b], autojunk=False)
    out: list[CallPair] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal" or op == "replace":
            common = min(a1 - a0, b1 - b0)
            out.extend(CallPair(a[a0 + i], b[b0 + i]) for i in range(common))
            out.extend(CallPair(a[i], None) for i in range(a0 + common, a1))
            out.extend(CallPair(None, b[i]) for i in range(b0 + common, b1))
        elif op == "delete":
            out.extend(CallPair(a[i], None) for i in range(a0, a1))
        else:  # insert
            out.extend(CallPair(None, b[i]) for i in range(b0, b1))
    return out
