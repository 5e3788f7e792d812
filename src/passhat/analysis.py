"""Beyond pass/fail: item stability and the tool-use profile of recorded runs.

Pure functions over runs: a whole `RunRecord` or the `RunSummary` a report
reads (both have `graded_items` and `tool_counts`). Item stability answers the
seed's question "which findings are missed now and then, which every time": for
every expected item of an exact-set scorer, the counted runs that found it; for
every unexpected item, the runs that produced it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, groupby, islice
from operator import attrgetter, eq, gt, itemgetter, le
from typing import Any, Protocol


class AnalysedRun(Protocol):
    """What the analysis reads of a run (`RunRecord` and `RunSummary` have it)."""

    @property
    def case_id(self) -> str: ...
    @property
    def run_index(self) -> int: ...
    @property
    def counted(self) -> bool: ...
    @property
    def graded_items(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def tool_counts(self) -> Mapping[str, tuple[int, int]]: ...


@dataclass(frozen=True)
class ItemStability:
    """One goal item (or one extra item) of one case across its counted runs."""

    case: str
    scorer: str
    """The scorer and path it belongs to, e.g. `exact_set ticket.annotations`."""
    item: str
    expected: bool
    """In the goal state (True) or an extra the runs added (False)."""
    runs: tuple[int, ...]
    """Counted runs (indices) it was judged over."""
    hits: tuple[int, ...]
    """Runs that found it (expected) or produced it (extra)."""

    @property
    def misses(self) -> tuple[int, ...]:
        hits = set(self.hits)
        return tuple([i for i in self.runs if i not in hits])

    @property
    def verdict(self) -> str:
        """always found / sometimes missed / always missed; for extras, always / sometimes."""
        if self.expected:
            if len(self.hits) == len(self.runs):
                return "always found"
            return "always missed" if not self.hits else "sometimes missed"
        return "extra, every run" if len(self.hits) == len(self.runs) else "extra, sometimes"


def _scorer_label(detail: Mapping[str, Any]) -> str:
    path = detail.get("path")
    return f"{detail.get('scorer')} {path}" if path else str(detail.get("scorer"))


def item_stability(runs: Iterable[AnalysedRun]) -> list[ItemStability]:
    """Per case and exact-set scorer: every expected item, then every extra item."""
    by_case: dict[str, list[AnalysedRun]] = defaultdict(list)
    for run in runs:
        if run.counted:
            by_case[run.case_id].append(run)
    # Runs with equal results share one value (`Store.summaries`), across cases too:
    # each value is read once for the whole experiment. Held here, so ids stay unique.
    read: dict[int, tuple[Sequence[Mapping[str, Any]], list[_Detail]]] = {}
    result: list[ItemStability] = []
    for case, case_runs in by_case.items():
        result.extend(_case_items(case, case_runs, read))
    return result


_Detail = tuple[str, list[str], frozenset[str], list[str]]
"""One exact-set detail, read: scorer label, expected items, missing items, extra items
(each distinct extra once per run, as text)."""


def _read_details(graded: Sequence[Mapping[str, Any]]) -> list[_Detail]:
    return [
        (
            _scorer_label(detail),
            [str(i) for i in detail["expected"]],
            frozenset(str(i) for i in detail["missing"]),
            [str(item) for item in dict.fromkeys(detail.get("extra") or [])],
        )
        for detail in graded
    ]


def _case_items(
    case: str,
    case_runs: Sequence[AnalysedRun],
    read: dict[int, tuple[Sequence[Mapping[str, Any]], list[_Detail]]] | None = None,
) -> list[ItemStability]:
    read = {} if read is None else read
    indices = tuple(sorted(r.run_index for r in case_runs))
    groups: dict[int, list[int]] = {}
    for run in case_runs:
        graded = run.graded_items
        key = id(graded)
        runs_of = groups.get(key)
        if runs_of is None:
            runs_of = groups[key] = []
            if key not in read:
                read[key] = (graded, _read_details(graded))
        runs_of.append(run.run_index)
    expected: dict[str, list[str]] = {}
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    extra: dict[tuple[str, str], list[int]] = defaultdict(list)
    for key, runs_of in groups.items():
        for label, items, missing, extras in read[key][1]:
            for item in expected.setdefault(label, items):
                if item not in missing:
                    found[(label, item)].extend(runs_of)
            for item in extras:  # once per run
                extra[(label, item)].extend(runs_of)
    result = []
    for label, items in expected.items():
        for item in items:
            hits = tuple(sorted(found[(label, item)]))
            result.append(ItemStability(case, label, item, True, indices, hits))
        for (extra_label, item), hits_of in sorted(extra.items()):
            if extra_label == label:
                hits = tuple(sorted(hits_of))
                result.append(ItemStability(case, label, item, False, indices, hits))
    return result


@dataclass(frozen=True)
class ToolUse:
    """How one tool was used across the completed runs of one case (or all cases)."""

    case: str | None
    """The case, or None for the whole experiment."""
    tool: str
    runs: int
    """Completed runs looked at."""
    runs_calling: int
    """Runs that called the tool at least once."""
    calls_per_run: tuple[int, ...]
    """Calls in each completed run, by run order."""
    errors: int
    """Calls that ended in an error (fixture miss, bad arguments...)."""

    @property
    def calls(self) -> int:
        return sum(self.calls_per_run)


_CASE = itemgetter(0)
_CASE_ID = attrgetter("case_id")
_RUN_INDEX = attrgetter("run_index")
_TOOL_COUNTS = attrgetter("tool_counts")


def _in_case_and_run_order(
    runs: Sequence[AnalysedRun],
) -> tuple[list[str], list[Mapping[str, tuple[int, int]]]]:
    """Case ids and tool counts of the runs by case, then run index (a stable sort).

    A store gives its runs in that order: then the check, made in C, is all it costs."""
    cases = list(map(_CASE_ID, runs))
    indices = list(map(_RUN_INDEX, runs))
    counts_of: list[Mapping[str, tuple[int, int]]] = list(map(_TOOL_COUNTS, runs))
    ordered = all(map(le, cases, islice(cases, 1, None))) and not any(
        # no run index falls within a case
        compress(map(gt, indices, islice(indices, 1, None)), map(eq, cases, islice(cases, 1, None)))
    )
    if not ordered:
        order = sorted(range(len(cases)), key=lambda i: (cases[i], indices[i]))
        cases = [cases[i] for i in order]
        counts_of = [counts_of[i] for i in order]
    return cases, counts_of


def tool_profile(
    runs: Sequence[AnalysedRun], tools: Iterable[str] = (), *, per_case: bool = True
) -> list[ToolUse]:
    """Per tool (every known tool, called or not): runs calling it and calls per run."""
    cases, counts_of = _in_case_and_run_order(runs)
    names = dict.fromkeys(tools)
    # runs with equal counts share one value: each is read once (the dict holds them)
    for counts in {id(counts): counts for counts in counts_of}.values():
        names.update(dict.fromkeys(counts))
    groups: dict[str | None, list[Mapping[str, tuple[int, int]]]] = {}
    if per_case:
        for case, rows in groupby(zip(cases, counts_of, strict=True), key=_CASE):
            groups[case] = [counts for _, counts in rows]
    elif counts_of:
        groups[None] = counts_of
    zero = (0, 0)
    result = []
    for key, group in groups.items():
        for tool in names:
            per_run = [counts.get(tool, zero) for counts in group]
            calls = tuple([n for n, _ in per_run])
            errors = sum([e for _, e in per_run])
            result.append(
                ToolUse(key, tool, len(group), len(calls) - calls.count(0), calls, errors)
            )
    return result
