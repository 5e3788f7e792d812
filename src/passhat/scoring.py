"""Scorers: grade a run's final state against the case's goal state.

A suite lists its scorers in `suite.yaml`; a run passes only if every one
passes. Each scorer returns one detail dict, `{"scorer": name, "passed": bool,
...}`, kept with the run so a report can say *why* it failed:

- `exact_set` (path, item): the items at `path` of the final state must equal
  the goal's, as a multiset: one item missing or one extra fails, and an item
  written twice where the goal has it once is an extra. Items are compared by
  their item string. With an `item` template, an object holding every field it
  names is the template filled from those fields (`AC{ac}:{label}` gives
  `AC3:conflict`; fields the template does not name, like a free-text note, are
  ignored); any other item (the text "AC3:conflict", an object lacking a field)
  is not an item of that shape: it is named by its canonical JSON and never
  equals a templated item, so it counts as an extra. Without a template, text
  items are compared as they are and anything else as canonical JSON. Details
  add `path`, `expected`, `actual`, `missing`, `extra`: sorted lists of item
  strings, an item repeated as often as it occurs (numbers inside compared as
  numbers, so AC10 sorts after AC9). A path the final state lacks, or that holds
  no list, fails with a `problem`.
- `present` (paths): every path must hold something: not missing, not null,
  not blank text, not an empty list or object. Details add `paths`, `empty`.
- custom (`package.module:name` or `file.py:name` beside suite.yaml): called as
  `fn(final_state, goal, **params)`, returns a bool or a dict with a boolean
  `passed` (its other keys go into the details). Checked when the suite loads:
  importable, a plain (not async) callable, and callable with that signature.

A scorer that raises does not fail the run, it makes it errored: `score_run`
raises `ScorerError` with the original message, and the runner records it.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from passhat.imports import load_object
from passhat.plain import MISSING, canonical_json, clone, show
from passhat.plain import get_path as get_path  # re-exported for the reports
from passhat.suite import (
    Case,
    CustomSpec,
    ExactSetSpec,
    PresentSpec,
    ScorerSpec,
    Suite,
    check_scorer_function,
    template_fields,
)

__all__ = [
    "Custom",
    "ExactSet",
    "Present",
    "Score",
    "Scorer",
    "ScorerError",
    "build_scorers",
    "score_run",
]


class ScorerError(Exception):
    """A scorer raised or returned something unusable: the run is errored, not failed."""


@dataclass(frozen=True)
class Score:
    """The verdict of one run and why."""

    passed: bool
    """Every scorer passed."""
    details: list[dict[str, Any]] = field(default_factory=list)
    """One dict per scorer, in suite order: `{"scorer": str, "passed": bool, ...}`."""

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "details": clone(self.details)}


class Scorer(Protocol):
    """Grades a final state against a goal state; returns one detail dict."""

    @property
    def name(self) -> str:
        """What the details call it."""
        ...

    def __call__(self, final_state: dict[str, Any], goal: dict[str, Any]) -> dict[str, Any]:
        """`{"scorer": name, "passed": bool, ...}`."""
        ...


# ------------------------------------------------------------------------ paths


def _templated(item: Any, template: str) -> str | None:
    """The template filled from the item's fields; None unless it is an object holding them."""
    if not isinstance(item, dict):
        return None
    names = template_fields(template)
    if not all(name in item for name in names):
        return None
    return template.format(**{name: item[name] for name in names})


def item_key(item: Any, template: str | None) -> tuple[bool, str]:
    """What an item is compared by: whether the template named it, and its item string.

    The flag keeps an item the template could not name (the text "AC3:conflict")
    from ever equalling one it named, whatever the strings.
    """
    named = _templated(item, template) if template is not None else None
    if named is not None:
        return True, named
    if isinstance(item, str) and template is None:
        return False, item
    return False, canonical_json(item)


def item_string(item: Any, template: str | None) -> str:
    """How an item is named (see the module docstring)."""
    return item_key(item, template)[1]


@functools.lru_cache(maxsize=4096)
def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text) if p)


def sorted_items(items: Iterable[str]) -> list[str]:
    """Item strings, duplicates kept, sorted with numbers compared as numbers."""
    return sorted(items, key=lambda text: (_natural(text), text))


def _names(items: Counter[tuple[bool, str]]) -> list[str]:
    return sorted_items(name for _, name in items.elements())


# --------------------------------------------------------------------- built-in


@dataclass(frozen=True)
class ExactSet:
    """The items at `path` must equal the goal's, as a multiset (see the module docstring)."""

    path: str
    item: str | None = None
    name: str = "exact_set"

    def __call__(self, final_state: dict[str, Any], goal: dict[str, Any]) -> dict[str, Any]:
        wanted = get_path(goal, self.path)
        if not isinstance(wanted, list):
            raise ScorerError(f"exact_set: the goal state has no list at {self.path}")
        expected = Counter(item_key(i, self.item) for i in wanted)
        value = get_path(final_state, self.path)
        problem = None
        if value is MISSING:
            problem, value = f"{self.path} is not in the final state", []
        elif not isinstance(value, list):
            problem, value = f"{self.path} holds {show(value)}, not a list", []
        actual = Counter(item_key(i, self.item) for i in value)
        missing, extra = expected - actual, actual - expected
        detail: dict[str, Any] = {
            "scorer": self.name,
            "passed": problem is None and not missing and not extra,
            "path": self.path,
            "expected": _names(expected),
            "actual": _names(actual),
            "missing": _names(missing),
            "extra": _names(extra),
        }
        if problem is not None:
            detail["problem"] = problem
        return detail


def is_present(value: Any) -> bool:
    """Holds something: not missing, null, blank text, or an empty list or object."""
    if value is MISSING or value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | dict):
        return bool(value)
    return True


@dataclass(frozen=True)
class Present:
    """Every path of the final state must hold something."""

    paths: tuple[str, ...]
    name: str = "present"

    def __call__(self, final_state: dict[str, Any], goal: dict[str, Any]) -> dict[str, Any]:
        empty = [p for p in self.paths if not is_present(get_path(final_state, p))]
        return {"scorer": self.name, "passed": not empty, "paths": list(self.paths), "empty": empty}


@dataclass(frozen=True)
class Custom:
    """A user's scorer: `fn(final_state, goal, **params)` -> bool | dict."""

    name: str
    fn: Callable[..., Any]
    params: dict[str, Any] = field(default_factory=dict)

    def __call__(self, final_state: dict[str, Any], goal: dict[str, Any]) -> dict[str, Any]:
        result = self.fn(final_state, goal, **self.params)
        if isinstance(result, bool):
            return {"scorer": self.name, "passed": result}
        if isinstance(result, dict) and isinstance(result.get("passed"), bool):
            try:
                json.dumps(result)
            except (TypeError, ValueError) as error:
                raise ScorerError(
                    f"scorer {self.name} returned details that are not JSON ({error}); "
                    "return plain dicts, lists, text and numbers"
                ) from None
            return {**result, "scorer": self.name, "passed": result["passed"]}
        raise ScorerError(
            f"scorer {self.name} returned {show(result)}; return True/False or a dict "
            "with a boolean 'passed'"
        )


# ---------------------------------------------------------------------- custom


def resolve_custom(spec: CustomSpec, suite_dir: Path) -> Custom:
    """Import a user's scorer and check it can be called; ConfigError otherwise."""
    fn = load_object(spec.ref, suite_dir, what="")
    check_scorer_function(fn, spec.ref, spec.params)
    return Custom(name=spec.ref, fn=fn, params=dict(spec.params))


# ---------------------------------------------------------------------- scoring


def build_scorers(suite: Suite) -> list[Scorer]:
    """The suite's scorers, ready to call; ConfigError when a custom one cannot be used."""
    return [_build(spec, suite.path) for spec in suite.defaults.scorers]


def _build(spec: ScorerSpec, suite_dir: Path) -> Scorer:
    if isinstance(spec, ExactSetSpec):
        return ExactSet(spec.path, spec.item)
    if isinstance(spec, PresentSpec):
        return Present(spec.paths)
    return resolve_custom(spec, suite_dir)


_BUILT: dict[tuple[Path, str], list[Scorer]] = {}


def _scorers_for(suite: Suite) -> list[Scorer]:
    key = (suite.path, suite.hash)
    if key not in _BUILT:
        _BUILT[key] = build_scorers(suite)
    return _BUILT[key]


def score_run(suite: Suite, case: Case, final_state: dict[str, Any]) -> Score:
    """Grade one run's final state; ScorerError when a scorer raises (the run errored)."""
    details: list[dict[str, Any]] = []
    for scorer in _scorers_for(suite):
        # A user's scorer gets its own copies: it cannot change what the next scorer
        # sees, nor the final state that is stored. The built-in ones only read.
        state, goal = (
            (clone(final_state), clone(case.goal))
            if isinstance(scorer, Custom)
            else (final_state, case.goal)
        )
        try:
            details.append(scorer(state, goal))
        except ScorerError:
            raise
        except Exception as error:  # a scorer's bug makes the run errored, not failed
            raise ScorerError(
                f"scorer {scorer.name} raised {type(error).__name__}: {error}"
            ) from error
    return Score(passed=all(d["passed"] for d in details), details=details)
