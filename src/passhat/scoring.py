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
- `subset` / `superset` (path, item): items named as for exact_set. `subset`
  passes when the final state holds no item the goal lacks (a goal item may be
  missing: "only allowed things"); `superset` when it holds every goal item
  (extras allowed: "at least these"). Same details as exact_set, so item
  stability covers them.
- `equals` (path; `.` for the whole state): the value must equal the goal's as
  JSON (true is not 1; 1 equals 1.0; key order never matters). Details add
  `diff`: one `{path, expected, actual}` per difference, a side left out where
  it has nothing (at most 50).
- `matches` (path, pattern): the text at `path` must match the regular
  expression (searched anywhere; anchor with ^...$). Details add `path`,
  `pattern`. The pattern means what it means to Python's `re`, and is searched
  for at most MATCH_TIMEOUT_S (passhat/searching.py): the text is the agent's,
  and backtracking over it may take minutes. A search that runs out of time
  fails the run, with a `problem` saying so (see `Matches`).
- `present` (paths): every path must hold something: not missing, not null,
  not blank text, not an empty list or object. Details add `paths`, `empty`.
- `judge` (rubric, model, paths, params): a model grades the final state
  against the rubric; see passhat/judge.py. Details add `verdict`, `reasoning`,
  `model`, `model_config`, `usage`.
- custom (`package.module:name` or `file.py:name` beside suite.yaml): called as
  `fn(final_state, goal, **params)`, returns a bool or a dict with a boolean
  `passed` (its other keys go into the details). Checked when the suite loads:
  importable, a plain (not async) callable, and callable with that signature.

A scorer that raises, or a judge that gives no verdict, does not fail the run:
it makes it errored. `score_run` raises `ScorerError` with the original message,
and the runner records it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from passhat import searching
from passhat._leftovers import abandon, run_loop
from passhat.imports import load_object
from passhat.judge import Judge, JudgeError
from passhat.models.base import CallContext
from passhat.plain import MISSING, canonical_json, clone, show
from passhat.plain import get_path as get_path  # re-exported for the reports
from passhat.suite import (
    Case,
    CustomSpec,
    EqualsSpec,
    ExactSetSpec,
    JudgeSpec,
    MatchesSpec,
    PresentSpec,
    ScorerSpec,
    Suite,
    check_scorer_function,
    template_fields,
)

__all__ = [
    "Custom",
    "Equals",
    "ExactSet",
    "Judge",
    "Matches",
    "Present",
    "Score",
    "Scorer",
    "ScorerError",
    "build_scorers",
    "json_diff",
    "prepare_scorers",
    "score_run",
    "score_run_async",
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
    try:
        return template.format(**{name: item[name] for name in names})
    except (ValueError, TypeError):  # "{ac:d}" of a text: the template cannot name it
        return None


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
class Expected:
    """The items a goal holds at a set scorer's path: counted, and named in order."""

    items: Counter[tuple[bool, str]]
    names: tuple[str, ...]


@dataclass(frozen=True)
class ExactSet:
    """The items at `path` must equal the goal's, as a multiset (see the module docstring)."""

    path: str
    item: str | None = None
    name: str = "exact_set"

    def __call__(self, final_state: dict[str, Any], goal: dict[str, Any]) -> dict[str, Any]:
        return self.against(final_state, self.expect(goal))

    def expect(self, goal: dict[str, Any]) -> Expected:
        """What the goal asks, as this scorer compares it (the same for every run of a
        case: `score_run` keeps it per case)."""
        wanted = get_path(goal, self.path)
        if not isinstance(wanted, list):
            raise ScorerError(f"{self.name}: the goal state has no list at {self.path}")
        items = Counter(item_key(i, self.item) for i in wanted)
        return Expected(items, tuple(_names(items)))

    def against(self, final_state: dict[str, Any], expected: Expected) -> dict[str, Any]:
        """The detail of a final state against the goal's `expected` items."""
        value = get_path(final_state, self.path)
        problem = None
        if value is MISSING:
            problem, value = f"{self.path} is not in the final state", []
        elif not isinstance(value, list):
            problem, value = f"{self.path} holds {show(value)}, not a list", []
        actual = Counter(item_key(i, self.item) for i in value)
        missing: list[str] = []
        extra: list[str] = []
        if actual.items() == expected.items.items():  # the common case: all found, no extra
            names = list(expected.names)
        else:
            names = _names(actual)
            missing, extra = _names(expected.items - actual), _names(actual - expected.items)
        # exact_set: neither missing nor extra; subset: nothing extra; superset: nothing missing
        ok = {"subset": not extra, "superset": not missing}.get(
            self.name, not missing and not extra
        )
        detail: dict[str, Any] = {
            "scorer": self.name,
            "passed": problem is None and ok,
            "path": self.path,
            "expected": list(expected.names),
            "actual": names,
            "missing": missing,
            "extra": extra,
        }
        if problem is not None:
            detail["problem"] = problem
        return detail


def _same(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, 1 is 1.0, key order never matters."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def json_diff(expected: Any, actual: Any, path: str = "", limit: int = 50) -> list[dict[str, Any]]:
    """Where two JSON values differ: `{"path", "expected", "actual"}` per difference
    (a side is left out where that side has nothing), at most `limit` of them."""
    out: list[dict[str, Any]] = []

    def walk(want: Any, got: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(want, dict) and isinstance(got, dict):
            for key in [*want, *(k for k in got if k not in want)]:
                at = f"{where}.{key}" if where else str(key)
                if key not in got:
                    out.append({"path": at, "expected": want[key]})
                elif key not in want:
                    out.append({"path": at, "actual": got[key]})
                else:
                    walk(want[key], got[key], at)
        elif isinstance(want, list) and isinstance(got, list):
            for index in range(max(len(want), len(got))):
                at = f"{where}.{index}" if where else str(index)
                if index >= len(got):
                    out.append({"path": at, "expected": want[index]})
                elif index >= len(want):
                    out.append({"path": at, "actual": got[index]})
                else:
                    walk(want[index], got[index], at)
        elif not _same(want, got):
            out.append({"path": where or ".", "expected": want, "actual": got})

    walk(expected, actual, path)
    return out


@dataclass(frozen=True)
class Equals:
    """The value at `path` must equal the goal's (JSON equality); details list the diff."""

    path: str
    name: str = "equals"

    def __call__(self, final_state: dict[str, Any], goal: dict[str, Any]) -> dict[str, Any]:
        whole = self.path == "."
        wanted = goal if whole else get_path(goal, self.path)
        if wanted is MISSING:
            raise ScorerError(f"equals: the goal state has nothing at {self.path}")
        value = final_state if whole else get_path(final_state, self.path)
        detail: dict[str, Any] = {"scorer": self.name, "path": self.path}
        if value is MISSING:
            return {**detail, "passed": False, "problem": f"{self.path} is not in the final state"}
        prefix = "" if whole else self.path
        diff = json_diff(wanted, value, prefix)
        return {**detail, "passed": not diff, "diff": diff}


MATCH_TIMEOUT_S = 2.0
"""Seconds one `matches` pattern may search one run's text. Python's `re` backtracks:
`coupon.*expir` over "coupon " written 30,000 times (210 KB) took 1.7 s, growing with the
square of the text (a run's 4 MiB: about 11 minutes, the event loop held all along). The
`regex` engine backtracks the same way but stops at a time limit; it releases the GIL,
so grading in a thread leaves the event loop free (execution._grade). Where the two
engines may differ, `re` itself runs, in a child killed at the limit (searching.py)."""


@dataclass(frozen=True)
class Matches:
    """The text at `path` must match a regular expression (searched anywhere in it).

    A search past MATCH_TIMEOUT_S fails the run, with a `problem`: the text is the
    agent's, so what it costs is the agent's result (a limit it ran into). Errored
    would drop the run from the counted runs, and an agent writing such text would
    raise its own pass rate. On a far slower machine a regrade may decide a search
    that timed out here."""

    path: str
    pattern: str
    name: str = "matches"

    def __call__(self, final_state: dict[str, Any], goal: dict[str, Any]) -> dict[str, Any]:
        value = get_path(final_state, self.path)
        detail: dict[str, Any] = {"scorer": self.name, "path": self.path, "pattern": self.pattern}
        if not isinstance(value, str):
            shown = "nothing" if value is MISSING else show(value)
            return {**detail, "passed": False, "problem": f"{self.path} holds {shown}, not text"}
        try:
            found = searching.search(self.pattern, value, MATCH_TIMEOUT_S)
        except TimeoutError:
            problem = (
                f"the pattern ran past {MATCH_TIMEOUT_S:g} s over the {len(value):,} "
                f"characters at {self.path} (the run's own text): no match found, so not passed"
            )
            return {**detail, "passed": False, "problem": problem}
        except (OSError, RuntimeError) as error:  # passhat's own trouble: no verdict
            raise ScorerError(f"matches: could not search {self.path}: {error}") from None
        return {**detail, "passed": found}


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


def build_scorers(suite: Suite) -> list[Scorer | Judge]:
    """The suite's scorers, ready to call; ConfigError when one cannot be used (a custom
    scorer that does not import, a judge whose model cannot be built)."""
    return [_build(spec, suite.path) for spec in suite.defaults.scorers]


def _build(spec: ScorerSpec, suite_dir: Path) -> Scorer | Judge:
    if isinstance(spec, ExactSetSpec):
        return ExactSet(spec.path, spec.item, name=spec.kind)
    if isinstance(spec, EqualsSpec):
        return Equals(spec.path)
    if isinstance(spec, MatchesSpec):
        return Matches(spec.path, spec.pattern)
    if isinstance(spec, PresentSpec):
        return Present(spec.paths)
    if isinstance(spec, JudgeSpec):
        judge = Judge(spec.rubric, spec.model, spec.paths, spec.params, spec.base_url, suite_dir)
        judge.build()  # a missing cassette or key is refused before any run starts
        return judge
    return resolve_custom(spec, suite_dir)


_BUILT: dict[tuple[Path, str], list[Scorer | Judge]] = {}


def prepare_scorers(suite: Suite) -> list[Scorer | Judge]:
    """The suite's scorers, built once per suite content; call it before runs start so
    a scorer that cannot be used is one ConfigError, not an errored run each."""
    key = (suite.path, suite.hash)
    if key not in _BUILT:
        _BUILT[key] = build_scorers(suite)
    return _BUILT[key]


def _grade(
    scorer: Scorer,
    final_state: dict[str, Any],
    goal: dict[str, Any],
    expected: Expected | None = None,
) -> dict[str, Any]:
    # A user's scorer gets its own copies: it cannot change what the next scorer
    # sees, the final state that is stored, nor the goal the case's next run is
    # graded against. The built-in ones only read.
    state, wanted = (
        (clone(final_state), clone(goal)) if isinstance(scorer, Custom) else (final_state, goal)
    )
    try:
        if expected is not None and isinstance(scorer, ExactSet):
            return scorer.against(state, expected)
        return scorer(state, wanted)
    except ScorerError:
        raise
    except Exception as error:  # a scorer's bug makes the run errored, not failed
        raise ScorerError(f"scorer {scorer.name} raised {type(error).__name__}: {error}") from error


def grading(suite: Suite) -> Literal["reads", "searches", "waits", "blocks"]:
    """How the runner grades a run: "blocks" when a user's scorer runs (it may block:
    a worker thread), "waits" when a judge calls a model (the event loop, with a
    deadline), "searches" when the built-in scorers only read the state but a `matches`
    pattern searches the agent's text (up to MATCH_TIMEOUT_S, the GIL released: a
    thread), "reads" when they only read it (inline)."""
    scorers = prepare_scorers(suite)
    if any(isinstance(scorer, Custom) for scorer in scorers):
        return "blocks"
    if any(isinstance(scorer, Judge) for scorer in scorers):
        return "waits"
    return "searches" if any(isinstance(scorer, Matches) for scorer in scorers) else "reads"


_GOALS: dict[tuple[Path, str, str, str], tuple[dict[str, Any], list[Expected | None]]] = {}
"""Per case (suite folder and hash, case id and hash): its goal and what each set scorer
expects of it, made at its first grading and read by the rest (each run unpickled the
goal and counted and sorted its items again). Only the built-in scorers read it; a
user's scorer gets a copy. At most GOALS_KEPT cases, the oldest dropped first."""

GOALS_KEPT = 1024
"""Cases whose goals `score_run` keeps (a few waves of an index-major plan)."""


def _goal_of(
    suite: Suite, case: Case, scorers: list[Scorer | Judge]
) -> tuple[dict[str, Any], list[Expected | None]]:
    key = (suite.path, suite.hash, case.id, case.hash)
    kept = _GOALS.get(key)
    if kept is None:
        goal = case.goal
        expected: list[Expected | None] = []
        for scorer in scorers:
            try:
                expected.append(scorer.expect(goal) if isinstance(scorer, ExactSet) else None)
            except ScorerError:  # said by the scorer itself, at each grading
                expected.append(None)
        kept = (goal, expected)
        if len(_GOALS) >= GOALS_KEPT:
            del _GOALS[next(iter(_GOALS))]
        _GOALS[key] = kept
    return kept


def forget_goal(suite: Suite, case: Case) -> None:
    """Drop `case`'s entry of the goals `score_run` keeps: a caller that grades each
    case's runs together (a regrade) is done with it, and holds one case's at a time
    instead of GOALS_KEPT (at 10,000 cases, about 4 MB)."""
    _GOALS.pop((suite.path, suite.hash, case.id, case.hash), None)


async def score_run_async(
    suite: Suite, case: Case, final_state: dict[str, Any], *, run_index: int = 1, seed: int = 0
) -> Score:
    """Grade one run's final state; ScorerError when a scorer raises or a judge gives no
    verdict (the run is errored). `run_index` and `seed` reach a judge's model call."""
    details: list[dict[str, Any]] = []
    goal = case.goal  # a copy of its own: a scorer cannot change the next run's
    for scorer in prepare_scorers(suite):
        if isinstance(scorer, Judge):
            call = CallContext(case.id, run_index, 0, seed)
            try:
                details.append(await scorer.grade(final_state, goal, call))
            except JudgeError as error:
                raise ScorerError(f"judge: {error}") from None
        elif isinstance(scorer, Matches):
            # up to MATCH_TIMEOUT_S with the GIL released: off the loop the judge shares
            details.append(await asyncio.to_thread(_grade, scorer, final_state, goal))
        else:
            details.append(_grade(scorer, final_state, goal))
    return Score(passed=all(d["passed"] for d in details), details=details)


async def _leaving_tasks(grading: Awaitable[Score]) -> Score:
    """`grading`'s score; the tasks it leaves on the loop (a user's scorer's: passhat's
    grading leaves none) are abandoned, so run_loop gives them a moment and leaves
    behind one that swallows every cancel, where asyncio.run waited for it forever."""
    try:
        return await grading
    finally:
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            abandon(task)


def score_run(
    suite: Suite, case: Case, final_state: dict[str, Any], *, run_index: int = 1, seed: int = 0
) -> Score:
    """`score_run_async` for callers outside an event loop (regrading, scripts).

    Without a judge it never touches an event loop; with one, it runs its own, so
    inside a running loop `await score_run_async(...)` instead."""
    scorers = prepare_scorers(suite)
    if not any(isinstance(s, Judge) for s in scorers):
        goal, expected = _goal_of(suite, case, scorers)
        details = [
            _grade(s, final_state, goal, e)
            for s, e in zip(scorers, expected, strict=True)
            if not isinstance(s, Judge)
        ]
        return Score(passed=all(d["passed"] for d in details), details=details)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_loop(
            _leaving_tasks(
                score_run_async(suite, case, final_state, run_index=run_index, seed=seed)
            )
        )
    raise ScorerError("a judge scorer inside a running event loop: await score_run_async(...)")
