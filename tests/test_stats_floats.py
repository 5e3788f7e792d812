"""passhat.stats on a few values: lgamma and the incomplete beta's continued fraction
run on Python floats there (the forecast's dozen quantiles). The figures must be the
very same bits numpy's path gives, not merely close: reports and their JSON stay
identical."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat import stats

shape = st.floats(0.05, 6000.0, allow_nan=False)
level = st.floats(1e-6, 1.0 - 1e-6, allow_nan=False)


def numpy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats.distributions, "_FEW_VALUES", -1)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(shape, shape, level), min_size=1, max_size=stats._FEW_VALUES))
def test_the_fraction_on_floats_is_numpys_to_the_bit(
    values: list[tuple[float, float, float]],
) -> None:
    a, b, x = (np.array(column, dtype=np.float64) for column in zip(*values, strict=True))
    floats = stats._beta_cf_floats(a.tolist(), b.tolist(), x.tolist())
    assert floats == stats._beta_cf(a, b, x).tolist()


@settings(max_examples=60, deadline=None)
@given(shape, shape, st.lists(level, min_size=1, max_size=2))
def test_beta_quantiles_are_the_same_bits_either_way(a: float, b: float, q: list[float]) -> None:
    fast = stats.beta_quantile(a, b, q)
    with pytest.MonkeyPatch.context() as patch:
        numpy_only(patch)
        slow = stats.beta_quantile(a, b, q)
    assert fast.tolist() == slow.tolist()


def test_lgamma_of_a_few_values_is_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.array([[0.5, 10.5], [4999.5, 0.5]])
    few = stats._lgamma(x)
    numpy_only(monkeypatch)
    assert few.tolist() == stats._lgamma(x).tolist()


def test_a_report_s_uncertainty_is_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a report prints: intervals, t quantiles and the forecast of 30 cases."""
    from passhat.accounting import account

    rows = [
        (f"c{i}", r, "passed" if (i * 7 + r) % (i % 5 + 2) else "failed")
        for i in range(30)
        for r in range(1, 11)
    ]
    accounting = account(rows, 10)
    stats._t_quantile.cache_clear()
    stats._beta_ends.cache_clear()
    fast = stats.uncertainty(accounting, m=10, seed=0)
    stats._t_quantile.cache_clear()
    stats._beta_ends.cache_clear()
    numpy_only(monkeypatch)
    slow = stats.uncertainty(accounting, m=10, seed=0)
    stats._t_quantile.cache_clear()
    stats._beta_ends.cache_clear()
    assert fast == slow


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from([0.0, -0.0, 0.25, 0.8, 1.0]),
            st.floats(0.0, 1.0),
            st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        ),
        min_size=1,
        max_size=60,
    ),
    st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 1.0, 0.025, 0.975])),
)
def test_the_weibull_quantile_is_numpys_to_the_bit(values: list[float], q: float) -> None:
    """Guards `_weibull_quantile` (the bootstrap's percentile ends without numpy's
    general quantile): the same bits as `np.quantile(method="weibull")`, at the ends
    of the array, between tied values, and (through numpy's own path) with signs."""
    array = np.array(values, dtype=np.float64)
    want = float(np.quantile(array, q, method="weibull"))
    got = stats._weibull_quantile(array, q)
    assert np.float64(got).tobytes() == np.float64(want).tobytes()
