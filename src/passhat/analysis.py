"""Beyond pass/fail: item stability and the tool-use profile of recorded runs.

Pure functions over runs: a whole `RunRecord` or the `RunSummary` a report
reads (both have `graded_items` and `tool_counts`). Item stability answers the
seed's question "which findings are missed now and then, which every time": for
every expected item of an exact-set scorer, the counted runs that found it; for
every unexpected item, the runs that produced it.

`item_dicts` and `tool_dicts` give the same results as JSON-ready dicts for
`report --json`, built from columns of the runs (`run_columns`) rather than one
object per item: 100,000 runs make ~50,000 items and ~20,000 tool rows.
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, groupby, islice
from operator import attrgetter, eq, ge, gt, itemgetter, le, not_
from typing import TYPE_CHECKING, Any, NamedTuple

from passhat.plain import named_lists
from passhat.records import CaseItem

if TYPE_CHECKING:
    from passhat.records import ReportRun


@dataclass(frozen=True)
class ItemStability(CaseItem):
    """One goal item (or one extra item) of one case across its counted runs (`runs`)."""

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


def item_stability(runs: Iterable[ReportRun]) -> list[ItemStability]:
    """Per case and exact-set scorer: every expected item, then every extra item."""
    by_case: dict[str, list[ReportRun]] = defaultdict(list)
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
    case_runs: Sequence[ReportRun],
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
_STATUS = attrgetter("status")
_GRADED_ITEMS = attrgetter("graded_items")


class RunColumns(NamedTuple):
    """What every part of a report reads first, read once: case ids, run indices and
    statuses of the runs as lists, and whether the runs come by case, then strictly
    rising run index (as a store gives them). Taken in C: ~5 ms per column at 100,000
    runs, where each part reading them again cost as much."""

    cases: list[str]
    indices: list[int]
    statuses: list[str]
    ordered: bool
    """By case, then strictly rising run index (so one record per (case, run))."""
    sizes: dict[str, int]
    """Runs of each case, in order; with `ordered`, each case's runs are one stretch."""


def run_columns(runs: Sequence[ReportRun]) -> RunColumns:
    cases = list(map(_CASE_ID, runs))
    indices = list(map(_RUN_INDEX, runs))
    statuses = list(map(_STATUS, runs))
    return RunColumns(cases, indices, statuses, _by_case_then_index(cases, indices), Counter(cases))


def _by_case_then_index(cases: Sequence[str], indices: Sequence[int]) -> bool:
    """Sorted by case, and by strictly rising run index within a case (checked in C)."""
    return all(map(le, cases, islice(cases, 1, None))) and not any(
        compress(map(ge, indices, islice(indices, 1, None)), map(eq, cases, islice(cases, 1, None)))
    )


def _in_case_and_run_order(
    runs: Sequence[ReportRun],
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
    runs: Sequence[ReportRun], tools: Iterable[str] = (), *, per_case: bool = True
) -> list[ToolUse]:
    """Per tool (every known tool, called or not): runs calling it and calls per run."""
    cases, counts_of = _in_case_and_run_order(runs)
    names = dict.fromkeys(tools)
    # runs with equal counts share one value: each is read once (the dict holds them)
    distinct = {id(counts): counts for counts in counts_of}
    for counts in distinct.values():
        names.update(dict.fromkeys(counts))
    if not per_case:
        whole = _dataset_profile(counts_of, distinct, names)
        if whole is not None:
            return whole
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


def _dataset_profile(
    counts_of: Sequence[Mapping[str, tuple[int, int]]],
    distinct: dict[int, Mapping[str, tuple[int, int]]],
    names: Iterable[str],
) -> list[ToolUse] | None:
    """`tool_profile(..., per_case=False)` read once per distinct tool-count value (runs
    with equal counts share one: `Store.summaries`), the runs' calls then looked up in C;
    None when an error count is not an int (then the sum is taken run by run)."""
    ids = list(map(id, counts_of))
    shared = Counter(ids)
    zero = (0, 0)
    out = []
    for tool in names if ids else ():
        per_value = {key: value.get(tool, zero) for key, value in distinct.items()}
        if not all(type(e) is int for _, e in per_value.values()):
            return None
        calls = tuple(map({key: n for key, (n, _) in per_value.items()}.__getitem__, ids))
        errors = sum(e * shared[key] for key, (_, e) in per_value.items())
        out.append(ToolUse(None, tool, len(calls), len(calls) - calls.count(0), calls, errors))
    return out


# JSON-ready item stability and tool use. A report of 100,000 runs lists ~50,000 items
# and ~30,000 tool rows: the dicts are built straight from columns of small tuples,
# with no ItemStability / ToolUse object in between. `item_dict(s)` of every
# `item_stability` result and `tool_dict(u)` of every `tool_profile` result are what
# they must equal (tests/test_analysis.py, tests/test_report_json.py).


def item_dict(s: ItemStability) -> dict[str, Any]:
    """One item of `item_stability` as JSON-ready data."""
    return named_lists(s, _ITEM_KEYS)


_ITEM_KEYS = ("case", "scorer", "item", "expected", "runs", "hits", "misses", "verdict")


def tool_dict(u: ToolUse) -> dict[str, Any]:
    """One row of `tool_profile` as JSON-ready data."""
    return named_lists(u, _TOOL_KEYS)


_TOOL_KEYS = ("case", "tool", "runs", "runs_calling", "calls_per_run", "errors")


class _Graded(NamedTuple):
    """One distinct per-item value, read for the fast path."""

    plain: bool
    """Each label once, each expected item once per label, each extra once (as text):
    then a run's hits are a yes/no per item. Anything else takes `_case_items`."""
    skeleton: tuple[tuple[str, tuple[str, ...]], ...]
    """(label, expected items) of each detail: runs of one case usually share it."""
    found: tuple[bool, ...]
    """Per expected item of the skeleton, in order: found (not missing)."""
    extras: dict[str, frozenset[str]]
    """Per label, the extra items (as text); only labels with extras."""


def _graded(details: list[_Detail], skeletons: dict[Any, Any]) -> _Graded:
    labels = [label for label, _, _, _ in details]
    plain = len(set(labels)) == len(labels) and all(
        len(set(items)) == len(items) and len(set(extras)) == len(extras)
        for _, items, _, extras in details
    )
    skeleton = tuple((label, tuple(items)) for label, items, _, _ in details)
    return _Graded(
        plain,
        skeletons.setdefault(skeleton, skeleton),  # one object per shape: compared by `is`
        tuple(item not in missing for _, items, missing, _ in details for item in items),
        {label: frozenset(extras) for label, _, _, extras in details if extras},
    )


def _read_values(
    ids: list[int], values: list[Sequence[Mapping[str, Any]]]
) -> tuple[dict[int, tuple[Sequence[Mapping[str, Any]], list[_Detail]]], dict[int, _Graded]]:
    """Each distinct per-item value (by id) read once: as `_case_items` reads it, and as
    the column path does."""
    read: dict[int, tuple[Sequence[Mapping[str, Any]], list[_Detail]]] = {}
    plans: dict[int, _Graded] = {}
    skeletons: dict[Any, Any] = {}
    for key, graded in dict(zip(ids, values, strict=True)).items():
        details = _read_details(graded)
        read[key] = (graded, details)
        plans[key] = _graded(details, skeletons)
    return read, plans


class _Columns(dict[tuple[bool, ...], tuple[list[int], list[int], str]]):
    """Hits, misses and verdict of each column of found / not found over `runs`, made
    the first time a column is asked for (by `map(columns.__getitem__, ...)`, in C)."""

    def __init__(self, runs: list[int]) -> None:
        super().__init__()
        self.runs = runs

    def __missing__(self, column: tuple[bool, ...]) -> tuple[list[int], list[int], str]:
        runs = self.runs
        hits = list(compress(runs, column))
        if len(hits) == len(runs):
            made: tuple[list[int], list[int], str] = (hits, [], "always found")
        else:
            misses = list(compress(runs, map(not_, column)))
            made = (hits, misses, "sometimes missed" if hits else "always missed")
        self[column] = made
        return made


def item_dicts(
    runs: Sequence[ReportRun], columns: RunColumns | None = None
) -> list[dict[str, Any]]:
    """`item_dict` of every `item_stability` result: the same items in the same order.

    When the runs come by case and run index (as a store gives them) and a case's runs
    share one plain skeleton (the usual case), each expected item is a column of
    found / not found across the runs; cases with the same run indices share the hits
    and misses of equal columns (copied: no list is shared)."""
    columns = run_columns(runs) if columns is None else columns
    if not columns.ordered:
        return [item_dict(s) for s in item_stability(runs)]
    keep = list(map("errored".__ne__, columns.statuses))
    counted = list(compress(runs, keep))
    indices = list(compress(columns.indices, keep))
    values = list(map(_GRADED_ITEMS, counted))
    ids = list(map(id, values))  # `values` keeps every id's object alive
    read, plans = _read_values(ids, values)
    found_of = {key: plan.found for key, plan in plans.items()}
    extras_of = {key: plan.extras for key, plan in plans.items() if plan.extras}
    # per run, its value's skeleton if plain (else None): a case is one column table
    # when all its runs have the same one
    shape_of = {key: plan.skeleton if plan.plain else None for key, plan in plans.items()}
    shapes = list(map(shape_of.__getitem__, ids))
    by_indices: dict[tuple[int, ...], _Columns] = {}
    out: list[dict[str, Any]] = []
    sizes = columns.sizes if len(counted) == len(runs) else Counter(compress(columns.cases, keep))
    start = 0
    for case, size in sizes.items():  # by case: each case's runs in one stretch
        end = start + size
        skeleton = shapes[start]
        if skeleton is None or shapes[start:end].count(skeleton) != size:
            out.extend(map(item_dict, _case_items(case, counted[start:end], read)))
            start = end
            continue
        case_runs = indices[start:end]
        runs_key = tuple(case_runs)
        table = by_indices.get(runs_key)
        if table is None:
            table = by_indices[runs_key] = _Columns(case_runs)
        case_ids = ids[start:end]
        found = map(table.__getitem__, zip(*map(found_of.__getitem__, case_ids), strict=True))
        extras = None
        if not extras_of.keys().isdisjoint(case_ids):
            extras = [(k, extras_of[k]) for k in set(case_ids) if k in extras_of]
        for label, items in skeleton:
            out.extend(
                [
                    {
                        "case": case,
                        "scorer": label,
                        "item": item,
                        "expected": True,
                        "runs": case_runs.copy(),
                        "hits": hits.copy(),
                        "misses": misses.copy(),
                        "verdict": verdict,
                    }
                    for item, (hits, misses, verdict) in zip(items, found, strict=False)
                ]
            )
            if extras is not None:
                sources = [(k, by_label[label]) for k, by_label in extras if label in by_label]
                if sources:
                    _extra_items(out, case, case_ids, sources, label, table)
        start = end
    return out


_NONE: frozenset[str] = frozenset()


def _extra_items(
    out: list[dict[str, Any]],
    case: str,
    ids: list[int],
    sources: list[tuple[int, frozenset[str]]],
    label: str,
    table: _Columns,
) -> None:
    """A label's extra items across a case's runs (whose values have the ids `ids`):
    every distinct one, sorted; `sources` are the values with extras of this label.
    An extra's runs are a column like a found item's, read from the same `table`."""
    runs = table.runs
    present: tuple[bool, ...] = ()
    if len(sources) == 1:  # one value has extras: they all appear in its runs
        key, items = sources[0]
        present = tuple(map(key.__eq__, ids))
    else:
        items = _NONE.union(*[extras for _, extras in sources])
    for item in sorted(items):
        if len(sources) > 1:
            having = {key for key, extras in sources if item in extras}
            present = tuple(map(having.__contains__, ids))
        hits, misses, _ = table[present]
        out.append(
            {
                "case": case,
                "scorer": label,
                "item": item,
                "expected": False,
                "runs": runs.copy(),
                "hits": hits.copy(),
                "misses": misses.copy(),
                "verdict": "extra, every run" if len(hits) == len(runs) else "extra, sometimes",
            }
        )


def tool_rows(
    counts_of: Sequence[Mapping[str, tuple[int, int]]], tools: Iterable[str] = ()
) -> tuple[dict[str, None], Sequence[int], list[tuple[int, ...]], bool]:
    """Each run's tool counts as a row: the tools (`tools`, then any other a run
    called), each value's id, each run's row (calls of each tool, then errors of
    each tool; runs share values, so each distinct one is made once) and whether
    any run had a tool error."""
    # machine words, not an int object per run (32 MB at 1,000,000 runs)
    ids = array("Q", map(id, counts_of))
    names, rows_of, errors = tool_value_rows(dict(zip(ids, counts_of, strict=True)), tools)
    return names, ids, list(map(rows_of.__getitem__, ids)), errors


def tool_value_rows(
    distinct: Mapping[int, Mapping[str, tuple[int, int]]], tools: Iterable[str] = ()
) -> tuple[dict[str, None], dict[int, tuple[int, ...]], bool]:
    """The tools (`tools`, then any other a value names), the row of each distinct tool-count
    value by its key (calls of each tool, then errors of each tool) and whether any
    value has a tool error."""
    names = dict.fromkeys(tools)
    for counts in distinct.values():
        names.update(dict.fromkeys(counts))
    zero = (0, 0)
    width = len(names)
    rows_of = {}  # per distinct value: calls of each tool, then errors of each tool
    for key, counts in distinct.items():
        pairs = [counts.get(tool, zero) for tool in names]
        rows_of[key] = tuple([n for n, _ in pairs] + [e for _, e in pairs])
    errors = any(any(row[width:]) for row in rows_of.values())
    return names, rows_of, errors


def tool_dicts(
    runs: Sequence[ReportRun], tools: Iterable[str] = (), columns: RunColumns | None = None
) -> list[dict[str, Any]]:
    """`tool_dict` of every per-case `tool_profile` result: the same rows in the same
    order. Each distinct count value becomes a row of calls (and of errors) per tool;
    a case's rows, transposed in C, are its tools' calls per run."""
    if columns is not None and columns.ordered:
        counts_of: list[Mapping[str, tuple[int, int]]] = list(map(_TOOL_COUNTS, runs))
        sizes = columns.sizes
    else:
        cases, counts_of = _in_case_and_run_order(runs)
        sizes = Counter(cases)  # by case: each case's runs in one stretch
    names, _, rows, errors = tool_rows(counts_of, tools)
    out: list[dict[str, Any]] = []
    if not names:
        return out
    width = len(names)
    start = 0
    for case, size in sizes.items():
        end = start + size
        per_tool = list(zip(*rows[start:end], strict=True))  # calls..., errors...
        for n, tool in enumerate(names):
            calls = per_tool[n]
            out.append(
                {
                    "case": case,
                    "tool": tool,
                    "runs": size,
                    "runs_calling": size - calls.count(0),
                    "calls_per_run": list(calls),
                    "errors": sum(per_tool[width + n]) if errors else 0,
                }
            )
        start = end
    return out
