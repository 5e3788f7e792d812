"""The suite files' schemas as plain tables: a file of plain, valid data is parsed here
without pydantic, whose import (with validation.py's models) cost `passhat run` 60-90 ms
of CPU before its first run.

A table only accepts: a mapping with no unknown key, every required field present, each
value of its field's exact plain type (strict, as validation.py's models are: no
coercion, a bool is not a whole number) within its bounds. Anything else, `parse` returns
None and loading.py asks validation.py's model, which names the problem (file, field,
fix) or accepts a shape these tables leave to it. Parsed values are what the model would
hold: defaults filled in, mappings and lists copied one level, as pydantic copies them.
tests/test_suite_shapes.py holds each table to its model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from passhat.plain import MAX_K
from passhat.records import COMMAND_AGENT


class _Refused(Exception):
    """A value the tables leave to the model (which names the problem, if any)."""


Check = Callable[[Any], Any]
"""A field's check: the value as the model would hold it, or `_Refused`."""

REQUIRED: Any = object()
"""A field's default when the file must give it."""


def text(min_length: int = 0) -> Check:
    def check(value: Any) -> Any:
        if type(value) is not str or len(value) < min_length:
            raise _Refused
        return value

    return check


def whole(low: int, high: int | None = None) -> Check:
    def check(value: Any) -> Any:
        if type(value) is not int or value < low or (high is not None and value > high):
            raise _Refused
        return value

    return check


def anything(value: Any) -> Any:
    return value


def mapping(value: Any) -> Any:
    """`dict[str, Any]`: text keys, values as they are."""
    if type(value) is not dict or any(type(key) is not str for key in value):
        raise _Refused
    return dict(value)


def items(of: Check = anything, min_length: int = 0) -> Check:
    """`list[...]` of values `of` accepts, at least `min_length` of them."""

    def check(value: Any) -> Any:
        if type(value) is not list or len(value) < min_length:
            raise _Refused
        return value[:] if of is anything else [of(item) for item in value]

    return check


def optional(of: Check) -> Check:
    def check(value: Any) -> Any:
        return None if value is None else of(value)

    return check


def record(name: str) -> Check:
    """A nested file schema (a table of its own)."""

    def check(value: Any) -> Any:
        found = parse(name, value)
        if found is None:
            raise _Refused
        return found

    return check


def keyed(of: Check) -> Check:
    """`dict[str, X]`: text keys, each value one `of` accepts."""

    def check(value: Any) -> Any:
        if type(value) is not dict or any(type(key) is not str for key in value):
            raise _Refused
        return {key: of(item) for key, item in value.items()}

    return check


def scalar(value: Any) -> Any:
    """`str | int | float | bool`, as it is."""
    if type(value) not in (str, int, float, bool):
        raise _Refused
    return value


def one_of(*choices: str) -> Check:
    """A `Literal` of text choices."""

    def check(value: Any) -> Any:
        if type(value) is not str or value not in choices:
            raise _Refused
        return value

    return check


Field = tuple[Check, Any]
"""(check, default): `REQUIRED`, a value, or a factory (`dict`, `list`) for a fresh one."""

_OPTIONAL_TEXT: Field = (optional(text(1)), None)

TABLES: dict[str, dict[str, Field]] = {
    "_DefaultsFile": {
        "agent": (anything, "clarifier"),
        "model": _OPTIONAL_TEXT,
        "k": (whole(1, MAX_K), 3),
        "params": (mapping, dict),
        "max_turns": (whole(1), 10),
        "scorers": (items(min_length=1), REQUIRED),
    },
    "_SuiteFile": {
        "name": (text(1), REQUIRED),
        "description": (text(), ""),
        "environment": (text(1), REQUIRED),
        "labels": (items(text()), list),
        "tools": (optional(items()), None),
        "state": (optional(mapping), None),
        "input_schema": (optional(mapping), None),
        "goal_schema": (optional(mapping), None),
        "defaults": (record("_DefaultsFile"), REQUIRED),
    },
    "_ExactSetFile": {"exact_set": (text(1), REQUIRED), "item": _OPTIONAL_TEXT},
    "_SubsetFile": {"subset": (text(1), REQUIRED), "item": _OPTIONAL_TEXT},
    "_SupersetFile": {"superset": (text(1), REQUIRED), "item": _OPTIONAL_TEXT},
    "_EqualsFile": {"equals": (text(1), REQUIRED)},
    "_MatchesFile": {"matches": (text(1), REQUIRED), "pattern": (text(), REQUIRED)},
    "_JudgeFile": {
        "judge": (text(1), REQUIRED),
        "model": (text(1), REQUIRED),
        "paths": (items(text()), list),
        "params": (mapping, dict),
        "base_url": (optional(text()), None),
    },
    "_PresentFile": {"present": (items(text(), min_length=1), REQUIRED)},
    "_CustomFile": {"custom": (text(1), REQUIRED), "params": (mapping, dict)},
    "_FixtureFile": {"args": (mapping, REQUIRED), "response": (anything, REQUIRED)},
    "_CommandAgentFile": {
        "command": (items(text(), min_length=1), REQUIRED),
        "cwd": (text(1), "."),
        "env": (keyed(scalar), dict),
        "pass_env": (items(text()), list),
        "output": (one_of("json", "text"), "json"),
        "read": (items(text()), list),
        "write": (items(text()), list),
        "hosts": (items(text()), list),
    },
    "_CaseFile": {
        "id": (text(1), REQUIRED),
        "input": (mapping, REQUIRED),
        "fixtures": (keyed(items(record("_FixtureFile"))), dict),
        "goal": (mapping, REQUIRED),
        "tags": (items(text()), list),
    },
}
"""Per model of validation.py (by its name), its fields."""


def command_agent_spec(config: Any) -> str:
    """The agent spec string a command agent is recorded and resumed by, from its file
    as parsed (a table's or its model's): the fields not at their defaults, and cwd."""
    data: dict[str, Any] = {}
    for key, (_, default) in TABLES["_CommandAgentFile"].items():
        value = getattr(config, key)
        if key == "cwd" or default is REQUIRED or value != _fresh(default):
            data[key] = value
    return COMMAND_AGENT + json.dumps(data, ensure_ascii=False, sort_keys=True)


def _fresh(default: Any) -> Any:
    return default() if default is dict or default is list else default


def parse(name: str, data: Any) -> SimpleNamespace | None:
    """`data` as model `name` would hold it, when the table accepts it; else None (the
    model decides, and names what is wrong)."""
    table = TABLES[name]
    if type(data) is not dict or not data.keys() <= table.keys():
        return None
    values: dict[str, Any] = {}
    try:
        for key, (check, default) in table.items():
            if key in data:
                values[key] = check(data[key])
            elif default is REQUIRED:
                return None
            else:
                values[key] = _fresh(default)
    except _Refused:
        return None
    return SimpleNamespace(**values)
