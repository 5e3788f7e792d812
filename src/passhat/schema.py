"""JSON Schema checks (Draft 2020-12, by the `jsonschema` library) in passhat's message style.

Two uses, one validator:

- a tool call's arguments against the tool's `parameters` (env.py): the agent
  reads the message, so it speaks JSON ("expected an array");
- a case's `input` and `goal` against an environment's schemas, and fixture
  arguments against a tool's (at `passhat check`): a person reads it, so it
  speaks YAML ("expected a list ('- item' lines or [a, b])").

Every problem is one (location, message) pair, the message saying what to
write instead: `missing; add it: the ticket key`, `unknown key 'q'; the keys
allowed here are query`, `'Todo' is not one of Backlog, Doing`. Keywords
without a message of their own fall back to jsonschema's.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from passhat.plain import Loc, did_you_mean, show

__all__ = ["schema_errors", "schema_problems"]

_JSON_WORDS = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}
_YAML_WORDS = {
    **_JSON_WORDS,
    "object": "a mapping ('key: value' lines)",
    "array": "a list ('- item' lines or [a, b])",
    "string": "text",
    "integer": "a whole number",
}


@functools.lru_cache(maxsize=512)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))


_BY_ID: dict[int, tuple[Any, Draft202012Validator]] = {}


def _validator_for(schema: dict[str, Any]) -> Draft202012Validator:
    """The schema's validator: by identity first (a tool's schema is one object for
    every call), else by its JSON in written order (messages list keys as written)."""
    hit = _BY_ID.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    validator = _validator(json.dumps(schema, ensure_ascii=False))
    if len(_BY_ID) > 1024:
        _BY_ID.clear()
    _BY_ID[id(schema)] = (schema, validator)  # kept alive, so the id is never reused
    return validator


def schema_errors(schema: Any) -> list[str]:
    """What makes `schema` not a valid Draft 2020-12 JSON Schema (empty when it is one)."""
    if not isinstance(schema, dict | bool):
        return [f"expected a JSON Schema (a mapping such as {{type: object}}), got {show(schema)}"]
    out = []
    for error in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema):
        where = "/".join(str(p) for p in error.absolute_path)
        out.append(f"{where + ': ' if where else ''}{error.message}")
    return out


def schema_problems(
    value: Any, schema: dict[str, Any], *, yaml: bool = False
) -> list[tuple[Loc, str]]:
    """Every way `value` breaks `schema`, as (location, message) pairs; [] when it fits.

    `schema` must be valid (see `schema_errors`); `yaml` picks the words of a file's reader.
    """
    words = _YAML_WORDS if yaml else _JSON_WORDS
    validator = _validator_for(schema)
    if validator.is_valid(value):
        return []
    out: list[tuple[Loc, str]] = []
    for error in sorted(validator.iter_errors(value), key=_order):
        out.extend(_messages(error, words))
    # one message per place and text, in the order the value is written
    return list(dict.fromkeys(out))


def _order(error: ValidationError) -> tuple[str, ...]:
    return tuple(str(p) for p in error.absolute_path)


def _messages(error: ValidationError, words: dict[str, str]) -> Iterator[tuple[Loc, str]]:
    loc: Loc = tuple(error.absolute_path)
    keyword: Any = error.validator
    instance: Any = error.instance
    expected: Any = error.validator_value
    schema: Any = error.schema
    if keyword == "required" and isinstance(instance, dict):
        properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
        for name in expected:
            if name not in instance:
                hint = properties.get(name, {}).get("description") if properties else None
                yield (*loc, name), f"missing; add it{': ' + hint if hint else ''}"
    elif keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = list(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        listed = ", ".join(allowed) if allowed else "none"
        for key in instance:
            if key in allowed or any(re.search(p, key) for p in patterns):
                continue
            yield (
                (*loc, key),
                f"unknown key {show(key)}; the keys allowed here are {listed}"
                f"{did_you_mean(key, allowed)}",
            )
    elif keyword == "type":
        kinds = [expected] if isinstance(expected, str) else list(expected)
        wanted = " or ".join(words.get(k, k) for k in kinds)
        quote = "; put it in quotes" if words is _YAML_WORDS and "string" in kinds else ""
        yield loc, f"expected {wanted}, got {show(instance)}{quote}"
    elif keyword in ("enum", "const"):
        choices = [str(c) for c in (expected if keyword == "enum" else [expected])]
        listed = ", ".join(choices) if choices else "(nothing: the list of choices is empty)"
        yield loc, f"{show(instance)} is not one of {listed}{did_you_mean(str(instance), choices)}"
    elif keyword == "minLength" and isinstance(instance, str) and not instance:
        yield loc, "is empty; write some text"
    elif keyword in ("minimum", "exclusiveMinimum"):
        bound = "at least" if keyword == "minimum" else "more than"
        yield loc, f"is {show(instance)}; it must be {bound} {expected}"
    elif keyword in ("maximum", "exclusiveMaximum"):
        bound = "at most" if keyword == "maximum" else "less than"
        yield loc, f"is {show(instance)}; it must be {bound} {expected}"
    elif keyword == "minItems":
        empty = "is empty" if not instance else f"has {len(instance)} item(s)"
        yield loc, f"{empty}; give at least {expected} item(s)"
    elif keyword == "pattern":
        yield loc, f"{show(instance)} does not match the pattern {show(expected)}"
    else:
        yield loc, error.message
