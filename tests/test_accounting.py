"""passhat.accounting: requested / completed / counted / missing, and the labels."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passhat.accounting import (
    DuplicateRunError,
    Ledger,
    MissingRuns,
    RunBeyondPlanError,
    account,
)
from passhat.errors import InputError, NoRunsError


def test_complete_plan() -> None:
    a = account([("c", i, "failed") for i in (1, 2, 3)], k=3)
    (case,) = a.cases
    assert (case.k_requested, case.completed, case.counted, case.passes) == (3, 3, 3, 0)
    assert case.missing == () and case.errored == ()
    assert a.complete
    d = a.dataset()
    assert (d.label_at, d.label_hat, d.complete) == ("pass@3", "pass^3", True)


def test_missing_and_errored_runs_are_named_and_labels_use_counted() -> None:
    a = account(
        [
            ("a", 1, "passed"),
            ("a", 3, "errored"),
            ("b", 1, "passed"),
            ("b", 2, "failed"),
            ("b", 3, "passed"),
        ],
        k=3,
    )
    case_a = a.cases[0]
    assert (case_a.completed, case_a.counted, case_a.missing, case_a.errored) == (2, 1, (2,), (3,))
    assert not case_a.complete
    assert case_a.metrics is not None and case_a.metrics.k == 1
    d = a.dataset()
    # j = 1: the mean of per-case rates, named apart from the pass rate over runs (issue 13)
    assert d.j == 1 and d.label_hat == "pass^1 (mean of per-case rates)"
    assert d.label_at == "pass@1 (mean of per-case rates)"
    assert d.metrics.pass_at_1 == 3 / 4 and d.metrics.mean_case_rate == (1 + 2 / 3) / 2
    assert d.short == ("a",) and not d.complete
    assert a.shortfalls() == ["a: 1 of 3 requested runs counted (missing run 2; errored run 3)"]
    assert (a.runs_requested, a.runs_completed, a.runs_counted, a.runs_errored, a.runs_missing) == (
        6,
        5,
        4,
        1,
        1,
    )


def test_the_same_run_twice_is_refused() -> None:
    with pytest.raises(DuplicateRunError, match="run 2 of case 'x' is recorded twice"):
        account([("x", 2, "passed"), ("x", 2, "failed")], k=3)


def test_run_beyond_k_is_refused() -> None:
    with pytest.raises(RunBeyondPlanError, match="has run 5 but k is 3"):
        account([("x", 5, "passed")], k=3)


def test_k_below_one_is_refused() -> None:
    with pytest.raises(InputError, match="k must be at least 1"):
        account([], k=0)


def test_a_planned_case_without_any_run_is_all_missing_and_left_out() -> None:
    a = account([("a", 1, "passed")], k=2, cases=["a", "ghost"])
    ghost = a.cases[1]
    assert ghost.missing == (1, 2) and ghost.metrics is None
    d = a.dataset()
    assert d.excluded == ("ghost",) and d.metrics.cases == 1


def test_only_errored_runs_cannot_give_figures() -> None:
    a = account([("a", 1, "errored")], k=1)
    with pytest.raises(NoRunsError):
        a.dataset()


def test_ledger_max_run() -> None:
    ledger = Ledger()
    assert ledger.max_run == 0
    ledger.add("a", 4, "passed")
    ledger.add("b", 2, "failed")
    assert ledger.max_run == 4


@given(st.integers(1, 12), st.data())
def test_missing_runs_match_the_plain_definition(k: int, data: st.DataObject) -> None:
    """Guards MissingRuns' fast paths (nothing missing; an index set shared by the cases
    recorded at the same indices): every view equals 1..k minus the recorded runs."""
    present = data.draw(st.sets(st.integers(-1, k + 2)))
    want = [i for i in range(1, k + 1) if i not in present]
    missing = MissingRuns(k, present)
    assert list(missing) == want
    assert len(missing) == len(want)
    assert [missing[i] for i in range(len(want))] == want
    assert [i for a, b in missing.ranges() for i in range(a, b + 1)] == want


def test_cases_recorded_at_the_same_indices_keep_their_own_statuses() -> None:
    ledger = Ledger()
    for case, statuses in [("a", "ppf"), ("b", "fep"), ("c", "pp")]:
        for i, s in enumerate(statuses, start=1):
            ledger.add(case, i, {"p": "passed", "f": "failed", "e": "errored"}[s])
    a, b, c = ledger.close(3).cases
    assert (a.passes, a.counted, a.errored, list(a.missing)) == (2, 3, (), [])
    assert (b.passes, b.counted, b.errored, list(b.missing)) == (1, 2, (2,), [])
    assert (c.passes, c.counted, c.errored, list(c.missing)) == (2, 2, (), [3])


def test_a_case_an_adaptive_rule_asked_fewer_runs_of_is_not_short() -> None:
    """Issue 13: `case_k` is each such case's own plan: complete, not missing runs, and
    the dataset figures are labelled at the fewest runs asked of a case."""
    runs = [("x", i, "passed") for i in range(1, 7)] + [("y", i, "failed") for i in (1, 2)]
    a = account(runs, 6, ("x", "y"), {"y": 2})
    assert a.complete and a.runs_requested == 8 and a.runs_missing == 0
    assert a.k_least == 2 and a.k_varies and a.held() == {2: 1, 6: 1}
    d = a.dataset()
    assert d.complete and d.short == () and d.j == 2 and d.k_requested == 2
    assert a.at_requested() is None  # both reached 2: no figure over a chosen subset
    short = account(runs[:-1], 6, ("x", "y"), {"y": 2})
    assert not short.complete and list(short.cases[1].missing) == [2]
    with pytest.raises(RunBeyondPlanError, match="case 'y' has run 3 but k is 2"):
        account([*runs, ("y", 3, "passed")], 6, ("x", "y"), {"y": 2})


def test_cases_at_the_same_indices_with_different_plans_keep_their_own_missing_runs() -> None:
    """The shared MissingRuns is keyed by the plan too: a held case (k 2) and a full
    case (k 3) recorded at runs 1 and 2 miss nothing and run 3."""
    runs = [(c, i, "passed") for c in ("held", "full") for i in (1, 2)]
    held, full = account(runs, 3, ("held", "full"), {"held": 2}).cases
    assert list(held.missing) == [] and list(full.missing) == [3]
