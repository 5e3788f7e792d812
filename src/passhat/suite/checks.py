"""Checks of a suite's parts that need no schema library: dotted paths, item templates,
what a goal lacks for the scorers, and custom scorer functions. Pure: handed parsed data,
they return problems; validation.py holds the files' strict models, shapes.py their
plain tables, and loading.py reads the files.
"""

from __future__ import annotations

import functools
import inspect
import re
import string
from collections.abc import Sequence
from typing import Any

from passhat.errors import ConfigError
from passhat.plain import MISSING, Loc, get_path, path_loc, show
from passhat.suite.model import EqualsSpec, ExactSetSpec, ScorerSpec

_PATH = re.compile(r"^[^.\s]+(\.[^.\s]+)*$")


def _path_problem(path: str) -> str | None:
    if _PATH.match(path):
        return None
    return f"{show(path)} is not a dotted path; write keys joined by dots, e.g. ticket.annotations"


MAX_FORMAT_NUMBER = 100
"""Largest width or precision an item template may ask for: `{ac:>10000000000}`
would make every item string gigabytes long."""


def _template_problem(template: str) -> str | None:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        return f"{show(template)} is not a valid item template ({error}); e.g. 'AC{{ac}}:{{label}}'"
    fields = [f for _, f, _, _ in parsed if f is not None]
    for _, name, spec, _ in parsed:
        numbers = [int(n) for n in re.findall(r"\d+", spec or "")]
        if numbers and max(numbers) > MAX_FORMAT_NUMBER:
            return (
                f"{show(template)}: the format of {{{name}}} asks for a width or precision of "
                f"{max(numbers):,}; use at most {MAX_FORMAT_NUMBER}, e.g. 'AC{{ac:>3}}:{{label}}'"
            )
    bad = [f for f in fields if not f.isidentifier()]
    if not fields or bad:
        return (
            f"{show(template)} must name item fields in braces, each a plain key, "
            "e.g. 'AC{ac}:{label}'"
        )
    return None


@functools.lru_cache(maxsize=256)
@functools.lru_cache(maxsize=256)
def template_fields(template: str) -> tuple[str, ...]:
    """The fields an item template names, e.g. `AC{ac}:{label}` -> (ac, label) (cached:
    grading asks it for every item of every run)."""
    return tuple(f for _, f, _, _ in string.Formatter().parse(template) if f)


def goal_item_keys(specs: Sequence[ScorerSpec], goal: dict[str, Any]) -> dict[int, set[str]]:
    """Per set scorer with an item template (by index), the keys the goal's items hold."""
    out: dict[int, set[str]] = {}
    for index, spec in enumerate(specs):
        if isinstance(spec, ExactSetSpec) and spec.item is not None:
            value = get_path(goal, spec.path)
            keys = out.setdefault(index, set())
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        keys.update(str(key) for key in item)
    return out


_LACKS = re.compile(r"lacks (.+?), which the scorer's item ")


def _lacked(message: str) -> list[str]:
    """The fields a `check_goal_items` message says an item lacks ([] for others)."""
    found = _LACKS.match(message)
    return found.group(1).split(", ") if found else []


def goal_lacks(specs: Sequence[ScorerSpec], goal: dict[str, Any]) -> list[tuple[int, Loc, str]]:
    """What a goal lacks for the scorers that compare paths of it: (scorer index,
    location in the case file, message)."""
    out: list[tuple[int, Loc, str]] = []
    for index, spec in enumerate(specs):
        if isinstance(spec, ExactSetSpec):
            out += [
                (index, ("goal", *loc), message) for loc, message in check_goal_items(spec, goal)
            ]
        elif (
            isinstance(spec, EqualsSpec)
            and spec.path != "."
            and get_path(goal, spec.path) is MISSING
        ):
            out.append(
                (
                    index,
                    ("goal", *path_loc(spec.path)),
                    "missing; the equals scorer in suite.yaml compares this path, so "
                    "write the expected value here",
                )
            )
    return out


def check_goal_items(spec: ExactSetSpec, goal: dict[str, Any]) -> list[tuple[Loc, str]]:
    """Load-time: the goal holds a list at the scorer's path, each item nameable."""
    value = get_path(goal, spec.path)
    loc = path_loc(spec.path)
    if value is MISSING:
        return [
            (
                loc,
                f"missing; the {spec.kind} scorer in suite.yaml compares this path, so write "
                "the expected items here ([] when none is expected)",
            )
        ]
    if not isinstance(value, list):
        return [(loc, f"expected a list of items for the {spec.kind} scorer, got {show(value)}")]
    if spec.item is None:
        return []
    names = template_fields(spec.item)
    out: list[tuple[Loc, str]] = []
    for index, item in enumerate(value):
        lacking = [n for n in names if not isinstance(item, dict) or n not in item]
        if lacking:
            out.append(
                (
                    (*loc, index),
                    f"lacks {', '.join(lacking)}, which the scorer's item {show(spec.item)} names",
                )
            )
    return out


def check_scorer_function(fn: Any, ref: str, params: dict[str, Any]) -> None:
    """A custom scorer must be a plain callable taking (final_state, goal, **params)."""
    if not callable(fn):
        raise ConfigError(f"{ref}: is a {type(fn).__name__}, not a function")
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 (an object's async __call__)
    ):
        raise ConfigError(f"{ref}: is async; a scorer is a plain function")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins without a signature: trust them
    try:
        signature.bind(object(), object(), **params)
    except TypeError as error:
        shown = "".join(f", {k}=..." for k in params)
        raise ConfigError(
            f"{ref}: cannot be called as {getattr(fn, '__name__', 'it')}"
            f"(final_state, goal{shown}): {error}; define it as "
            "def name(final_state, goal, **params) -> bool | dict"
        ) from None
