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

jsonschema is imported only when a quick check (below) cannot answer: a suite of
plain schemas and values that fit them loads, and its runs call tools, without it
(its import was a tenth of `passhat run`'s start).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Sized
from typing import TYPE_CHECKING, Any

from passhat.plain import Loc, did_you_mean, show

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

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


Check = Callable[[Any], bool]


class _Compiled:
    """One schema's quick check, and its jsonschema validator once one is needed."""

    __slots__ = ("_validator", "quick", "schema_json")

    def __init__(self, schema_json: str) -> None:
        self.schema_json = schema_json
        self.quick = _quick_check(json.loads(schema_json))
        self._validator: Draft202012Validator | None = None

    @property
    def validator(self) -> Draft202012Validator:
        if self._validator is None:
            from jsonschema import Draft202012Validator

            self._validator = Draft202012Validator(json.loads(self.schema_json))
        return self._validator


@functools.lru_cache(maxsize=512)
def _compiled(schema_json: str) -> _Compiled:
    return _Compiled(schema_json)


_BY_ID: dict[int, tuple[Any, _Compiled]] = {}


def _validator_for(schema: dict[str, Any]) -> _Compiled:
    """The schema's quick check and validator: by identity first (a tool's schema is
    one object for every call), else by its JSON in written order (messages list keys
    as written)."""
    hit = _BY_ID.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    compiled = _compiled(json.dumps(schema, ensure_ascii=False))
    if len(_BY_ID) > 1024:
        _BY_ID.clear()
    _BY_ID[id(schema)] = (schema, compiled)  # kept alive: the id is never reused
    return compiled


def schema_errors(schema: Any) -> list[str]:
    """What makes `schema` not a valid Draft 2020-12 JSON Schema (empty when it is one).

    Checked once per distinct schema (by its JSON, keys in written order): a tool's
    schema is the same for every case of a suite, and a check against the
    meta-schema costs milliseconds, so a thousand cases must not pay it a thousand
    times. A schema holding anything but plain JSON values is checked every time.
    Like the validators below, a schema is taken not to change once it is in use."""
    if not isinstance(schema, dict | bool):
        return [f"expected a JSON Schema (a mapping such as {{type: object}}), got {show(schema)}"]
    hit = _CHECKED.get(id(schema))
    if hit is not None and hit[0] is schema:
        return list(hit[1])
    if not _plain_json(schema):
        return list(_meta_errors(schema))
    found = _meta_errors_of_json(json.dumps(schema, ensure_ascii=False))
    if len(_CHECKED) > 1024:
        _CHECKED.clear()
    _CHECKED[id(schema)] = (schema, found)  # kept alive: the id is never reused
    return list(found)


_CHECKED: dict[int, tuple[Any, tuple[str, ...]]] = {}
"""schema_errors' answers by the schema object's identity: a class's tool schema is
one object for every case, so most cases skip even writing it as JSON."""


@functools.lru_cache(maxsize=1024)
def _meta_errors_of_json(schema_json: str) -> tuple[str, ...]:
    """The meta-schema check of one schema, by its JSON text (cache_info() counts checks)."""
    schema = json.loads(schema_json)
    return () if _surely_schema(schema) else _meta_errors(schema)


def _meta_errors(schema: Any) -> tuple[str, ...]:
    out = []
    for error in _meta_validator().iter_errors(schema):
        where = "/".join(str(p) for p in error.absolute_path)
        out.append(f"{where + ': ' if where else ''}{error.message}")
    return tuple(out)


@functools.cache
def _meta_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


def _plain_json(value: Any) -> bool:
    """Only dicts with text keys, lists, text, numbers, booleans and null: what
    JSON text gives back as it was (a tuple would come back a list)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return True
    if kind is dict:
        return all(type(key) is str and _plain_json(item) for key, item in value.items())
    if kind is list:
        return all(_plain_json(item) for item in value)
    return False


def schema_problems(
    value: Any, schema: dict[str, Any], *, yaml: bool = False
) -> list[tuple[Loc, str]]:
    """Every way `value` breaks `schema`, as (location, message) pairs; [] when it fits.

    `schema` must be valid (see `schema_errors`); `yaml` picks the words of a file's reader.
    """
    words = _YAML_WORDS if yaml else _JSON_WORDS
    compiled = _validator_for(schema)
    quick = compiled.quick
    if quick is not None and quick(value):
        return []
    validator = compiled.validator
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
                sub = properties.get(name) if isinstance(properties, dict) else None
                hint = sub.get("description") if isinstance(sub, dict) else None
                yield (*loc, name), f"missing; add it{': ' + hint if hint else ''}"
    elif keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = list(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        listed = ", ".join(allowed) if allowed else "none"
        for key in instance:
            if key in allowed or any(re.search(p, str(key)) for p in patterns):
                continue
            yield (
                (*loc, key),
                f"unknown key {show(key)}; the keys allowed here are {listed}"
                f"{did_you_mean(str(key), allowed)}",
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


# ------------------------------------------------------------------ quick check
#
# jsonschema walks a schema by evolving a validator per keyword and per level
# (a third of a millisecond for a ticket), and a suite of a thousand cases checks
# four values per case. Most schemas use a handful of keywords, so they are
# compiled once into nested closures that answer one question: "surely valid?".
# The answer is one-sided: True only when jsonschema would find no error (exact
# plain JSON types only: no subclasses, no float for an integer, enum of plain
# scalars); anything else, and any schema using another keyword, goes to
# jsonschema, which decides and words the messages. tests/test_schema.py checks
# that True never disagrees with jsonschema.

_PLAIN: frozenset[type] = frozenset({str, int, float, bool, type(None), dict, list})
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
_NOTES = frozenset({"description", "title", "default", "examples", "$comment", "format"})
"""Keywords that assert nothing (`format` is not asserted without a format checker)."""
_NUMBER = (int, float)


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _quick_check(schema: Any) -> Check | None:
    """A "surely valid" check of `schema`, or None when it uses a keyword not handled here.

    One closure per schema level: the type test leads, and an object's properties,
    additionalProperties and required are one pass over its keys."""
    if schema is True:
        return _always
    if schema is False:
        return _never
    if type(schema) is not dict:
        return None
    allowed = _PLAIN
    checks: list[Check] = []
    for key, want in schema.items():
        if key in _NOTES or key in _MAPPING_KEYWORDS:
            continue
        if key == "type":
            types = _type_set(want)
            if types is None:
                return None
            allowed = allowed & types
            continue
        made = _keyword_check(key, want, schema)
        if made is None:
            return None
        if made is not _always:
            checks.append(made)
    if any(key in schema for key in _MAPPING_KEYWORDS):
        mapping = _mapping_check(schema)
        if mapping is None:
            return None
        checks.append(mapping)
    return _all_of(allowed, checks)


def _all_of(allowed: frozenset[type], checks: list[Check]) -> Check:
    if not checks:
        return lambda value: type(value) in allowed
    if len(checks) == 1:
        (only,) = checks
        return lambda value: type(value) in allowed and only(value)

    def check(value: Any) -> bool:
        if type(value) not in allowed:
            return False
        for each in checks:  # noqa: SIM110 (a generator per value costs more)
            if not each(value):
                return False
        return True

    return check


def _keyword_check(key: str, want: Any, schema: dict[str, Any]) -> Check | None:
    maker = _MAKERS.get(key)
    return None if maker is None else maker(want, schema)


def _type_set(want: Any) -> frozenset[type] | None:
    names = [want] if isinstance(want, str) else want
    if not isinstance(names, list) or not all(type(n) is str and n in _TYPES for n in names):
        return None
    return frozenset(t for n in names for t in _TYPES[n])


_MAPPING_KEYWORDS = frozenset({"properties", "additionalProperties", "required"})


def _mapping_check(schema: dict[str, Any]) -> Check | None:
    """properties, additionalProperties and required of one schema, in one pass."""
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if type(properties) is not dict or not (
        isinstance(required, list) and all(type(n) is str for n in required)
    ):
        return None
    subs = {name: _quick_check(sub) for name, sub in properties.items()}
    if any(sub is None for sub in subs.values()):
        return None
    checked: dict[str, Check] = {n: c for n, c in subs.items() if c is not _always}  # type: ignore[misc]
    known = frozenset(properties)
    closed = "additionalProperties" in schema
    additional: Check | None = None
    if closed:
        if "patternProperties" in schema:
            return None
        additional = _quick_check(schema["additionalProperties"])
        if additional is None:
            return None
    needed = tuple(required)

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for name in needed:
            if name not in value:
                return False
        for key, item in value.items():
            if closed and type(key) is not str:
                return False
            sub = checked.get(key)
            if sub is not None:
                if not sub(item):
                    return False
            elif closed and key not in known and not additional(item):  # type: ignore[misc]
                return False
        return True

    return check


def _items_check(want: Any, schema: dict[str, Any]) -> Check | None:
    if "prefixItems" in schema:
        return None
    sub = _quick_check(want)
    if sub is None:
        return None

    def check(value: Any) -> bool:
        if type(value) is not list:
            return True
        for item in value:  # noqa: SIM110
            if not sub(item):
                return False
        return True

    return check


def _length_check(kind: type[Sized], low: bool) -> Callable[[Any, dict[str, Any]], Check | None]:
    def make(want: Any, schema: dict[str, Any]) -> Check | None:
        if type(want) is not int:
            return None
        if low:
            return lambda value: type(value) is not kind or len(value) >= want
        return lambda value: type(value) is not kind or len(value) <= want

    return make


def _bound_check(test: Callable[[Any, Any], bool]) -> Callable[[Any, dict[str, Any]], Check | None]:
    def make(want: Any, schema: dict[str, Any]) -> Check | None:
        if type(want) not in _NUMBER:
            return None
        return lambda value: type(value) not in _NUMBER or test(value, want)

    return make


def _choices_check(want: Any, schema: dict[str, Any]) -> Check | None:
    if not isinstance(want, list):
        return None
    # (type, value): true is not 1, as jsonschema's enum says; floats go to jsonschema
    allowed = frozenset((type(c), c) for c in want if type(c) in (str, int, bool) or c is None)

    def check(value: Any) -> bool:
        kind = type(value)
        return (kind is str or kind is int or kind is bool or value is None) and (
            kind,
            value,
        ) in allowed

    return check


def _const_check(want: Any, schema: dict[str, Any]) -> Check | None:
    return _choices_check([want], schema)


_MAKERS: dict[str, Callable[[Any, dict[str, Any]], Check | None]] = {
    "items": _items_check,
    "minLength": _length_check(str, low=True),
    "maxLength": _length_check(str, low=False),
    "minItems": _length_check(list, low=True),
    "maxItems": _length_check(list, low=False),
    "minProperties": _length_check(dict, low=True),
    "maxProperties": _length_check(dict, low=False),
    "minimum": _bound_check(lambda v, b: v >= b),
    "maximum": _bound_check(lambda v, b: v <= b),
    "exclusiveMinimum": _bound_check(lambda v, b: v > b),
    "exclusiveMaximum": _bound_check(lambda v, b: v < b),
    "enum": _choices_check,
    "const": _const_check,
}


# ------------------------------------------------------------- quick meta check
#
# The same one-sided idea for the schemas themselves: True only when the Draft
# 2020-12 meta-schema surely holds (every keyword one the quick check handles, its
# value of the type the meta-schema asks); anything else goes to jsonschema.
# tests/test_schema.py checks that True never disagrees with it.

_TEXT_NOTES = frozenset({"description", "title", "$comment", "format"})
_SIZES = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
)
_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def _surely_schema(schema: Any) -> bool:
    """Whether `schema` (plain JSON) surely is a valid Draft 2020-12 schema."""
    if type(schema) is bool:
        return True
    if type(schema) is not dict:
        return False
    return all(_surely_keyword(key, want) for key, want in schema.items())


def _surely_keyword(key: str, want: Any) -> bool:
    kind = type(want)
    if key in _TEXT_NOTES:
        return kind is str
    if key in ("default", "const"):
        return True
    if key in ("examples", "enum"):
        return kind is list
    if key == "type":
        names = [want] if kind is str else want
        return (
            type(names) is list
            and len(names) > 0
            and all(type(n) is str and n in _TYPES for n in names)
            and len(set(names)) == len(names)
        )
    if key == "properties":
        return kind is dict and all(_surely_schema(sub) for sub in want.values())
    if key in ("additionalProperties", "items"):
        return _surely_schema(want)
    if key == "required":
        return kind is list and all(type(n) is str for n in want) and len(set(want)) == len(want)
    if key in _SIZES:
        return kind is int and want >= 0
    if key in _BOUNDS:
        return kind is int or kind is float
    return False
