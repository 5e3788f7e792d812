"""Reading a suite's YAML safely: plain data only, a key written twice refused rather
than silently dropped, anchors and aliases refused (the data is a tree, so every check
and hash walks each value once), and values YAML would turn into something other than
JSON named with the fix (put it in quotes).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import yaml

from passhat.plain import Loc, show

# ----------------------------------------------------------------------- YAML


# libyaml's parser when PyYAML was built with it (its wheels are): several times
# faster on a suite of a thousand cases; the safe constructor is the same Python code.
if hasattr(yaml, "CSafeLoader"):  # noqa: SIM108  (mypy needs a plain class for the base)
    _SafeLoader = yaml.CSafeLoader
else:  # pragma: no cover - PyYAML built without libyaml
    _SafeLoader = yaml.SafeLoader  # type: ignore[misc,assignment]


class _UniqueKeyLoader(_SafeLoader):
    """SafeLoader that refuses a key written twice in one mapping."""

    plain: bool = True
    """`_load_yaml`'s finding: nothing but JSON's kinds of values read so far."""

    # The safe loader has no path resolvers, so the composer's two calls per node to
    # descend and ascend them do nothing: they are answered by builtins that do nothing
    # either (`{}.get(node, index)`, `{}.clear()`), which cost no Python frame (a
    # tenth of a case file's load as Python methods; a class attribute that is a
    # builtin is not bound to the loader).
    descend_resolver: Any = {}.get
    ascend_resolver: Any = {}.clear

    # libyaml asks this for every node: the base class's answer, without its list
    # concatenation per scalar and path-resolver checks (a safe loader has none).
    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in _FIRST_CHAR_RESOLVERS.get(value[:1], _ANY_CHAR_RESOLVERS):
                    if regexp.match(value):
                        return tag
            return _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str | int | float | bool) and key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {show(key)} is written twice (first on line "
                    f"{seen[key].line + 1}); keep one",
                    key_node.start_mark,
                )
            if isinstance(key, str | int | float | bool):
                seen[key] = key_node.start_mark
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_INT = "tag:yaml.org,2002:int"
_ANY_CHAR_RESOLVERS = list(_UniqueKeyLoader.yaml_implicit_resolvers.get(None, []))
_FIRST_CHAR_RESOLVERS: dict[Any, list[tuple[str, Any]]] = {
    first: list(resolvers) + _ANY_CHAR_RESOLVERS
    for first, resolvers in _UniqueKeyLoader.yaml_implicit_resolvers.items()
    if first is not None
}
"""The implicit resolvers of a plain scalar by its first character ('' for an empty one)."""


def load_yaml(text: str) -> Any:
    """`yaml.load(text, Loader=_UniqueKeyLoader)`, several times faster on case files.

    libyaml composes the node tree (tags already resolved); plain mappings,
    sequences and strings become Python values here in one tight recursion, and
    anything else (numbers, booleans, null, dates, an unusual key) goes through the
    safe constructor as before: same values, same errors."""
    return _load_yaml(text)[0]


def _load_yaml(text: str) -> tuple[Any, bool]:
    """`load_yaml`'s value, and True when it surely holds only what JSON holds (text
    keys; text, whole and finite numbers, booleans, null): found while the value is
    built, so a file is not walked a second time to check it. False: anything else
    was read somewhere (`_json_problems` names it, or finds nothing after all)."""
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, True
        loader.plain = True
        return _value(node, loader), loader.plain
    finally:
        loader.dispose()


_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})


def _value(node: yaml.Node, loader: _UniqueKeyLoader) -> Any:
    if isinstance(node, yaml.ScalarNode):
        tag = node.tag
        if tag == _STR:
            return node.value
        if tag == _INT:
            text = node.value
            if text.isascii() and text.isdigit() and (len(text) == 1 or text[0] != "0"):
                return int(text)  # plain decimal; signs, 0x, 0o, 1_000, 1:30 go the long way
        value = loader.construct_object(node, deep=True)
        kind = type(value)
        if kind not in _PLAIN_SCALARS and not (kind is float and math.isfinite(value)):
            loader.plain = False  # a date, NaN, bytes...: named after the load
        return value
    if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ:
        # text items inline: a call per scalar is most of this function's time
        return [
            item.value
            if type(item) is yaml.ScalarNode and item.tag == _STR
            else _value(item, loader)
            for item in node.value
        ]
    if isinstance(node, yaml.MappingNode) and node.tag == _MAP:
        out: dict[Any, Any] = {}
        marks: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if (
                not isinstance(key_node, yaml.ScalarNode)
                or key_node.tag == "tag:yaml.org,2002:merge"
            ):
                loader.plain = False
                return loader.construct_object(node, deep=True)  # the general path
            if key_node.tag == _STR:
                key = key_node.value
            else:
                key = _value(key_node, loader)
                if type(key) is not str:
                    loader.plain = False
            if key in marks:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {show(key)} is written twice (first on line "
                    f"{marks[key].line + 1}); keep one",
                    key_node.start_mark,
                )
            marks[key] = key_node.start_mark
            if type(value_node) is yaml.ScalarNode and value_node.tag == _STR:
                out[key] = value_node.value
            else:
                out[key] = _value(value_node, loader)
        return out
    loader.plain = False  # a tagged collection (!!set, !!omap...)
    return loader.construct_object(node, deep=True)


def _anchor_problem(text: str) -> str | None:
    """Where a YAML text first writes an anchor or alias, as a message; None if nowhere.

    Suites refuse them: an alias makes two places of the data one object, so a few
    hundred bytes of nested aliases expand into millions of nodes for the checks and
    hashes to walk, and an alias inside its own anchor is a cycle. libyaml composes
    nodes in C, so this looks at the parser's events instead of the composer's nodes.
    """
    if "&" not in text and "*" not in text:
        return None  # neither can be written without its indicator: no parse needed
    for event in yaml.parse(text, Loader=_SafeLoader):
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            mark = event.start_mark
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            kind = "alias *" if isinstance(event, yaml.AliasEvent) else "anchor &"
            return (
                f"{where}YAML anchors and aliases are not allowed in suites; write the "
                f"value out (found the {kind}{event.anchor})"
            )
    return None


def _yaml_message(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = " ".join((getattr(error, "problem", None) or str(error)).split())  # one line
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    if "could not determine a constructor" in problem or "python/" in problem:
        problem += "; passhat reads plain YAML data only (no !tags)"
    return f"{where}invalid YAML: {problem}"


def _json_problems(value: Any, loc: Loc = ()) -> Iterator[tuple[Loc, str]]:
    """What YAML read that JSON cannot hold (dates, sets, non-text keys, NaN...)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield (*loc, str(key)), f"the key {show(key)} is not text; put it in quotes"
            else:
                yield from _json_problems(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_problems(item, (*loc, index))
    elif isinstance(value, float) and not math.isfinite(value):
        yield loc, f"{value} is not a number JSON can hold; write a finite number"
    elif not (value is None or isinstance(value, str | int | float | bool)):
        kind = type(value).__name__
        yield loc, f"YAML read this as a {kind} ({value}); put it in quotes to keep it text"
