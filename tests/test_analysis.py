"""passhat.analysis: item stability and tool use, checked against a plain reading of
every run (the fast paths share decoded values across runs and cases)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.analysis import (
    item_dict,
    item_dicts,
    item_stability,
    tool_dict,
    tool_dicts,
    tool_profile,
)
from passhat.records import RunSummary

EXPECTED = ["a", "b", "c"]


def detail(missing: list[str], extra: list[Any], path: str | None = "t.items") -> dict[str, Any]:
    return {
        "scorer": "exact_set",
        "path": path,
        "passed": not missing and not extra,
        "expected": EXPECTED,
        "missing": missing,
        "extra": extra,
    }


# a small pool of values, shared by many runs as Store.summaries shares them
GRADED = [
    [detail([], [])],
    [detail(["a"], [])],
    [detail(["a", "c"], ["x", "x"])],
    [detail([], [1, "1"]), detail(["b"], [], path=None)],
    [],
]
COUNTS = [{}, {"get": (1, 0)}, {"get": (2, 1), "put": (1, 0)}, {"put": (3, 3)}]


def summary(case: str, index: int, status: str, graded: int, counts: int) -> RunSummary:
    return RunSummary(
        case, index, status, None, None, 0.1, 0, 0, None, 1, None, GRADED[graded], COUNTS[counts]
    )


RUNS = st.lists(
    st.builds(
        summary,
        st.sampled_from(["c1", "c2", "c3"]),
        st.integers(1, 6),
        st.sampled_from(["passed", "failed", "errored"]),
        st.integers(0, len(GRADED) - 1),
        st.integers(0, len(COUNTS) - 1),
    ),
    max_size=30,
    unique_by=lambda r: (r.case_id, r.run_index),
)


def plain_items(runs: list[RunSummary]) -> list[tuple[Any, ...]]:
    """Item stability read run by run, no sharing: (case, scorer, item, expected, runs, hits)."""
    out = []
    for case in dict.fromkeys(r.case_id for r in runs if r.counted):
        mine = [r for r in runs if r.case_id == case and r.counted]
        indices = tuple(sorted(r.run_index for r in mine))
        labels: dict[str, list[str]] = {}
        for r in mine:
            for d in r.graded_items:
                label = f"{d['scorer']} {d['path']}" if d.get("path") else str(d["scorer"])
                labels.setdefault(label, [str(i) for i in d["expected"]])
        for label, items in labels.items():
            details = [
                (r.run_index, d)
                for r in mine
                for d in r.graded_items
                if (f"{d['scorer']} {d['path']}" if d.get("path") else str(d["scorer"])) == label
            ]
            for item in items:
                hits = sorted(i for i, d in details if item not in {str(m) for m in d["missing"]})
                out.append((case, label, item, True, indices, tuple(hits)))
            extras: dict[str, list[int]] = {}
            for i, d in details:
                for raw in dict.fromkeys(d.get("extra") or []):
                    extras.setdefault(str(raw), []).append(i)
            for item, hits in sorted(extras.items()):
                out.append((case, label, item, False, indices, tuple(sorted(hits))))
    return out


@settings(max_examples=150, deadline=None)
@given(RUNS)
def test_item_stability_reads_shared_values_like_every_run_read_alone(
    runs: list[RunSummary],
) -> None:
    """Guards reading each shared value once per experiment: the same items, hits and
    misses as reading every run by itself, and as runs holding equal but unshared values."""
    got = [(s.case, s.scorer, s.item, s.expected, s.runs, s.hits) for s in item_stability(runs)]
    assert got == plain_items(runs)
    unshared = [r._replace(graded_items=copy.deepcopy(r.graded_items)) for r in runs]
    assert item_stability(unshared) == item_stability(runs)


@settings(max_examples=200, deadline=None)
@given(RUNS, st.booleans(), st.booleans())
def test_tool_profile_is_a_count_of_every_run_in_case_and_run_order(
    runs: list[RunSummary], per_case: bool, presorted: bool
) -> None:
    """Guards the sorted, grouped tool profile: per tool, the calls of each run in
    (case, run) order, runs calling it and errors, every known tool listed; runs given
    already in that order (as a store gives them: no sort) or in any order."""
    ordered = sorted(runs, key=lambda r: (r.case_id, r.run_index))
    if presorted:
        runs = ordered
    names = list(dict.fromkeys(["put", *(t for r in ordered for t in r.tool_counts)]))
    groups: dict[str | None, list[RunSummary]] = {}
    for r in ordered:
        groups.setdefault(r.case_id if per_case else None, []).append(r)
    want = [
        (
            case,
            tool,
            len(group),
            sum(1 for r in group if r.tool_counts.get(tool, (0, 0))[0]),
            tuple(r.tool_counts.get(tool, (0, 0))[0] for r in group),
            sum(r.tool_counts.get(tool, (0, 0))[1] for r in group),
        )
        for case, group in groups.items()
        for tool in names
    ]
    got = tool_profile(runs, ["put"], per_case=per_case)
    assert [
        (u.case, u.tool, u.runs, u.runs_calling, u.calls_per_run, u.errors) for u in got
    ] == want


@settings(max_examples=300, deadline=None)
@given(RUNS, st.booleans())
def test_item_dicts_are_item_stability_as_dicts(runs: list[RunSummary], presorted: bool) -> None:
    """Guards the column-wise JSON items: the same dicts, in the same order, as every
    `item_stability` result made a dict, whether runs come by case and index or not."""
    if presorted:
        runs = sorted(runs, key=lambda r: (r.case_id, r.run_index))
    want = [item_dict(s) for s in item_stability(runs)]
    assert item_dicts(runs) == want
    unshared = [r._replace(graded_items=copy.deepcopy(r.graded_items)) for r in runs]
    assert item_dicts(unshared) == want


@settings(max_examples=200, deadline=None)
@given(RUNS, st.booleans())
def test_tool_dicts_are_tool_profile_as_dicts(runs: list[RunSummary], presorted: bool) -> None:
    """Guards the transposed JSON tool rows: the same dicts, in the same order, as every
    per-case `tool_profile` row made a dict."""
    if presorted:
        runs = sorted(runs, key=lambda r: (r.case_id, r.run_index))
    want = [tool_dict(u) for u in tool_profile(runs, ["put"])]
    assert tool_dicts(runs, ["put"]) == want
    assert tool_dicts(runs) == [tool_dict(u) for u in tool_profile(runs)]
