"""passhat.stats: intervals, forecasts and planning, checked against closed forms,
brute force and simulation (calibration, not just arithmetic)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import run_cli
from passhat import stats
from passhat.accounting import account
from passhat.errors import MetricsError, NoRunsError
from passhat.metrics import pass_at, pass_hat

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


# --------------------------------------------------------------------------- distributions


@pytest.mark.parametrize(
    ("a", "b", "closed"),
    [
        (1.0, 1.0, lambda x: x),
        (3.0, 1.0, lambda x: x**3),
        (1.0, 4.0, lambda x: 1 - (1 - x) ** 4),
        (0.5, 0.5, lambda x: 2 / math.pi * math.asin(math.sqrt(x))),
        (2.0, 3.0, lambda x: 6 * x**2 - 8 * x**3 + 3 * x**4),
    ],
    ids=["uniform", "beta-3-1", "beta-1-4", "arcsine", "beta-2-3"],
)
def test_betainc_matches_closed_forms(a: float, b: float, closed: object) -> None:
    xs = np.linspace(0.0, 1.0, 41)
    expected = np.array([closed(x) for x in xs])  # type: ignore[operator]
    assert np.allclose(stats.betainc(a, b, xs), expected, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.2, 80.0),
    st.floats(0.2, 80.0),
    st.floats(0.001, 0.999),
)
def test_betainc_symmetry_and_quantile_inverse(a: float, b: float, x: float) -> None:
    assert float(stats.betainc(a, b, x)) == pytest.approx(
        1.0 - float(stats.betainc(b, a, 1.0 - x)), abs=1e-11
    )
    q = float(stats.betainc(a, b, x))
    if 1e-9 < q < 1 - 1e-9:
        assert float(stats.beta_quantile(a, b, q)) == pytest.approx(x, abs=1e-8)


def test_beta_quantile_far_in_a_tail_bisects_without_a_warning() -> None:
    """Beta(5585, 1) at q = 0.1875: the density at the first guess underflows, so the
    Newton step overflows; the step must fall back to bisection quietly (pytest turns
    the overflow warning into an error) and still invert betainc. Closed form: q^(1/a)."""
    x = float(stats.beta_quantile(5585.0, 1.0, 0.1875))
    assert x == pytest.approx(0.1875 ** (1 / 5585.0), abs=1e-12)


def test_betainc_against_numerical_integration() -> None:
    a, b = 3.5, 2.25
    grid = np.linspace(0.0, 0.7, 400_001)
    density = grid ** (a - 1) * (1 - grid) ** (b - 1)
    area = float(np.sum((density[1:] + density[:-1]) / 2 * np.diff(grid)))
    beta_fn = math.exp(math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    assert float(stats.betainc(a, b, 0.7)) == pytest.approx(area / beta_fn, rel=1e-8)


@pytest.mark.parametrize(("df", "t"), [(1, 12.7062047), (2, 4.3026527), (10, 2.2281389)])
def test_t_quantile_table_values(df: int, t: float) -> None:
    assert stats._t_quantile(df, 0.05) == pytest.approx(t, abs=1e-6)


def test_unbiased_estimators_match_metrics_for_every_count() -> None:
    for n in range(1, 13):
        c = np.arange(n + 1)
        for j in range(1, n + 1):
            at = stats.pass_at_array(np.full(n + 1, n), c, j)
            hat = stats.pass_hat_array(np.full(n + 1, n), c, j)
            assert np.allclose(at, [pass_at(n, int(x), j) for x in c], atol=1e-12)
            assert np.allclose(hat, [pass_hat(n, int(x), j) for x in c], atol=1e-12)


# --------------------------------------------------------------------------- per case


def test_wilson_known_values_and_the_rule_of_three() -> None:
    low, high = stats.wilson([0, 3, 2], [3, 3, 3])
    z2 = 1.959963984540054**2
    assert high[0] == pytest.approx(z2 / (3 + z2))  # 0 of n: upper end z^2 / (n + z^2)
    assert low[1] == pytest.approx(3 / (3 + z2))
    assert (low[2], high[2]) == pytest.approx((0.2076596, 0.9385081), abs=1e-6)
    n = np.arange(1, 2001)
    bound = stats.all_or_none_bound(n)
    assert np.all(bound < 3 / n)  # the rule of three is a safe round-up ...
    assert np.all(bound[99:] > 0.98 * 3 / n[99:])  # ... and tight for large n
    assert float(stats.all_or_none_bound(3)) == pytest.approx(1 - 0.05 ** (1 / 3))


def test_case_intervals_say_what_all_pass_and_all_fail_bound() -> None:
    acc = account(
        [("all", i, "passed") for i in range(1, 4)]
        + [("none", i, "failed") for i in range(1, 4)]
        + [("some", 1, "passed"), ("some", 2, "failed")]
        + [("errored", 1, "errored")],
        k=3,
    )
    rows = {c.case: c for c in stats.case_intervals(acc)}
    assert set(rows) == {"all", "none", "some"}  # no counted run: nothing to bound
    assert rows["all"].note == "all 3 passed: failure rate below 63.2% (95%, one-sided)"
    assert rows["none"].note == "all 3 failed: pass rate below 63.2% (95%, one-sided)"
    assert rows["some"].bound is None and rows["some"].note is None
    assert rows["some"].runs == 2 and rows["some"].rate == 0.5


# --------------------------------------------------------------------------- dataset


def test_cluster_interval_is_the_se_of_case_means_when_runs_are_equal() -> None:
    rng = np.random.default_rng(11)
    c = rng.integers(0, 6, 40)
    n = np.full(40, 5)
    i = stats.cluster_interval(n, c)
    rates = c / n
    se = rates.std(ddof=1) / math.sqrt(40)
    t = stats._t_quantile(39, 0.05)
    assert i.estimate == pytest.approx(rates.mean())
    assert (i.low, i.high) == pytest.approx((rates.mean() - t * se, rates.mean() + t * se))
    assert i.method == "cluster-robust SE, t(39)"


def test_clustering_matters_when_cases_differ() -> None:
    """Runs of one case are correlated: the cluster interval is wider than a naive one."""
    n = np.full(50, 10)
    c = np.array([10] * 25 + [0] * 25)
    i = stats.cluster_interval(n, c)
    naive = 1.96 * math.sqrt(0.25 / 500)
    assert i.half_width > 3 * naive


def test_bootstrap_is_seeded_and_matches_the_analytic_se() -> None:
    rng = np.random.default_rng(5)
    n = np.full(300, 4)
    c = rng.binomial(4, rng.beta(0.7, 0.5, 300))
    one = stats.cluster_bootstrap(n, c, resamples=2000, seed=3)
    assert one == stats.cluster_bootstrap(n, c, resamples=2000, seed=3)
    assert one != stats.cluster_bootstrap(n, c, resamples=2000, seed=4)
    analytic = stats.cluster_interval(n, c)
    assert one[0].half_width == pytest.approx(analytic.half_width, rel=0.08)
    assert one[1].label == "pass@4" and one[2].label == "pass^4"
    assert one[2].estimate == pytest.approx(np.mean([pass_hat(4, int(x), 4) for x in c]))


def test_bootstrap_resamples_cases_as_clusters() -> None:
    """Brute force: the vectorised multiplicities give a case-level resampling distribution."""
    rng = np.random.default_rng(0)
    cases = 7
    blocks = list(stats._resample_counts(cases, 40_000, rng))
    counts = np.concatenate(blocks)
    assert counts.shape == (40_000, cases) and np.all(counts.sum(axis=1) == cases)
    # Each case is drawn Binomial(G, 1/G) times per resample.
    assert counts.mean() == pytest.approx(1.0, abs=0.01)
    assert counts.var() == pytest.approx(1 - 1 / cases, rel=0.03)


def test_all_pass_dataset_uses_the_exact_bound_over_cases() -> None:
    n = np.full(20, 3)
    i = stats.cluster_interval(n, n)
    assert (i.low, i.high) == pytest.approx((0.025 ** (1 / 20), 1.0))
    assert i.method.startswith("exact")
    _, _, hat = stats.cluster_bootstrap(n, np.zeros(20), resamples=200)
    assert (hat.low, hat.high) == pytest.approx((0.0, 1 - 0.025 ** (1 / 20)))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.cluster_interval([3], [1]), "at least 2 cases"),
        (lambda: stats.cluster_bootstrap([3, 3], [1, 2], resamples=99), "at least 100"),
        (lambda: stats.cluster_bootstrap([3, 2], [1, 2], j=3), "one case has only 2"),
        (lambda: stats.cluster_interval([3, 3], [1, 2], confidence=1.2), "between 0.5 and 1"),
        (lambda: stats.forecast_counts([3], [3], 0), "at least 1 run"),
        (lambda: stats.wilson([4], [3], confidence=0.3), "between 0.5 and 1"),
    ],
    ids=["one-case", "few-resamples", "j-beyond-runs", "confidence", "m-zero", "conf-wilson"],
)
def test_bad_arguments_are_metrics_errors(call: object, message: str) -> None:
    with pytest.raises(MetricsError, match=message):
        call()  # type: ignore[operator]


_TWO_CASES = account(
    [("a", 1, "passed"), ("a", 2, "failed"), ("b", 1, "passed"), ("b", 2, "passed")], k=2
)


@pytest.mark.parametrize(
    "call",
    [
        lambda: stats.cluster_bootstrap([3, 3], [1, 2], resample=500),
        lambda: stats.case_rate_bootstrap([3, 2], [1, 2], resample=500),
        lambda: stats.dataset_intervals_counts([3, 3], [1, 2], 3, resample=500),
        lambda: stats.dataset_intervals(_TWO_CASES, resample=500),
        lambda: stats.paired_differences([3, 3], [1, 2], [3, 3], [2, 2], resample=500),
        lambda: stats.compare_counts([3, 3], [1, 2], [3, 3], [2, 2], resample=500),
        lambda: stats.compare(_TWO_CASES, _TWO_CASES, resample=500),
        lambda: stats.share_forecast([3, 3], [1, 2], 10, resample=500),
        lambda: stats.forecast(_TWO_CASES, resample=500),
        lambda: stats.uncertainty(_TWO_CASES, resample=500),
    ],
    ids=[
        "cluster-bootstrap",
        "case-rate-bootstrap",
        "dataset-counts",
        "dataset",
        "paired-differences",
        "compare-counts",
        "compare",
        "share-forecast",
        "forecast",
        "uncertainty",
    ],
)
def test_a_misspelt_resampling_keyword_is_refused_not_ignored(call: object) -> None:
    """The resampled figures take resamples, confidence and seed as `Resampling` (**kwargs):
    a name it does not hold is still a TypeError naming it, as when each signature did."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'resample'"):
        call()  # type: ignore[operator]


def test_no_counted_run_is_not_a_zero() -> None:
    with pytest.raises(NoRunsError):
        stats.cluster_interval([0, 3], [0, 1])


def _coverage(cases: int, k: int, a: float, b: float, experiments: int, seed: int) -> np.ndarray:
    """k = 0: each case gets between 2 and 30 runs, so case records are mostly distinct."""
    rng = np.random.default_rng(seed)
    j = k or 2
    truth = (a / (a + b), float(stats.beta_moment(a, b, j)))
    hits = np.zeros(3)
    for e in range(experiments):
        n = np.full(cases, k) if k else rng.integers(2, 31, cases)
        n[0] = j
        c = rng.binomial(n, rng.beta(a, b, cases))
        robust = stats.cluster_interval(n, c)
        boot1, _, boot_hat = stats.cluster_bootstrap(n, c, resamples=500, seed=e)
        hits += [
            robust.low <= truth[0] <= robust.high,
            boot1.low <= truth[0] <= boot1.high,
            boot_hat.low <= truth[1] <= boot_hat.high,
        ]
    return hits / experiments


@pytest.mark.parametrize(
    ("cases", "k", "a", "b"),
    [(100, 3, 0.5, 0.5), (40, 5, 1.2, 0.6), (100, 0, 0.5, 0.5)],
    ids=["100-cases-k3-u-shaped", "40-cases-k5-skewed", "100-cases-2-to-30-runs"],
)
def test_dataset_intervals_are_calibrated(cases: int, k: int, a: float, b: float) -> None:
    """1,000 simulated experiments: cases drawn from a known population, k runs each.

    The truth is the population pass@1 = E[p] and pass^j = E[p^j]: the intervals
    describe a new draw of cases. B = 500 inside the loop (the default is 2,000):
    percentile ends from 500 resamples are noisier, which can only cost coverage,
    so passing at 500 is the stricter check. The third setting has mostly
    distinct case records, so it takes the case-by-case resampling path.
    """
    cover = _coverage(cases, k, a, b, experiments=1000, seed=cases + k)
    assert np.all(np.abs(cover - 0.95) <= 0.025), cover


def test_record_and_case_resampling_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resampling distinct records (multinomial) is the same distribution as resampling cases."""
    rng = np.random.default_rng(6)
    columns = rng.integers(0, 4, (400, 2)).astype(np.float64)  # 16 distinct records
    fast = stats._bootstrap_totals(columns, 20_000, 1)
    flips_fast = np.concatenate(list(stats._flip_totals(columns, 20_000, rng)))
    monkeypatch.setattr(stats._base, "_FEW_RECORDS", 10**9)  # force the case-by-case path
    slow = stats._bootstrap_totals(columns, 20_000, 2)
    flips_slow = np.concatenate(list(stats._flip_totals(columns, 20_000, rng)))
    for one, other in [(fast, slow), (flips_fast, flips_slow)]:
        assert np.allclose(one.mean(axis=0), other.mean(axis=0), rtol=0.01)
        assert np.allclose(np.cov(one.T), np.cov(other.T), rtol=0.05, atol=1.0)
    assert np.allclose(fast.mean(axis=0), columns.sum(axis=0), rtol=0.01)
    assert np.allclose(flips_fast.mean(axis=0), columns.sum(axis=0) / 2, rtol=0.01)


# --------------------------------------------------------------------------- forecast


def test_forecast_matches_beta_function_identities() -> None:
    n = np.array([3, 3, 3, 10, 1])
    c = np.array([3, 0, 2, 7, 1])
    for m in (1, 2, 10, 37):
        expected, _, _ = stats.forecast_counts(n, c, m)
        for i in range(n.size):
            a, b = c[i] + 0.5, n[i] - c[i] + 0.5
            product = math.prod((a + t) / (a + b + t) for t in range(m))
            via_beta = math.exp(
                math.lgamma(a + m) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(a + b + m)
            )
            assert expected[i] == pytest.approx(product, rel=1e-10)
            assert expected[i] == pytest.approx(via_beta, rel=1e-10)


def test_three_of_three_is_no_promise_for_the_next_ten() -> None:
    expected, low, high = stats.forecast_counts([3], [3], 10)
    assert expected[0] == pytest.approx(math.prod((3.5 + t) / (4 + t) for t in range(10)))
    assert expected[0] < 0.5  # "well below 1": 49.6 %
    assert low[0] < 0.01 and high[0] > 0.99  # three runs barely constrain p^10
    uniform, _, _ = stats.forecast_counts([3], [3], 10, prior=stats.UNIFORM)
    assert uniform[0] == pytest.approx(4 / 14)  # Laplace: (n + 1) / (n + m + 1)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_forecast_falls_with_the_horizon(case: tuple[int, int]) -> None:
    n, c = case
    values = stats.beta_moment(c + 0.5, n - c + 0.5, np.arange(1, 60))
    assert np.all(np.diff(values) < 0)
    ends = [stats.forecast_counts([n], [c], m) for m in (1, 5, 25)]
    assert [float(e[0][0]) for e in ends] == pytest.approx(values[[0, 4, 24]], rel=1e-12)
    assert ends[0][2][0] >= ends[1][2][0] >= ends[2][2][0]  # the upper end falls too


def test_forecast_matches_brute_force_simulation() -> None:
    """Draw p from the prior, run 3 times, keep the 3/3 cases, run 10 more: all pass?"""
    rng = np.random.default_rng(2024)
    p = rng.beta(0.5, 0.5, 4_000_000)
    kept = p[rng.binomial(3, p) == 3]
    all_pass = rng.binomial(10, kept) == 10
    expected = float(stats.forecast_counts([3], [3], 10)[0][0])
    se = math.sqrt(expected * (1 - expected) / kept.size)
    assert abs(all_pass.mean() - expected) < 4 * se


def test_credible_intervals_are_calibrated_over_the_prior() -> None:
    """With p drawn from the prior, the 95 % credible interval holds p^m 95 % of the time."""
    rng = np.random.default_rng(9)
    p = rng.beta(0.5, 0.5, 20_000)
    n = np.full(p.size, 5)
    c = rng.binomial(5, p)
    _, low, high = stats.forecast_counts(n, c, 4)
    inside = (low <= p**4) & (p**4 <= high)
    assert inside.mean() == pytest.approx(0.95, abs=0.01)


def test_share_forecast_is_the_mean_of_per_case_forecasts_under_the_fitted_population() -> None:
    """The dataset forecast is hierarchical (issue 13): one Beta fitted across cases,
    each case's posterior E[p^m] under it, averaged; the interval holds the estimate."""
    rng = np.random.default_rng(4)
    n = np.full(30, 3)
    c = rng.binomial(3, rng.beta(2, 2, 30))
    share = stats.share_forecast(n, c, 5)
    expected, _, _ = stats.forecast_counts(n, c, 5, prior=stats.fitted_prior(n, c))
    assert share.estimate == pytest.approx(float(expected.mean()), rel=1e-9)
    assert share.low is not None and share.high is not None
    assert share.low <= share.estimate <= share.high and share.low < share.high
    assert share.method.startswith("fitted Beta(") and share.note is None


def test_share_forecast_of_a_long_horizon_is_the_closed_form() -> None:
    """Past `PRODUCT_TERMS` the share forecast's E[p^m] is `beta_moment`'s closed form,
    as the per-case forecasts' is (a product of m terms per resample took hours at
    2**31: `--forecast 2147483648` hung); the longest horizon allowed is as fast."""
    from passhat.stats._base import MAX_HORIZON
    from passhat.stats.forecasts import PRODUCT_TERMS

    rng = np.random.default_rng(4)
    n = np.full(30, 3)
    c = rng.binomial(3, rng.beta(2, 2, 30))
    for m in (PRODUCT_TERMS + 1, MAX_HORIZON):
        share = stats.share_forecast(n, c, m)
        expected, _, _ = stats.forecast_counts(n, c, m, prior=stats.fitted_prior(n, c))
        assert share.estimate == pytest.approx(float(expected.mean()), rel=1e-9)
        assert share.low is not None and share.high is not None
        assert 0.0 <= share.low <= share.estimate <= share.high <= 1.0


@pytest.mark.parametrize("m", [1_000_001, 2**31, 2**63])
def test_a_horizon_past_the_longest_is_refused(m: int) -> None:
    """E[p^m] from lgamma differences near m loses its digits: at 2**63 every case's
    forecast came out 1.0 (certain to pass forever)."""
    with pytest.raises(MetricsError, match="forecast at most 1,000,000 runs"):
        stats.forecast_counts([3, 3], [1, 2], m)
    with pytest.raises(MetricsError, match="forecast at most 1,000,000 runs"):
        stats.share_forecast([3] * 12, [1, 2] * 6, m)


@pytest.mark.parametrize(
    ("n", "c", "why"),
    [
        ([3], [3], "1 case;"),  # the demo's single case: once 0.1 % with interval 0.0-0.0 %
        ([3] * 12, [3] * 12, "every counted run passed"),
        ([1] * 12, [0, 1] * 6, "no case has 2 counted runs"),
    ],
    ids=["one-case", "no-spread", "no-repeats"],
)
def test_no_dataset_forecast_interval_where_it_cannot_be_calibrated(
    n: list[int], c: list[int], why: str
) -> None:
    share = stats.share_forecast(n, c, 10)
    assert share.low is None and share.high is None
    assert share.note is not None and why in share.note
    assert 0.0 <= share.estimate <= 1.0


def test_forecast_per_case_from_accounting_leaves_out_uncounted_cases() -> None:
    acc = account(
        [("a", 1, "passed"), ("a", 2, "passed"), ("a", 3, "passed"), ("b", 1, "errored")], k=3
    )
    f = stats.forecast(acc, 10)
    assert [c.case for c in f.cases] == ["a"] and f.prior_name == "Jeffreys Beta(1/2, 1/2)"
    assert f.share.estimate == pytest.approx(f.cases[0].expected)


def test_fitted_prior_recovers_the_population_and_forecasts_it() -> None:
    """Empirical Bayes: fit Beta(a, b) to 20,000 cases of 3 runs, then check the forecast
    of a 3/3 case against what such cases really do in their next 10 runs."""
    rng = np.random.default_rng(12)
    p = rng.beta(2.0, 0.7, 20_000)
    n = np.full(p.size, 3)
    c = rng.binomial(3, p)
    a, b = stats.fitted_prior(n, c)
    assert (a, b) == pytest.approx((2.0, 0.7), rel=0.15)
    acc = account(
        [(f"c{i}", r, "passed" if r <= c[i] else "failed") for i in range(300) for r in (1, 2, 3)],
        k=3,
    )
    f = stats.forecast(acc, 10, prior="fitted")
    assert f.prior_name.startswith("fitted Beta(")
    solid = next(x for x in f.cases if x.passes == 3)
    next_ten = rng.binomial(10, p[c == 3]) == 10
    se = math.sqrt(next_ten.mean() * (1 - next_ten.mean()) / next_ten.size)
    fitted_value = float(stats.forecast_counts([3], [3], 10, prior=(a, b))[0][0])
    assert abs(next_ten.mean() - fitted_value) < 4 * se + 0.01
    assert solid.expected == pytest.approx(next_ten.mean(), abs=0.06)  # fitted on 300 cases
    with pytest.raises(MetricsError, match="no spread to fit a prior"):
        stats.fitted_prior(np.full(4, 3), np.full(4, 3))


# --------------------------------------------------------------------------- planning


def _mean_half_width(cases: int, k: int, a: float, b: float, rng: np.random.Generator) -> float:
    widths = [
        stats.cluster_interval(np.full(cases, k), rng.binomial(k, rng.beta(a, b, cases))).half_width
        for _ in range(200)
    ]
    return float(np.mean(widths))


def test_pass_at_1_plan_reaches_its_target_in_simulation() -> None:
    rng = np.random.default_rng(3)
    a, b, cases = 2.0, 1.0, 200
    pilot = rng.binomial(3, rng.beta(a, b, cases))
    plan = stats.plan_pass_at_1(np.full(cases, 3), pilot, 0.04)
    assert plan.runs_needed is not None and plan.runs_needed > 3
    z = 1.959963984540054
    predicted = z * math.sqrt((plan.between + plan.within * 3 / plan.runs_needed) / cases)
    predicted_short = z * math.sqrt(
        (plan.between + plan.within * 3 / (plan.runs_needed - 1)) / cases
    )
    assert predicted <= 0.04 < predicted_short  # the smallest number of runs that does it
    at_runs = _mean_half_width(cases, plan.runs_needed, a, b, rng)
    at_cases = _mean_half_width(plan.cases_needed, 3, a, b, rng)
    assert 0.8 * 0.04 < at_runs <= 1.05 * 0.04
    assert 0.9 * 0.04 < at_cases <= 1.05 * 0.04
    assert plan.cases_floor < plan.cases_needed


def test_more_runs_cannot_beat_between_case_spread() -> None:
    n = np.full(20, 4)
    c = np.array([4] * 10 + [0] * 10)  # cases differ completely; runs agree within a case
    plan = stats.plan_pass_at_1(n, c, 0.05)
    assert plan.runs_needed is None
    assert plan.cases_floor > 20


def test_pass_hat_plan_reaches_its_target_in_simulation() -> None:
    rng = np.random.default_rng(8)
    a, b, cases = 2.0, 1.0, 200
    pilot = rng.binomial(3, rng.beta(a, b, cases))
    plan = stats.plan_pass_hat(np.full(cases, 3), pilot, 3, 0.05)
    assert plan.label == "pass^3" and plan.runs_needed is not None and plan.runs_needed > 3
    widths = []
    for e in range(150):
        c = rng.binomial(plan.runs_needed, rng.beta(a, b, cases))
        hat = stats.cluster_bootstrap(np.full(cases, plan.runs_needed), c, 3, resamples=200, seed=e)
        widths.append(hat[2].half_width)
    assert 0.8 * 0.05 < float(np.mean(widths)) <= 1.05 * 0.05


def test_plans_refuse_data_without_spread() -> None:
    with pytest.raises(MetricsError, match="no spread"):
        stats.plan_pass_at_1(np.full(5, 3), np.full(5, 3), 0.05)
    with pytest.raises(MetricsError, match="every case has pass\\^3 = 0"):
        stats.plan_pass_hat(np.full(5, 3), np.array([0, 1, 2, 1, 0]), 3, 0.05)
    with pytest.raises(MetricsError, match=r"half-width is 0\.7"):
        stats.plan_pass_at_1(np.full(5, 3), np.array([0, 1, 2, 1, 0]), 0.7)


# --------------------------------------------------------------------------- where the numbers show


def _write(tmp_path: Path, rows: list[tuple[str, int, str]]) -> str:
    path = tmp_path / "v.jsonl"
    path.write_text(
        "".join(json.dumps({"case": c, "run": r, "status": s}) + "\n" for c, r, s in rows),
        encoding="utf-8",
    )
    return str(path)


def test_metrics_json_carries_intervals_and_forecasts_beside_the_old_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = run_cli(capsys, "metrics", str(EXAMPLES / "verdicts" / "coupon.jsonl"), "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    d = data["dataset"]
    for key in ("pass_at_1", "pass_at_k", "pass_hat_k", "k", "complete", "cases", "runs_counted"):
        assert key in d
    method = "Wilson score (continuity-corrected) at effective n = 2, t(1)"
    assert d["intervals"]["pass_at_1"]["method"] == method
    assert d["intervals"]["pass_hat_k"]["label"] == "pass^3"
    assert d["intervals"]["pass_hat_k"]["high"] == pytest.approx(1 - 0.025 ** (1 / 2))
    assert d["forecast"]["m"] == 10 and d["forecast"]["prior"].startswith("Jeffreys")
    coupon = next(c for c in data["cases"] if c["case"] == "ac-conflict-001")
    assert coupon["interval"]["high"] == pytest.approx(0.5614970, abs=1e-6)
    assert coupon["interval"]["note"] == "all 3 failed: pass rate below 63.2% (95%, one-sided)"
    assert coupon["forecast"]["all_pass_probability"] < 0.002
    assert "plans" not in data


def test_metrics_terminal_shows_intervals_forecast_and_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        (f"c{i}", r, "passed" if (i + r) % 3 else "failed") for i in range(12) for r in (1, 2, 3)
    ]
    rows += [("solid", r, "passed") for r in (1, 2, 3)]
    r = run_cli(capsys, "metrics", _write(tmp_path, rows), "--forecast", "5", "--plan", "0.1")
    assert r.code == 0, r.err
    assert "How sure? 95% intervals over 13 cases" in r.out
    assert "P(next 5" in r.out and "E[p^5]" in r.out
    assert "fail < 63.2%" in r.out
    assert "runs per case on these 13 cases" in r.out or "no number of runs" in r.out
    r = run_cli(capsys, "metrics", _write(tmp_path, rows), "--json", "--plan", "0.1", "-B", "500")
    data = json.loads(r.out)
    assert [p["label"] for p in data["plans"]] == ["pass@1", "pass^3"]
    assert data["dataset"]["intervals"]["resamples"] == 500


def test_metrics_hands_resamples_level_and_seed_to_the_statistics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The three options reach `stats.uncertainty` together (`cli.metrics.resampling`)."""
    rows = [(f"c{i}", r, "passed" if r <= i % 4 else "failed") for i in range(6) for r in (1, 2, 3)]
    args = ("--json", "-B", "300", "--confidence", "0.9", "--seed", "7")
    data = json.loads(run_cli(capsys, "metrics", _write(tmp_path, rows), *args).out)
    intervals = data["dataset"]["intervals"]
    assert (intervals["resamples"], intervals["seed"]) == (300, 7)
    assert data["dataset"]["confidence"] == 0.9


def test_metrics_with_one_case_says_why_there_is_no_dataset_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_cli(capsys, "metrics", _write(tmp_path, [("a", 1, "passed")]), "--json")
    data = json.loads(r.out)
    assert data["dataset"]["intervals"] is None
    assert "needs 2 or more cases" in data["dataset"]["intervals_note"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--forecast", "0"], "--forecast is 0; forecast at least 1 run"),
        (["-B", "99"], "--resamples is 99; use at least 100"),
        (["--confidence", "1.5"], "--confidence is 1.5"),
        (["--plan", "0.7"], "--plan is 0.7; give the half-width as a fraction"),
        (["--prior", "flat"], "--prior is 'flat'; use one of jeffreys, uniform, fitted"),
    ],
    ids=["m-below-1", "B-below-100", "confidence", "plan", "prior"],
)
def test_metrics_bad_options_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    r = run_cli(capsys, "metrics", _write(tmp_path, [("a", 1, "passed")]), *args)
    assert r.code == 2
    assert r.err.count("\n") == 1 and r.err.startswith("error: ") and message in r.err


def test_report_forecast_below_1_is_refused_before_the_store_is_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report --forecast 0` gets metrics' message (one check serves both), and no store
    is read or made for it."""
    db = tmp_path / "none.db"
    r = run_cli(capsys, "report", "latest", "--forecast", "0", "--db", str(db))
    assert r.code == 2
    assert r.err == "error: --forecast is 0; forecast at least 1 run (default 10)\n"
    assert not db.exists()


@pytest.mark.parametrize("command", ["report", "metrics"])
def test_a_forecast_past_the_longest_is_refused_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """`--forecast 2147483648` hung for hours in the share forecast (or, bounded only
    there, left `report --json` half written); now one line, nothing read or made."""
    db = tmp_path / "none.db"
    where = ["latest", "--db", str(db)] if command == "report" else [str(tmp_path / "no.jsonl")]
    r = run_cli(capsys, command, *where, "--json", "--forecast", str(2**31))
    assert r.code == 2 and r.out == ""
    assert r.err == "error: --forecast is 2147483648; forecast at most 1,000,000 runs\n"
    assert not db.exists()


def test_public_names_exist() -> None:
    assert all(hasattr(stats, name) for name in stats.__all__)


# --------------------------------------------------------------------------- speed paths


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.25])),
        min_size=0,
        max_size=60,
    ),
    st.integers(1, 3),
)
def test_unique_rows_is_numpys_unique_over_rows(pairs: list[tuple[int, float]], width: int) -> None:
    """Guards the lexsort `_unique_rows` the bootstrap, the forecast and the share use in
    place of `np.unique(axis=0)`: same records in the same order, same inverse and counts
    (so the same multinomial draws and the same intervals)."""
    rows = np.array([[float(a), b, float(a) * b][:width] for a, b in pairs], dtype=np.float64)
    rows = rows.reshape(len(pairs), width)
    records, inverse, counts = stats._unique_rows(rows)
    want, want_inverse, want_counts = np.unique(
        rows, axis=0, return_inverse=True, return_counts=True
    )
    assert records.tolist() == want.tolist()
    assert inverse.tolist() == want_inverse.ravel().tolist()
    assert counts.tolist() == want_counts.tolist()
    assert (records[inverse] == rows).all()
