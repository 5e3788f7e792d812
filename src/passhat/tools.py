"""Tools as an environment declares them: the `@tool` decorator and `Tool`, what a
call gives the agent back (`ToolOutcome`, or a `ToolError` it raises) and what is
recorded of it (`ToolCallRecord`), a method's parameters as JSON Schema, and the
checks of a tool's name and parameters. passhat.env's `Environment` binds and calls
them; `passhat.env` re-exports the public names."""

from __future__ import annotations

import functools
import inspect
import json
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar, overload

from passhat.errors import ConfigError
from passhat.fixtures import FixtureMode
from passhat.models.base import RAW_ARGUMENTS, ToolSpec
from passhat.plain import Loc, field_path, named, show
from passhat.schema import schema_errors

__all__ = [
    "Declared",
    "Tool",
    "ToolCallRecord",
    "ToolError",
    "ToolOutcome",
    "args_message",
    "bind",
    "declared_tools",
    "not_json_reason",
    "parameters_from_signature",
    "tool",
    "tool_problems",
]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call gives back to the agent."""

    content: Any
    """JSON-ready result; for an error, the message (text)."""
    is_error: bool = False
    """The call failed; `content` says why and how to call it right."""

    def text(self) -> str:
        """What the model sees: text as it is, anything else as JSON."""
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False)


@dataclass(frozen=True)
class ToolCallRecord:
    """One recorded tool call."""

    tool: str
    """The tool's name as the agent called it (also for unknown tools)."""
    arguments: dict[str, Any]
    """Arguments as given (a copy); a non-object is kept under `_not_an_object`."""
    result: Any | None
    """The result on success; None on error."""
    error: str | None
    """The error message given to the agent; None on success."""
    fixture_miss: bool
    """A fixture tool had no recorded response for these arguments."""
    started_at: float
    """When the call started (epoch seconds)."""
    duration_s: float
    """How long it took (seconds)."""

    def to_dict(self) -> dict[str, Any]:
        """Every field by its name, in the order declared (a new field is in the JSON too)."""
        return named(self, _CALL_FIELDS)


_CALL_FIELDS = tuple(f.name for f in fields(ToolCallRecord))


class ToolError(Exception):
    """Raise it inside a tool for an agent's mistake: the agent reads the message."""

    def __init__(self, message: str, fixture_miss: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.fixture_miss = fixture_miss


ToolFailure = ToolError  # the name before the protocol was public


Handler = Callable[..., Any]


@dataclass(frozen=True)
class Tool:
    """A tool as an environment declares it (by `@tool` or `add_tool`)."""

    name: str
    """Name the agent calls it by: letters, digits, '_' and '-' (at most 64)."""
    description: str
    """What it does, for the model."""
    parameters: dict[str, Any]
    """JSON Schema (Draft 2020-12) of its arguments: an object schema."""
    handler: Handler | None = None
    """Called with the arguments as keywords (sync or async); None for a look-up
    answered only from fixtures."""
    fixtures: FixtureMode | None = None
    """How a look-up matches recorded fixtures; None: not a fixture tool."""

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)


@dataclass(frozen=True)
class Declared:
    """What `@tool` leaves on a method, read when an environment is built."""

    name: str | None
    description: str | None
    parameters: dict[str, Any] | Callable[[Any], dict[str, Any]] | None
    fixtures: FixtureMode | None


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def tool(fn: _F) -> _F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | Callable[[Any], dict[str, Any]] | None = None,
    fixtures: bool | FixtureMode = False,
) -> Callable[[_F], _F]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | Callable[[Any], dict[str, Any]] | None = None,
    fixtures: bool | FixtureMode = False,
) -> Any:
    """Declare a method of an `Environment` as a tool.

    Used bare (`@tool`) or with options: `name` (default: the method's name),
    `description` (default: the docstring's first paragraph), `parameters` (a
    JSON Schema, or a function of the environment returning one; default: derived
    from the method's type hints, `Annotated[str, Field(description=...)]` for
    argument descriptions) and `fixtures` (True or "exact", or "terms": the tool
    is a look-up answered from the case's fixtures, and its body is not called).
    """
    mode: FixtureMode | None = None
    if fixtures is True:
        mode = "exact"
    elif fixtures in ("exact", "terms"):
        mode = fixtures
    elif fixtures is not False:
        raise ConfigError(f"@tool(fixtures={fixtures!r}): use True, 'exact' or 'terms'")

    def mark(method: _F) -> _F:
        method.__passhat_tool__ = Declared(name, description, parameters, mode)  # type: ignore[attr-defined]
        return method

    return mark(fn) if fn is not None else mark


def parameters_from_signature(fn: Callable[..., Any]) -> dict[str, Any]:
    """An object schema of a method's arguments (after `self`), from its type hints."""
    from pydantic import ConfigDict, create_model

    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for param in list(signature.parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigError(
                f"tool {fn.__name__}: *{param.name} cannot be described by a schema; "
                "name each argument, or give @tool(parameters={...})"
            )
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints.get(param.name, Any), default)
    model = create_model(
        f"{fn.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    return _untitled(model.model_json_schema())  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1024)
def signature_parameters(fn: Callable[..., Any]) -> dict[str, Any]:
    """`parameters_from_signature`, once per method (a millisecond each: pydantic builds
    a model): every run's tool then holds the same schema object, whose validator
    schema.py keeps by identity. Callers do not change it."""
    return parameters_from_signature(fn)


def not_json_reason(arguments: dict[str, Any]) -> str | None:
    """Why a model's arguments were no JSON object (the provider kept its text under
    RAW_ARGUMENTS), in words the model can act on; None for real arguments."""
    raw = arguments.get(RAW_ARGUMENTS)
    if set(arguments) != {RAW_ARGUMENTS} or not isinstance(raw, str):
        return None
    try:
        parsed = json.loads(raw)
    except ValueError as error:
        return (
            f"the arguments were not valid JSON: {error} in {show(raw, 200)}; "
            "send one complete JSON object"
        )
    return f"the arguments were not a JSON object but {show(parsed, 200)}; send one object"


def _untitled(schema: Any) -> Any:
    """Pydantic's schema without its generated titles (models read descriptions)."""
    if isinstance(schema, dict):
        return {
            k: _untitled(v) if k not in ("properties", "$defs") else _untitled_map(v)
            for k, v in schema.items()
            if k != "title"
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


def _untitled_map(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k: _untitled(v) for k, v in mapping.items()}


@functools.lru_cache(maxsize=1024)
def _doc(fn: Callable[..., Any]) -> str:
    text = inspect.getdoc(fn) or ""
    return text.split("\n\n")[0].strip()


def bind(env: object, method_name: str, declared: Declared) -> Tool:
    """The tool a `@tool` method of `env` declares, bound to `env` (its parameters from
    `declared`, a function of `env`, or the method's type hints)."""
    method = getattr(env, method_name)
    params = declared.parameters
    if callable(params):
        params = params(env)
    if params is None:
        params = signature_parameters(getattr(type(env), method_name))
    return Tool(
        name=declared.name or method_name,
        description=declared.description or _doc(getattr(type(env), method_name)),
        parameters=params,
        handler=None if declared.fixtures else method,
        fixtures=declared.fixtures,
    )


_DECLARED: dict[type, list[tuple[str, Declared]]] = {}


def declared_tools(cls: type) -> list[tuple[str, Declared]]:
    """The `@tool` methods of a class, in the order they are written (bases first);
    read once per class, not once per run."""
    if cls not in _DECLARED:
        found: dict[str, Declared] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                declared = getattr(value, "__passhat_tool__", None)
                if isinstance(declared, Declared):
                    found[attr] = declared
        _DECLARED[cls] = list(found.items())
    return _DECLARED[cls]


def tool_problems(owner: str, name: str, parameters: Any) -> list[str]:
    """What keeps a tool of `owner` from being offered: its name, or parameters that are
    no JSON Schema of an object (empty when it is fine)."""
    if not _TOOL_NAME.match(name):
        return [
            f"{owner}: tool name {show(name)} may hold only letters, digits, '_' and '-' "
            "(at most 64)"
        ]
    errors = schema_errors(parameters)
    if errors:
        return [f"{owner}: tool {name}: parameters are not a valid JSON Schema: {errors[0]}"]
    if parameters.get("type") != "object":
        return [
            f"{owner}: tool {name}: parameters must be an object schema "
            "({type: object, properties: {...}}); models call tools with named arguments"
        ]
    return []


def args_message(tool: str, problems: list[tuple[Loc, str]]) -> str:
    """One line for the agent: `invalid arguments for T: a.b: problem; c: problem`."""
    parts = [f"{field_path(loc)}: {message}" if loc else message for loc, message in problems]
    return f"invalid arguments for {tool}: " + "; ".join(parts)
