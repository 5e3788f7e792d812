"""Checking a suite's files: the schemas of suite.yaml and cases/*.yaml (strict pydantic
models) and their errors turned into messages that name the field and the fix. Pure: it
is handed parsed data and returns problems; loading.py reads the files.

Imported only when a file is not plain valid data by shapes.py's tables (an error to
name, or a shape the tables leave to the models, a command agent's): a valid suite of
plain data is loaded without importing pydantic.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from passhat.plain import MAX_K, Loc, did_you_mean, show
from passhat.suite.model import _SCORER_EXAMPLE

# --------------------------------------------------------------- shared helpers


class StrictModel(BaseModel):
    """Base of the file schemas: no coercion, no unknown keys."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def validation_problems(
    error: ValidationError, model: type[BaseModel], prefix: Loc = ()
) -> list[tuple[Loc, str]]:
    """Pydantic's errors as (location, message-with-the-fix) pairs."""
    out: list[tuple[Loc, str]] = []
    for err in error.errors():
        loc: Loc = tuple(err["loc"])
        out.append((prefix + loc, _error_message(err, model, loc)))
    return out


def _error_message(err: Any, model: type[BaseModel], loc: Loc) -> str:
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    if kind == "missing":
        info = _field_at(model, loc)
        hint = f": {info.description}" if info is not None and info.description else ""
        return f"missing; add it{hint}"
    if kind == "extra_forbidden":
        allowed = _keys_at(model, loc[:-1])
        key = str(loc[-1])
        return (
            f"unknown key {show(key)}; the keys allowed here are {', '.join(allowed)}"
            f"{did_you_mean(key, allowed)}"
        )
    expected = _EXPECTED.get(kind)
    if expected is not None:
        quote = "; put it in quotes" if kind == "string_type" and _is_scalar(value) else ""
        return f"expected {expected}, got {show(value)}{quote}"
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        return f"is {show(value)}; it must be at least {bound}"
    if kind in ("less_than_equal", "less_than"):
        bound = ctx.get("le", ctx.get("lt"))
        return f"is {show(value)}; it must be at most {bound:,}"
    if kind == "string_too_short":
        return "is empty; write some text"
    if kind == "too_short":
        return f"is empty; give at least {ctx.get('min_length', 1)} item(s)"
    return str(err["msg"])


_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "list_type": "a list ('- item' lines or [a, b])",
    "tuple_type": "a list ('- item' lines or [a, b])",
    "dict_type": "a mapping ('key: value' lines)",
    "model_type": "a mapping ('key: value' lines)",
    "model_attributes_type": "a mapping ('key: value' lines)",
}


def _is_scalar(value: Any) -> bool:
    return isinstance(value, int | float | bool) or value is None


def _model_at(model: type[BaseModel], loc: Loc) -> Any:
    """The annotation reached by walking `loc` through models, lists and dicts."""
    current: Any = model
    for part in loc:
        current = _step(current, part)
        if current is None:
            return None
    return current


def _step(annotation: Any, part: str | int) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _step(arg, part)
            if found is not None:
                return found
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        info = annotation.model_fields.get(part) if isinstance(part, str) else None
        return info.annotation if info is not None else None
    if origin in (list, tuple) and isinstance(part, int):
        return typing.get_args(annotation)[0]
    if origin is dict and isinstance(part, str):
        return typing.get_args(annotation)[1]
    return None


def _unwrap_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _unwrap_model(arg)
        if found is not None:
            return found
    return None


def _keys_at(model: type[BaseModel], loc: Loc) -> list[str]:
    found = _unwrap_model(_model_at(model, loc))
    return list(found.model_fields) if found is not None else []


def _field_at(model: type[BaseModel], loc: Loc) -> FieldInfo | None:
    owner = _unwrap_model(_model_at(model, loc[:-1]))
    if owner is None or not isinstance(loc[-1], str):
        return None
    return owner.model_fields.get(loc[-1])


# ----------------------------------------------------------------- file schemas


class _CommandAgentFile(StrictModel):
    """`agent: {command: [...], ...}`: a command agent (agents/command.py)."""

    command: list[str] = Field(
        min_length=1, description="the program and its arguments, e.g. [node, dist/agent.js]"
    )
    cwd: str = Field(".", min_length=1)
    env: dict[str, str | int | float | bool] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    output: typing.Literal["json", "text"] = "json"
    read: list[str] = Field(
        default_factory=list, description="extra paths the run's sandbox shows read-only"
    )
    write: list[str] = Field(
        default_factory=list, description="extra folders the run's sandbox shows writable"
    )
    hosts: list[str] = Field(
        default_factory=list, description="hosts a sandboxed run may reach (name or name:port)"
    )


class _DefaultsFile(StrictModel):
    agent: Any = Field(
        "clarifier",
        description="a built-in agent name, package.module:name, or "
        "{command: [program, args...]} for an agent in any language",
    )
    model: str | None = Field(
        None,
        min_length=1,
        description="the model to run, e.g. replay:cassettes/seed.jsonl or "
        "openai:gpt-4o-mini (--model overrides it; leave it out when the agent calls none)",
    )
    k: int = Field(3, ge=1, le=MAX_K)
    params: dict[str, Any] = Field(default_factory=dict)
    max_turns: int = Field(10, ge=1)
    scorers: list[Any] = Field(
        min_length=1,
        description=f"the scorers every run must pass, e.g. {_SCORER_EXAMPLE}",
    )


class _SuiteFile(StrictModel):
    name: str = Field(min_length=1, description="a short name for the suite, e.g. clarify")
    description: str = ""
    environment: str = Field(
        min_length=1,
        description="the world cases run in: ticket, board, tools or file.py:ClassName",
    )
    labels: list[str] = Field(default_factory=list)
    tools: list[Any] | None = None
    state: dict[str, Any] | None = None
    input_schema: dict[str, Any] | None = None
    goal_schema: dict[str, Any] | None = None
    defaults: _DefaultsFile = Field(
        description="agent, model, k and scorers, e.g. defaults: {k: 3, scorers: [...]}"
    )


class _ExactSetFile(StrictModel):
    exact_set: str = Field(min_length=1)
    item: str | None = Field(None, min_length=1)


class _SubsetFile(StrictModel):
    subset: str = Field(min_length=1)
    item: str | None = Field(None, min_length=1)


class _SupersetFile(StrictModel):
    superset: str = Field(min_length=1)
    item: str | None = Field(None, min_length=1)


class _EqualsFile(StrictModel):
    equals: str = Field(min_length=1)


class _MatchesFile(StrictModel):
    matches: str = Field(min_length=1)
    pattern: str = Field(description="a regular expression the text must match, e.g. '^AC'")


class _JudgeFile(StrictModel):
    judge: str = Field(min_length=1)
    model: str = Field(
        min_length=1, description="the judge's model, e.g. replay:cassettes/judge.jsonl"
    )
    paths: list[str] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    base_url: str | None = None


class _PresentFile(StrictModel):
    present: list[str] = Field(min_length=1)


class _CustomFile(StrictModel):
    custom: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


class _FixtureFile(StrictModel):
    args: dict[str, Any] = Field(description="the call's arguments, e.g. {query: ...}")
    response: Any = Field(description="what the tool answers")


class _CaseFile(StrictModel):
    id: str = Field(min_length=1, description="a unique case id such as ac-conflict-001")
    input: dict[str, Any] = Field(description="what the agent starts from")
    fixtures: dict[str, list[_FixtureFile]] = Field(default_factory=dict)
    goal: dict[str, Any] = Field(description="the goal state the final state must match")
    tags: list[str] = Field(default_factory=list)
