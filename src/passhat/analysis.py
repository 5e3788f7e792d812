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
from operator import itemgetter
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
    result: list[ItemStability] = []
    for case, case_runs in by_case.items():
        result.extend(_case_items(case, case_runs))
    return result


def _case_items(case: str, case_runs: Sequence[AnalysedRun]) -> list[ItemStability]:
    indices = tuple(sorted(r.run_index for r in case_runs))
    # Runs with equal results share one value (`Store.summaries`): read each value once.
    groups: dict[int, tuple[Sequence[Mapping[str, Any]], list[int]]] = {}
    for run in case_runs:
        graded = run.graded_items
        groups.setdefault(id(graded), (graded, []))[1].append(run.run_index)
    expected: dict[str, list[str]] = {}
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    extra: dict[tuple[str, str], list[int]] = defaultdict(list)
    for graded, runs_of in groups.values():
        for detail in graded:
            label = _scorer_label(detail)
            expected.setdefault(label, [str(i) for i in detail["expected"]])
            missing = {str(i) for i in detail["missing"]}
            for item in expected[label]:
                if item not in missing:
                    found[(label, item)].extend(runs_of)
            for item in dict.fromkeys(detail.get("extra") or []):  # once per run
                extra[(label, str(item))].extend(runs_of)
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


def tool_profile(
    runs: Sequence[AnalysedRun], tools: Iterable[str] = (), *, per_case: bool = True
) -> list[ToolUse]:
    """Per tool (every known tool, called or not): runs calling it and calls per run."""
    by_case: dict[str, list[tuple[int, Mapping[str, tuple[int, int]]]]] = {}
    names = dict.fromkeys(tools)
    seen: dict[int, Mapping[str, tuple[int, int]]] = {}  # holds them: ids stay unique
    for run in runs:
        counts = run.tool_counts
        if id(counts) not in seen:
            seen[id(counts)] = counts
            names.update(dict.fromkeys(counts))
        case_runs = by_case.get(run.case_id)
        if case_runs is None:
            case_runs = by_case[run.case_id] = []
        case_runs.append((run.run_index, counts))
    # by case, then run index (a store's runs come so: each sort is one pass)
    groups: dict[str | None, list[Mapping[str, tuple[int, int]]]] = {}
    for case in sorted(by_case):
        case_runs = by_case[case]
        case_runs.sort(key=itemgetter(0))
        group = groups.setdefault(case if per_case else None, [])
        group.extend([counts for _, counts in case_runs])
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
