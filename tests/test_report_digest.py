"""passhat.report.digest: the terminal report's one pass over the runs, checked
against reading every run by itself (and the tool tallies against `tool_profile`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.accounting import DuplicateRunError, Ledger
from passhat.analysis import tool_profile
from passhat.records import RunSummary
from passhat.report.digest import digest, tool_tallies
from records_for_tests import experiment_record

GRADED: list[list[dict[str, Any]]] = [
    [],
    [{"scorer": "exact_set", "path": "t", "expected": ["a"], "missing": [], "extra": []}],
]
COUNTS = [{}, {"get": (1, 0)}, {"get": (2, 1), "put": (1, 0)}, {"zed": (3, 3)}]


def run(
    case: str, index: int, status: str, graded: int, counts: int, attempt: int, source: Any
) -> RunSummary:
    return RunSummary(
        case,
        index,
        status,
        None,
        None,
        0.1,
        index * 10,
        index,
        source,
        attempt,
        None,
        GRADED[graded],
        COUNTS[counts],
    )


RUNS = st.lists(
    st.builds(
        run,
        st.sampled_from(["c1", "c2", "c3"]),
        st.integers(1, 5),
        st.sampled_from(["passed", "failed", "errored"]),
        st.integers(0, len(GRADED) - 1),
        st.integers(0, len(COUNTS) - 1),
        st.sampled_from([1, 1, 2]),
        st.sampled_from([None, "live", "replayed"]),
    ),
    max_size=25,
)


def in_order(runs: list[RunSummary]) -> bool:
    keys = [(r.case_id, r.run_index) for r in runs]
    return keys == sorted(keys)


@settings(max_examples=300, deadline=None)
@given(RUNS, st.booleans(), st.lists(st.sampled_from(["c2", "c9"]), unique=True))
def test_the_digest_equals_reading_every_run_alone(
    runs: list[RunSummary], presorted: bool, planned: list[str]
) -> None:
    """Guards the one pass: per case the statuses `Ledger.add` would collect (planned
    cases first, a run recorded twice refused with the same message), and every other
    part the same as a pass of its own over the runs, in any order."""
    if presorted:
        runs = sorted(runs, key=lambda r: (r.case_id, r.run_index))
    ledger = Ledger()
    for case in planned:
        ledger.expect(case)
    try:
        for r in runs:
            ledger.add(r.case_id, r.run_index, r.status)
    except DuplicateRunError as error:
        with pytest.raises(DuplicateRunError) as raised:
            digest(runs, planned)
        assert str(raised.value) == str(error)
        return
    read = digest(runs, planned)
    assert Ledger.of(read.statuses).close(5) == ledger.close(5)
    assert list(read.statuses) == list(dict.fromkeys([*planned, *(r.case_id for r in runs)]))
    assert read.order == list(dict.fromkeys(r.case_id for r in runs))
    assert read.ordered == in_order(runs)
    assert read.graded == list(
        dict.fromkeys(r.case_id for r in runs if r.counted and r.graded_items)
    )
    assert read.errored == [r for r in runs if r.status == "errored"]
    assert read.retried == any(r.attempt != 1 for r in runs)
    assert read.replayed == sum(r.model_source == "replayed" for r in runs)
    assert read.input_tokens == sum(r.input_tokens for r in runs)
    assert read.output_tokens == sum(r.output_tokens for r in runs)
    for wanted in ({"c1"}, {"c2", "c3"}, set()):
        assert list(read.runs_of(runs, wanted)) == [r for r in runs if r.case_id in wanted]


@settings(max_examples=300, deadline=None)
@given(RUNS, st.sampled_from([(), ("put",), ("nothing", "get")]))
def test_tool_tallies_count_what_the_tool_profile_lists(
    runs: list[RunSummary], tools: tuple[str, ...]
) -> None:
    """Guards counting per distinct tool-count value: the same tools in the same order
    (known ones first, then as the runs name them), runs, runs calling and errors as
    `tool_profile(per_case=False)`, and its calls per run tallied."""
    unique = {(r.case_id, r.run_index): r for r in runs}
    runs = [unique[key] for key in sorted(unique)]
    want = [
        (u.tool, u.runs, u.runs_calling, dict(Counter(u.calls_per_run)), u.errors)
        for u in tool_profile(runs, tools, per_case=False)
    ]
    got = [
        (u.tool, u.runs, u.runs_calling, u.tally, u.errors)
        for u in tool_tallies(digest(runs), tools)
    ]
    assert got == want


@settings(max_examples=60, deadline=None)
@given(RUNS, st.randoms(use_true_random=False), st.sampled_from([None, 1, 2]))
def test_details_and_usage_read_from_a_digest_equal_those_read_from_the_runs(
    runs: list[RunSummary], shuffle: Any, limit: int | None
) -> None:
    """Guards the digest's use: the details (items, tools, tokens, errored runs) and the
    usage table printed from a digest equal those computed from the runs themselves,
    for runs by case or in any order and with any limit on the cases listed."""
    import io

    from rich.console import Console

    from passhat.report.experiment import print_details
    from passhat.report.parts import usage_table
    from passhat.usage import Prices

    unique = list({(r.case_id, r.run_index): r for r in runs}.values())
    shuffle.shuffle(unique)
    e = experiment_record(("c1", "c2", "c3"), 5, tools=("put",))
    read = digest(unique, e.case_ids)
    accounting = Ledger.of(read.statuses).close(5)

    def printed(renderable: Any) -> str:
        out = io.StringIO()
        Console(file=out, width=100, color_system=None).print(renderable)
        return out.getvalue()

    def details(given: Any) -> str:
        out = io.StringIO()
        console = Console(file=out, width=100, color_system=None)
        print_details(console, e, unique, accounting, limit=limit, read=given)
        return out.getvalue()

    assert details(read) == details(None)
    prices = Prices(1.0, 2.0)
    assert printed(usage_table(unique, prices, limit=limit, read=read)) == printed(
        usage_table(unique, prices, limit=limit)
    )
