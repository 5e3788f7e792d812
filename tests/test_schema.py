"""schema.py's caches and quick check: the same answers as jsonschema, computed once."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from conftest import EXAMPLES, TICKET_CASE, SuiteWriter
from passhat import schema
from passhat.envs.ticket import GOAL_SCHEMA, INPUT_SCHEMA, _update_schema
from passhat.errors import SuiteError
from passhat.schema import schema_errors, schema_problems
from passhat.suite import load_suite

# ---------------------------------------------------------------- quick check


class Text(str):
    """A str subclass: jsonschema treats it as a string; the quick check leaves it alone."""


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.5, math.inf, math.nan]),
    st.sampled_from(["", "a", "ab", "abc", "x y"]),
    st.builds(Text, st.sampled_from(["", "a", "abc"])),
)
keys = st.sampled_from(["a", "b", "c"])
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=3),
        st.dictionaries(st.integers(0, 1), inner, max_size=1),
    ),
    max_leaves=8,
)
type_names = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])


SIZES = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"]
BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]


def _keyword(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    number = st.sampled_from([0, 1, 2, 1.5, -1])
    size = st.integers(0, 3)
    choice = st.sampled_from([None, True, False, 0, 1, 1.0, "a", "b", [1], {"a": 1}])
    return st.one_of(
        st.builds(lambda t: {"type": t}, type_names),
        st.builds(lambda t: {"type": t}, st.lists(type_names, min_size=1, max_size=3)),
        st.builds(lambda p: {"properties": p}, st.dictionaries(keys, inner, max_size=3)),
        st.builds(lambda r: {"required": r}, st.lists(keys, max_size=3, unique=True)),
        st.builds(lambda s: {"additionalProperties": s}, inner),
        st.builds(lambda s: {"items": s}, inner),
        st.builds(lambda k, n: {k: n}, st.sampled_from(SIZES), size),
        st.builds(lambda k, n: {k: n}, st.sampled_from(BOUNDS), number),
        st.builds(lambda c: {"enum": c}, st.lists(choice, min_size=1, max_size=4)),
        st.builds(lambda c: {"const": c}, choice),
        st.just({"description": "notes only", "format": "date"}),
        st.just({"pattern": "^a"}),  # not handled: jsonschema decides
    )


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


schemas: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.booleans(), st.just({})),
    lambda inner: st.lists(_keyword(inner), min_size=1, max_size=4).map(_merge),
    max_leaves=6,
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, values)
def test_the_quick_check_never_passes_what_jsonschema_refuses(
    given_schema: Any, value: Any
) -> None:
    """The quick check may only say "surely valid": when it does, jsonschema agrees, so
    schema_problems answers exactly as jsonschema alone would."""
    validator = Draft202012Validator(given_schema)
    quick = schema._quick_check(given_schema)
    if quick is not None and quick(value):
        assert validator.is_valid(value)
    if isinstance(given_schema, dict):
        assert (schema_problems(value, given_schema) == []) == validator.is_valid(value)


def test_the_built_in_schemas_take_the_quick_path() -> None:
    """Without this, the suite loader would silently fall back to jsonschema's walk."""
    labels = ("conflict", "unverifiable")
    for built_in, value in (
        (INPUT_SCHEMA, TICKET_CASE["input"]),
        (GOAL_SCHEMA, TICKET_CASE["goal"]),
        (
            _update_schema(labels),
            {"key": "T-1", "goal": "g", "scope_in": [], "scope_out": [], "annotations": []},
        ),
    ):
        quick = schema._quick_check(built_in)
        assert quick is not None
        assert quick(value)
    assert schema._quick_check({"anyOf": [{"type": "string"}]}) is None


# the meta-schema's quick check: schemas, and schemas broken in the ways it must catch
broken = st.sampled_from(
    [
        {"type": "text"},
        {"type": []},
        {"type": ["string", "string"]},
        {"type": 3},
        {"required": ["a", "a"]},
        {"required": [1]},
        {"required": "a"},
        {"minLength": -1},
        {"minItems": 1.5},
        {"maxLength": True},
        {"maximum": "3"},
        {"minimum": None},
        {"enum": "a"},
        {"description": 3},
        {"format": ["date"]},
        {"examples": 1},
        {"properties": {"a": 3}},
        {"properties": []},
        {"items": 3},
        {"additionalProperties": "x"},
        {"pattern": 3},
        {"$schema": 3},
    ]
)
maybe_broken: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.booleans(), st.just({}), broken),
    lambda inner: st.lists(st.one_of(_keyword(inner), broken), min_size=1, max_size=4).map(_merge),
    max_leaves=6,
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(schemas, maybe_broken))
def test_the_quick_meta_check_never_passes_what_the_meta_schema_refuses(given: Any) -> None:
    """Without jsonschema, a schema is taken as valid only when the meta-schema agrees;
    schema_errors answers exactly as the meta-schema alone would."""
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    if schema._surely_schema(given):
        assert meta.is_valid(given)
    assert (schema_errors(given) == []) == meta.is_valid(given)


def test_plain_suites_load_and_run_without_jsonschema() -> None:
    """The built-in worlds' schemas and a case that fits them need no jsonschema: a
    fresh process loads the seed suite and calls a tool without importing it."""
    code = (
        "import sys, asyncio\n"
        "from passhat.suite import load_suite\n"
        "from passhat.env import make_environment\n"
        f"suite = load_suite({str(EXAMPLES / 'clarify')!r})\n"
        "env = make_environment(suite, suite.cases[0])\n"
        "asyncio.run(env.call('get_ticket', {'key': 'SHOP-1042'}))\n"
        "print('jsonschema' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    # and one that does not fit still gets jsonschema's words
    assert schema_problems(
        {"key": 1}, {"type": "object", "properties": {"key": {"type": "string"}}}
    )


# ------------------------------------------------- meta-schema checks, once each


def _cases(writer: SuiteWriter, n: int) -> None:
    for i in range(n):
        writer.cases[f"c{i}.yaml"] = dict(TICKET_CASE, id=f"c-{i}")


@pytest.mark.parametrize("n", [1, 12])
def test_tool_schemas_are_checked_once_per_suite_not_once_per_case(tmp_path: Path, n: int) -> None:
    """Each distinct schema (the ticket world's input, goal and three tools) meets the
    Draft 2020-12 meta-schema once, however many cases the suite holds."""
    writer = SuiteWriter(tmp_path / "suite")
    _cases(writer, n)
    schema._meta_errors_of_json.cache_clear()
    schema._CHECKED.clear()
    assert len(load_suite(writer.write()).cases) == n + 1
    assert schema._meta_errors_of_json.cache_info().misses == 5


PER_CASE_ENV = '''
from typing import Any
from passhat import Environment, tool


def _lookup_parameters(env: "Lookup") -> dict[str, Any]:
    return {"type": "object", "properties": {"q": {"type": env.kind}}}


class Lookup(Environment):
    input_schema = {"type": "object", "required": ["kind"]}
    goal_schema = {"type": "object"}

    def setup(self, input: dict[str, Any]) -> None:
        self.kind = input["kind"]

    @tool(parameters=_lookup_parameters)
    def lookup(self, q: Any) -> Any:
        """Look something up."""
        return q

    def final_state(self) -> dict[str, Any]:
        return {}
'''


def test_a_bad_tool_schema_is_refused_in_every_case_and_every_load(tmp_path: Path) -> None:
    """The checks are cached, the refusals too: each case whose tool schema is broken is
    named, on the first load and the next, with the same one-line message."""
    root = tmp_path / "suite"
    (root / "cases").mkdir(parents=True)
    (root / "lookup.py").write_text(PER_CASE_ENV, encoding="utf-8")
    suite = {
        "name": "lookup",
        "environment": "lookup.py:Lookup",
        "defaults": {"agent": "x:y", "scorers": [{"equals": "."}]},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    for name, kind in (("a", "string"), ("b", "text"), ("c", "string"), ("d", "text")):
        case = {"id": name, "input": {"kind": kind}, "goal": {}}
        (root / "cases" / f"{name}.yaml").write_text(yaml.safe_dump(case), encoding="utf-8")
    seen = []
    for _ in range(2):
        with pytest.raises(SuiteError) as caught:
            load_suite(root)
        seen.append(caught.value.problems)
    assert seen[0] == seen[1]
    assert [p.split(": ")[0] for p in seen[0]] == [f"{root}/cases/b.yaml", f"{root}/cases/d.yaml"]
    assert seen[0][0] == (
        f"{root}/cases/b.yaml: tools: Lookup: tool lookup: parameters are not a valid JSON "
        "Schema: properties/q/type: 'text' is not valid under any of the given schemas"
    )


def test_schema_errors_answers_the_same_from_its_cache() -> None:
    bad = {"type": "object", "properties": {"x": {"type": "text"}}}
    first = schema_errors(bad)
    assert first and first == schema_errors(dict(bad)) == schema_errors(bad)
    first.append("changed by a caller")
    assert "changed by a caller" not in schema_errors(bad)
    assert schema_errors({"type": "object"}) == []
    assert schema_errors(["not", "a", "schema"])[0].startswith("expected a JSON Schema")
    # not plain JSON: checked without the cache, as jsonschema sees it
    assert schema_errors({"type": "object", "required": ("a",)}) != []
