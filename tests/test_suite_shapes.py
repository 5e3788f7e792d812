"""suite/shapes.py's plain tables against validation.py's strict models: a table accepts
only what its model accepts, with the same values, and covers every field of it."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticUndefined

from passhat.plain import MAX_K
from passhat.suite import shapes, validation

VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    3,
    -1,
    MAX_K,
    MAX_K + 1,
    1.5,
    "",
    "x",
    "a.b",
    "json",
    "text",
    [],
    ["x"],
    ["x", ""],
    [1],
    [None],
    ["x", 2],
    {},
    {"a": 1},
    {"a": "x", "b": 1.5, "c": True},
    {1: "a"},
    {"a": [1, {"b": None}]},
    [{"args": {}, "response": 1}],
    [{"args": {"q": "x"}}],
    [{"args": [], "response": 1}],
    {"t": [{"args": {"q": 1}, "response": "r"}]},
    {"t": [{"args": {"q": 1}, "response": "r", "extra": 1}]},
    {"t": {"args": {}, "response": 1}},
    {"scorers": [{"exact_set": "a"}]},
    {"scorers": [{"exact_set": "a"}], "k": 5, "agent": "m:f"},
    {"scorers": []},
    {"scorers": [{"exact_set": "a"}], "k": 0},
    {"scorers": [{"exact_set": "a"}], "unknown": 1},
]
"""Candidate values for every field: right and wrong types, bounds, nested records."""


def _valid(name: str) -> dict[str, Any]:
    """A file every required field of which is given a valid value (from VALUES)."""
    model = getattr(validation, name)
    out: dict[str, Any] = {}
    for field, info in model.model_fields.items():
        if not info.is_required():
            continue
        out[field] = next(v for v in VALUES if _accepts(model, {**out, field: v}, field))
    return out


def _accepts(model: type[BaseModel], data: dict[str, Any], field: str) -> bool:
    try:
        model.model_validate(data)
    except ValidationError as error:
        return all(e["loc"][:1] != (field,) for e in error.errors())
    return True


def _plain(value: Any) -> Any:
    if isinstance(value, SimpleNamespace):
        return {k: _plain(v) for k, v in vars(value).items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(shapes.TABLES))
def test_a_table_names_its_models_fields_and_defaults(name: str) -> None:
    model = getattr(validation, name)
    table = shapes.TABLES[name]
    assert list(table) == list(model.model_fields)
    for field, info in model.model_fields.items():
        default = table[field][1]
        if info.is_required():
            assert default is shapes.REQUIRED, field
        elif info.default_factory is not None:
            assert default in (dict, list) and default() == info.default_factory(), field  # type: ignore[call-arg]
        else:
            assert info.default is not PydanticUndefined and default == info.default, field


@pytest.mark.parametrize("name", sorted(shapes.TABLES))
def test_a_table_accepts_only_what_its_model_accepts_with_the_same_values(name: str) -> None:
    model = getattr(validation, name)
    base = _valid(name)
    files = [base, {**base, "unknown": 1}]
    files += [{k: v for k, v in base.items() if k != drop} for drop in base]
    files += [{**base, field: value} for field in model.model_fields for value in VALUES]
    fast = 0
    for data in files:
        parsed = shapes.parse(name, data)
        if parsed is None:
            continue
        fast += 1
        assert _plain(parsed) == model.model_validate(data).model_dump(), data
    assert shapes.parse(name, base) is not None  # valid plain data takes the fast path
    assert fast > 1


def test_a_parsed_file_holds_copies_as_the_model_does() -> None:
    data = {"id": "c", "input": {"a": [1]}, "goal": {"g": 1}, "tags": ["t"]}
    parsed = shapes.parse("_CaseFile", data)
    assert parsed is not None
    assert parsed.input == data["input"] and parsed.input is not data["input"]
    assert parsed.tags == data["tags"] and parsed.tags is not data["tags"]
    assert parsed.fixtures == {}
    again = shapes.parse("_CaseFile", data)
    assert again is not None and again.fixtures is not parsed.fixtures  # a fresh default


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("_CaseFile", {"id": "c", "input": {}, "goal": {}, "tags": [True]}),
        ("_DefaultsFile", {"scorers": [{}], "k": True}),
        ("_DefaultsFile", {"scorers": [{}], "max_turns": 0}),
        ("_CaseFile", {"id": "", "input": {}, "goal": {}}),
        ("_CaseFile", {"id": "c", "input": {1: "a"}, "goal": {}}),
        ("_FixtureFile", {"args": {}}),
    ],
)
def test_what_the_strict_model_refuses_the_table_leaves_to_it(name: str, data: Any) -> None:
    assert shapes.parse(name, data) is None
    with pytest.raises(ValidationError):
        getattr(validation, name).model_validate(data)


def test_every_candidate_pair_of_fields_agrees_for_a_case() -> None:
    """Two fields changed at once (a case's id and input, say) still agree."""
    base = _valid("_CaseFile")
    for (a, b), (x, y) in itertools.product(
        itertools.combinations(["id", "input", "goal", "tags"], 2),
        itertools.product(VALUES, VALUES),
    ):
        data = {**base, a: x, b: y}
        parsed = shapes.parse("_CaseFile", data)
        if parsed is not None:
            assert _plain(parsed) == validation._CaseFile.model_validate(data).model_dump()


@pytest.mark.parametrize(
    "data",
    [
        {"command": ["node", "a.js"]},
        {"command": ["a"], "cwd": "sub", "env": {"A": 1, "B": "x", "C": True, "D": 0.5}},
        {"command": ["a"], "output": "text", "read": ["r"], "write": [], "hosts": ["h:1"]},
        {"command": ["a"], "output": "json", "pass_env": ["K"], "env": {}},
    ],
)
def test_a_command_agents_spec_is_the_same_from_its_table_or_its_model(data: Any) -> None:
    """The spec a command agent is recorded and resumed by (its fields not at their
    defaults, and cwd) is the model's `model_dump(exclude_defaults=True)`, whether the
    plain table (no pydantic: 0.13 s of a `passhat run`'s CPU) or the model parsed it."""
    import json

    from passhat.records import COMMAND_AGENT

    model = validation._CommandAgentFile.model_validate(data)
    dumped = {**model.model_dump(exclude_defaults=True), "cwd": model.cwd}
    expected = COMMAND_AGENT + json.dumps(dumped, ensure_ascii=False, sort_keys=True)
    parsed = shapes.parse("_CommandAgentFile", data)
    assert parsed is not None
    assert shapes.command_agent_spec(parsed) == expected
    assert shapes.command_agent_spec(model) == expected
