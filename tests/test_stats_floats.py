"""passhat.stats on a few values: lgamma and the incomplete beta's continued fraction
run on Python floats there, and the forecast inverts its posteriors all at once. The
figures must be the very same bits one `beta_quantile` call (numpy's path) gives, not
merely close: reports and their JSON stay identical."""

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
    monkeypatch.setattr(stats.distributions, "_LGAMMA_DICT", -1)


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


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(shape, shape, st.lists(level, min_size=1, max_size=3)),
        min_size=1,
        max_size=12,
    ).filter(lambda rows: len({len(levels) for _, _, levels in rows}) == 1)
)
def test_many_quantile_calls_at_once_are_each_call_to_the_bit(
    rows: list[tuple[float, float, list[float]]],
) -> None:
    """`_beta_quantile_rows` against its reference, one `beta_quantile` call per row:
    each row keeps its own stop, so no row's bits depend on the others'."""
    width = len(rows[0][2])
    a = np.array([[row[0]] * width for row in rows])
    b = np.array([[row[1]] * width for row in rows])
    q = np.array([row[2] for row in rows])
    many = stats.distributions._beta_quantile_rows(a, b, q)
    with pytest.MonkeyPatch.context() as patch:  # the continued fraction on numpy alone
        patch.setattr(stats.distributions, "_FEW_ROW_VALUES", -1)
        on_numpy = stats.distributions._beta_quantile_rows(a, b, q)
    for i, (a_i, b_i, levels) in enumerate(rows):
        one = stats.beta_quantile(a_i, b_i, levels).tolist()
        assert many[i].tolist() == one
        assert on_numpy[i].tolist() == one


@pytest.mark.parametrize("k", [1, 3, 10, 100, 1000])
@pytest.mark.parametrize("prior", [stats.JEFFREYS, stats.UNIFORM, (0.3, 7.0)])
def test_the_forecast_of_every_posterior_is_its_own_quantiles_to_the_bit(
    k: int, prior: tuple[float, float]
) -> None:
    """Every count of passes out of k, at several levels: the per-case forecast's ends
    are `beta_quantile` of that posterior alone, raised to the m-th power. All 1,001
    counts of k = 1,000 go through the forecast together; every 8th of them and the 4
    at each end are checked against their own call (one costs about 2 ms there: all
    4,004 were most of this file's time), every count below."""
    passes = np.arange(k + 1)
    checked = (
        passes.tolist()
        if k <= 100
        else sorted({*range(0, k + 1, 8), *range(4), k - 3, k - 2, k - 1, k})
    )
    for confidence in (0.95, 0.9, 0.5, 0.999):
        stats.forecasts._ENDS.clear()
        _, low, high = stats.forecast_counts(
            np.full(k + 1, k), passes, 3, prior=prior, confidence=confidence
        )
        alpha = 1.0 - confidence
        for c in checked:
            ends = stats.beta_quantile(c + prior[0], k - c + prior[1], [alpha / 2, 1 - alpha / 2])
            assert [low[c], high[c]] == (ends**3).tolist()


def test_lgamma_of_a_few_values_is_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.array([[0.5, 10.5], [4999.5, 0.5]])
    many = np.array([0.5, 3.0, 10.5, 0.5, 7.25, 3.0] * 20)  # under `_LGAMMA_DICT`, repeated
    few, dict_path = stats._lgamma(x), stats._lgamma(many)
    numpy_only(monkeypatch)
    assert few.tolist() == stats._lgamma(x).tolist()
    assert dict_path.tolist() == stats._lgamma(many).tolist()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, 0.5, 1 / 3])),
        min_size=2,
        max_size=700,
    )
)
def test_mean_and_spread_are_numpys_to_the_bit(values: list[float]) -> None:
    """Guards `_mean_var` (a score interval's mean and spread without numpy's Python
    layers): the bits of `mean()` and `var(ddof=1)`, past numpy's blocks of 8 and 128."""
    array = np.array(values, dtype=np.float64)
    mean, variance = stats._base._mean_var(array.copy())
    assert (mean, variance) == (float(array.mean()), float(array.var(ddof=1)))


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
    stats.forecasts._ENDS.clear()
    fast = stats.uncertainty(accounting, m=10, seed=0)
    stats._t_quantile.cache_clear()
    stats.forecasts._ENDS.clear()
    numpy_only(monkeypatch)
    slow = stats.uncertainty(accounting, m=10, seed=0)
    stats._t_quantile.cache_clear()
    stats.forecasts._ENDS.clear()
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
    # both ends from one sort: each the bits of its own quantile
    other = float(np.quantile(array, 1.0 - q, method="weibull"))
    low, high = stats._bootstrap_ends(array, q)
    assert np.float64([low, high]).tobytes() == np.float64([want, other]).tobytes()


def test_the_share_forecast_reuses_the_dataset_bootstrap_s_draws() -> None:
    """With every case at the same runs, the dataset bootstrap and the share forecast draw
    the very same case records from one seed: the second call is served from memory
    (`_record_draws`), read-only and to the bit what a fresh generator draws."""
    n = np.full(40, 3)
    c = np.arange(40) % 4
    stats._base._LAST_DRAWS.clear()
    stats.dataset_intervals_counts(n, c, 3, resamples=200, seed=9)
    (remembered,) = stats._base._LAST_DRAWS.values()
    counts = np.bincount(c).astype(np.intp)
    assert stats._base._record_draws(40, counts, 200, 9) is remembered
    fresh = np.random.default_rng(9).multinomial(40, counts / 40, 200)
    assert remembered.tobytes() == fresh.tobytes() and not remembered.flags.writeable
    share = stats.share_forecast(n, c, 10, resamples=200, seed=9)
    assert stats._base._record_draws(40, counts, 200, 9) is remembered
    stats._base._LAST_DRAWS.clear()
    assert stats.share_forecast(n, c, 10, resamples=200, seed=9) == share


def _product(n: np.ndarray, c: np.ndarray, j: int) -> np.ndarray:
    """pass^j as the loop of j factors it was before the table (the reference)."""
    out = np.ones(np.broadcast_shapes(n.shape, c.shape))
    for t in range(j):
        out *= np.maximum(c.astype(np.float64) - t, 0.0) / (n.astype(np.float64) - t)
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 40),
    st.lists(st.tuples(st.integers(0, 200), st.floats(0.0, 1.0)), min_size=1, max_size=30),
)
def test_pass_at_and_pass_hat_from_the_table_are_the_product_s_bits(
    j: int, draws: list[tuple[int, float]]
) -> None:
    """Integer counts under `_TABLE_RUNS` are read from `_hat_table`, larger ones (and
    floats) take the product: every case gets the product's bits either way."""
    n = np.array([j + extra for extra, _ in draws], dtype=np.int64)
    c = np.array([round(share * runs) for (_, share), runs in zip(draws, n, strict=True)])
    hat = stats.pass_hat_array(n, c, j)
    at = stats.pass_at_array(n, c, j)
    assert hat.tobytes() == _product(n, c, j).tobytes()
    assert at.tobytes() == (1.0 - _product(n, n - c, j)).tobytes()
    assert stats.pass_hat_array(n.astype(np.float64), c, j).tobytes() == hat.tobytes()
    assert stats.pass_at_array(n.tolist(), c.tolist(), j).tobytes() == at.tobytes()
    assert hat.dtype == at.dtype == np.float64 and hat.flags.writeable


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-3, 12), st.integers(0, 12)), min_size=1, max_size=60),
    st.sampled_from([np.int64, np.float64]),
)
def test_unique_rows_of_counts_is_numpys_unique_over_rows(
    pairs: list[tuple[int, int]], dtype: type
) -> None:
    """`_unique_rows` on integer rows and on rows of plain floats (listed in Python up to
    `_LISTED_ROWS` rows, a lexsort above): numpy's records, inverse and counts."""
    rows = np.array(pairs, dtype=dtype).reshape(len(pairs), 2)
    if dtype is np.float64:
        rows = rows / 3.0
    records, inverse, counts = stats._unique_rows(rows)
    want, want_inverse, want_counts = np.unique(
        rows, axis=0, return_inverse=True, return_counts=True
    )
    assert records.dtype == want.dtype and records.tobytes() == want.tobytes()
    assert inverse.tolist() == want_inverse.ravel().tolist()
    assert counts.tolist() == want_counts.tolist()


@pytest.mark.parametrize(
    ("n", "c"),
    [
        (np.full(20, 5), np.arange(20) % 6),  # equal runs, many records: case by case
        (np.arange(30) % 3 + 3, np.arange(30) % 4),  # unequal runs, many records
        (np.arange(400) % 2 + 4, np.arange(400) % 3),  # unequal runs, few records
    ],
    ids=["equal-runs", "unequal-runs", "unequal-few-records"],
)
def test_the_share_forecast_reads_the_dataset_bootstrap_s_resampled_cases(
    n: np.ndarray, c: np.ndarray
) -> None:
    """In every shape the dataset bootstrap and the share forecast read one resampling of
    the cases (`_case_record_draws`): per record (multinomial) when records are few, case
    by case from `default_rng(seed)` (as `_bootstrap_totals`) summed per record when not;
    the share's call is served from memory, and the draws are what a fresh generator
    draws. The bootstrap of the rate over runs keeps `_bootstrap_totals`' bits."""
    stats._base._LAST_DRAWS.clear()
    records, counts, draws = stats.bootstrap._case_record_draws(n, c, 200, 9)
    assert (draws.sum(axis=1) == n.size).all() and not draws.flags.writeable
    if stats._base._few_records(records.shape[0], n.size):
        fresh = np.random.default_rng(9).multinomial(n.size, counts / n.size, 200)
    else:
        rng = np.random.default_rng(9)
        cases = np.concatenate(list(stats.bootstrap._resample_counts(n.size, 200, rng)))
        _, inverse, _ = stats._unique_rows(np.column_stack([n, c]))
        fresh = np.stack([np.bincount(inverse, weights=w, minlength=len(counts)) for w in cases])
    assert draws.tolist() == fresh.astype(np.int64).tolist()
    stats._base._LAST_DRAWS.clear()
    stats.dataset_intervals_counts(n, c, 3, resamples=200, seed=9)
    (remembered,) = stats._base._LAST_DRAWS.values()
    assert remembered.tolist() == draws.tolist()
    share = stats.share_forecast(n, c, 10, resamples=200, seed=9)
    (after,) = stats._base._LAST_DRAWS.values()
    assert after is remembered  # no draw of its own
    stats._base._LAST_DRAWS.clear()
    assert stats.share_forecast(n, c, 10, resamples=200, seed=9) == share
    if int(n.min()) == int(n.max()):  # the rate over runs: `_bootstrap_totals`' bits
        totals = stats._bootstrap_totals(np.column_stack([c, n]).astype(np.float64), 200, 9)
        rate = float(c.sum() / n.sum())
        boot = stats.bootstrap._percentile(
            "pass rate", rate, totals[:, 0] / totals[:, 1], n.size, 0.95, "m"
        )
        floor = stats.bootstrap._binomial_floor(rate, int(n.sum()), n.size, 0.95)
        want = stats.bootstrap._floored(boot, floor)
        got = stats.bootstrap._bootstrap_rate(n, c, resamples=200, seed=9)
        assert (got.low, got.high) == (want.low, want.high)
