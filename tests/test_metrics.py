"""passhat.metrics: the seed's aggregate, the unbiased estimators, dataset denominators."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passhat.errors import MetricsError, NoRunsError
from passhat.metrics import (
    aggregate,
    case_metrics,
    dataset,
    pass_at,
    pass_at_curve,
    pass_hat,
    pass_hat_curve,
)


def test_seed_coupon_card_failed_three_times() -> None:
    m = aggregate([False, False, False])
    assert (m.k, m.passes, m.pass_rate, m.pass_at_k, m.pass_hat_k) == (3, 0, 0.0, False, False)


def test_seed_illustrative_row_pass_fail_pass() -> None:
    m = aggregate([True, False, True])
    assert (m.k, m.passes, m.pass_at_k, m.pass_hat_k) == (3, 2, True, False)
    assert m.pass_rate == pytest.approx(2 / 3)


def test_no_run_at_all_is_an_error_not_a_zero() -> None:
    with pytest.raises(NoRunsError, match="no run at all: pass@k cannot be computed"):
        aggregate([])
    with pytest.raises(NoRunsError):
        pass_at(0, 0, 1)
    with pytest.raises(NoRunsError):
        dataset([])


def test_j_beyond_n_quotes_both_numbers() -> None:
    with pytest.raises(
        MetricsError, match=r"pass@5 / pass\^5 need at least 5 counted runs.*only 3"
    ):
        pass_hat(3, 3, 5)


@pytest.mark.parametrize(("n", "c", "j"), [(3, 4, 1), (3, -1, 1), (3, 1, 0)], ids=str)
def test_impossible_counts_are_refused(n: int, c: int, j: int) -> None:
    with pytest.raises(MetricsError):
        pass_at(n, c, j)


def _brute(n: int, c: int, j: int) -> tuple[Fraction, Fraction]:
    """Enumerate every j-subset of n runs of which the first c passed."""
    runs = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(runs, j))
    any_pass = Fraction(sum(1 for s in subsets if any(s)), len(subsets))
    all_pass = Fraction(sum(1 for s in subsets if all(s)), len(subsets))
    return any_pass, all_pass


counts = st.integers(1, 9).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
)


@given(counts)
def test_estimators_equal_brute_force_enumeration(ncj: tuple[int, int, int]) -> None:
    n, c, j = ncj
    any_pass, all_pass = _brute(n, c, j)
    assert pass_at(n, c, j) == pytest.approx(float(any_pass), abs=1e-12)
    assert pass_hat(n, c, j) == pytest.approx(float(all_pass), abs=1e-12)


@given(counts)
def test_pass_hat_le_rate_le_pass_at(ncj: tuple[int, int, int]) -> None:
    n, c, j = ncj
    rate = c / n
    assert pass_hat(n, c, j) <= rate + 1e-12
    assert rate <= pass_at(n, c, j) + 1e-12


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_at_j_equal_n_they_are_any_and_all(nc: tuple[int, int]) -> None:
    n, c = nc
    assert pass_at(n, c, n) == (1.0 if c > 0 else 0.0)
    assert pass_hat(n, c, n) == (1.0 if c == n else 0.0)
    assert pass_at(n, c, 1) == pytest.approx(c / n)
    assert pass_hat(n, c, 1) == pytest.approx(c / n)


def test_curves_are_monotone_and_match_closed_form_for_large_n() -> None:
    n, c = 200, 150
    at, hat = pass_at_curve(n, c), pass_hat_curve(n, c)
    assert len(at) == len(hat) == n
    assert all(a <= b for a, b in itertools.pairwise(at))
    assert all(a >= b for a, b in itertools.pairwise(hat))
    # the product form agrees with exact binomials where those are still representable
    assert hat[9] == pytest.approx(math.comb(c, 10) / math.comb(n, 10), rel=1e-12)


def test_case_metrics_refuses_more_passes_than_runs() -> None:
    with pytest.raises(MetricsError):
        case_metrics(2, 3)


def test_dataset_uses_the_seed_denominators() -> None:
    # coupon card 0/3 and illustrative row 2/3
    d = dataset([(3, 0), (3, 2)])
    assert (d.cases, d.runs, d.passes, d.j) == (2, 6, 2, 3)
    assert d.pass_at_1 == pytest.approx(2 / 6)
    assert d.pass_at_j == pytest.approx(0.5)  # one of two cases passed at least once
    assert d.pass_hat_j == 0.0


@given(
    st.lists(
        st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
        min_size=1,
        max_size=12,
    )
)
def test_dataset_pass_at_1_weighs_runs_not_cases(pairs: list[tuple[int, int]]) -> None:
    d = dataset(pairs)
    assert d.pass_at_1 == pytest.approx(sum(c for _, c in pairs) / sum(n for n, _ in pairs))
    assert d.j == min(n for n, _ in pairs)


def test_dataset_pass_at_1_differs_from_mean_of_case_rates() -> None:
    d = dataset([(1, 1), (9, 0)], j=1)
    assert d.pass_at_1 == pytest.approx(0.1)  # mean of case rates would say 0.5


def test_dataset_refuses_a_j_some_case_does_not_reach() -> None:
    with pytest.raises(
        MetricsError, match=r"pass@3 / pass\^3 need 3 counted runs in every case.*only 2"
    ):
        dataset([(3, 1), (2, 2)], j=3)


@given(
    st.lists(
        st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
        min_size=1,
        max_size=40,
    ),
    st.data(),
)
def test_dataset_sums_like_a_loop_over_cases(
    pairs: list[tuple[int, int]], data: st.DataObject
) -> None:
    """Guards the column/map() form of `dataset`: bit for bit the left-to-right sums of
    a plain loop over cases, so no figure moves by a rounding."""
    j = data.draw(st.integers(1, min(n for n, _ in pairs)))
    got = dataset(pairs, j)
    assert got.pass_at_j == sum(pass_at(n, c, j) for n, c in pairs) / len(pairs)
    assert got.pass_hat_j == sum(pass_hat(n, c, j) for n, c in pairs) / len(pairs)
    assert got.mean_case_rate == sum(c / n for n, c in pairs) / len(pairs)
    assert (got.runs, got.passes) == (sum(n for n, _ in pairs), sum(c for _, c in pairs))
