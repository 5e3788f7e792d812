"""Beyond pass/fail: item stability and the tool-use profile of recorded runs.

Pure functions over `RunRecord`s. Item stability answers the seed's question
"which findings are missed now and then, which every time": for every expected
item of an exact-set scorer, the counted runs that found it; for every
unexpected item, the runs that produced it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from passhat.records import RunRecord


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
        return tuple(i for i in self.runs if i not in self.hits)

    @property
    def verdict(self) -> str:
        """always found / sometimes missed / always missed; for extras, always / sometimes."""
        if self.expected:
            if len(self.hits) == len(self.runs):
                return "always found"
            return "always missed" if not self.hits else "sometimes missed"
        return "extra, every run" if len(self.hits) == len(self.runs) else "extra, sometimes"


def _scorer_label(detail: dict[str, object]) -> str:
    path = detail.get("path")
    return f"{detail.get('scorer')} {path}" if path else str(detail.get("scorer"))


def item_stability(runs: Iterable[RunRecord]) -> list[ItemStability]:
    """Per case and exact-set scorer: every expected item, then every extra item."""
    by_case: dict[str, list[RunRecord]] = defaultdict(list)
    for run in runs:
        if run.counted:
            by_case[run.case_id].append(run)
    result: list[ItemStability] = []
    for case, case_runs in by_case.items():
        case_runs.sort(key=lambda r: r.run_index)
        indices = tuple(r.run_index for r in case_runs)
        expected: dict[str, list[str]] = {}
        found: dict[tuple[str, str], list[int]] = defaultdict(list)
        extra: dict[tuple[str, str], list[int]] = defaultdict(list)
        for run in case_runs:
            for detail in run.score:
                if "expected" not in detail or "missing" not in detail:
                    continue
                label = _scorer_label(detail)
                expected.setdefault(label, [str(i) for i in detail["expected"]])
                missing = {str(i) for i in detail["missing"]}
                for item in expected[label]:
                    if item not in missing:
                        found[(label, item)].append(run.run_index)
                for item in dict.fromkeys(detail.get("extra", [])):  # once per run
                    extra[(label, str(item))].append(run.run_index)
        for label, items in expected.items():
            for item in items:
                result.append(
                    ItemStability(case, label, item, True, indices, tuple(found[(label, item)]))
                )
            for (extra_label, item), hits in sorted(extra.items()):
                if extra_label == label:
                    result.append(ItemStability(case, label, item, False, indices, tuple(hits)))
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
    runs: Sequence[RunRecord], tools: Iterable[str] = (), *, per_case: bool = True
) -> list[ToolUse]:
    """Per tool (every known tool, called or not): runs calling it and calls per run."""
    groups: dict[str | None, list[RunRecord]] = defaultdict(list)
    for run in sorted(runs, key=lambda r: (r.case_id, r.run_index)):
        groups[run.case_id if per_case else None].append(run)
    names = list(dict.fromkeys([*tools, *(c["tool"] for r in runs for c in r.tool_calls)]))
    result = []
    for case, group in groups.items():
        for tool in names:
            per_run = [sum(1 for c in r.tool_calls if c["tool"] == tool) for r in group]
            errors = sum(
                1 for r in group for c in r.tool_calls if c["tool"] == tool and c.get("error")
            )
            result.append(
                ToolUse(
                    case, tool, len(group), sum(1 for n in per_run if n), tuple(per_run), errors
                )
            )
    return result
