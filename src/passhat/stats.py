"""How sure are we? Intervals, forecasts, planning and paired comparison.

The three point figures (`passhat.metrics`) say what was seen; this module says
how far to trust them, what to expect of the next runs, and how many more runs
would settle a question. Everything here is pure and vectorised with numpy: no
files, no store, no printing, and no Python loop per resample or per case.

Two sources of variation stand behind every dataset figure (Miller, "Adding
Error Bars to Evals", 2024): *between cases* (some cases are easy, some hard)
and *within a case* (the same case passes on one run and fails on the next).
The runs of one case are therefore a cluster, never independent draws, and the
intervals here respect that:

- per case: the Wilson interval of the pass rate, and for n of n passed (or
  failed) the exact one-sided bound, which the "rule of three" approximates
  (failure rate below 3/n at 95 %);
- per dataset: a cluster-robust interval for pass@1, and cluster-bootstrap
  intervals (resample cases, keep each case's runs together) for pass@1,
  pass@j and pass^j. They describe a new draw of cases like these, each run
  the same number of times;
- forecast: a Beta posterior per case (Jeffreys prior by default) gives the
  probability that the next m runs all pass, E[p^m], with a credible interval;
- planning: from the between- and within-case variance, the runs per case and
  cases that bring an interval under a target half-width;
- comparison: the same cases under configurations A and B, paired; a paired
  cluster-bootstrap interval and a sign-flip permutation p-value per metric,
  the minimum detectable difference, and a verdict in words.

The Accounting-level functions (`case_intervals`, `dataset_intervals`,
`forecast`, `plan`, `compare`, `uncertainty`) wrap array-level ones that take
counted runs and passes per case, which is what simulations and tests call.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from passhat._gc import without_gc
from passhat._lazy import lazy_import
from passhat.accounting import Accounting, ErrorLedger
from passhat.errors import InputError, MetricsError, NoRunsError
from passhat.metrics import CASE_RATE_LABEL, NO_RUNS, RATE_LABEL, label_at, label_hat
from passhat.plain import plural

__all__ = [
    "AT_K_METHOD",
    "CASE_ALPHA",
    "CASE_CORRECTION",
    "CASE_RATE_METHOD",
    "CORRECTIONS",
    "DEFAULT_RESAMPLES",
    "DISAGREE_METHOD",
    "FLIP_METHOD",
    "FLOOR_METHOD",
    "JEFFREYS",
    "METRICS",
    "MIN_RESAMPLES",
    "MIN_SHARE_CASES",
    "UNIFORM",
    "Adjust",
    "CaseDifference",
    "CaseForecast",
    "CaseInterval",
    "Comparison",
    "DatasetIntervals",
    "Difference",
    "Forecast",
    "Interval",
    "Metric",
    "Plan",
    "Prior",
    "ShareForecast",
    "Uncertainty",
    "Verdict",
    "all_or_none_bound",
    "at_k_bounds",
    "benjamini_hochberg",
    "beta_moment",
    "beta_quantile",
    "betainc",
    "case_intervals",
    "case_mean_intervals",
    "case_rate_bootstrap",
    "case_rate_interval",
    "case_tests",
    "check_suites",
    "cluster_bootstrap",
    "cluster_interval",
    "compare",
    "compare_counts",
    "dataset_intervals",
    "dataset_intervals_counts",
    "decide",
    "fisher_exact",
    "fitted_prior",
    "forecast",
    "forecast_counts",
    "holm",
    "paired_differences",
    "pass_at_array",
    "pass_hat_array",
    "plan",
    "plan_pass_at_1",
    "plan_pass_hat",
    "score_interval",
    "share_forecast",
    "uncertainty",
    "wilson",
]

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

    Floats = NDArray[np.float64]
    Ints = NDArray[np.int64]
else:
    np = lazy_import("numpy")  # imported when a statistic is first computed

JEFFREYS: tuple[float, float] = (0.5, 0.5)
"""Beta(1/2, 1/2): the default prior of the forecast; weak, and invariant to reparametrisation."""
UNIFORM: tuple[float, float] = (1.0, 1.0)
"""Beta(1, 1): every success probability equally likely (Laplace)."""
DEFAULT_RESAMPLES = 2000
MIN_RESAMPLES = 100
_CHUNK = 1 << 18
"""Cells (resamples x cases) per block: small enough to stay in cache, bounded memory."""
_FEW_RECORDS = 4
"""Resample distinct case records, not cases, when there are this many times fewer of them."""
_FEW_VALUES = 8
"""Up to this many values, lgamma and the continued fraction run on Python floats
(`_lgamma`, `_beta_cf_floats`): the forecast inverts a dozen posteriors of one or two values
each, and numpy's cost per call on such tiny arrays made that a fifth of a report."""


# --------------------------------------------------------------------------- checks


def _check_confidence(confidence: float) -> float:
    if not 0.5 <= confidence < 1:
        raise MetricsError(
            f"confidence is {confidence}; give a level between 0.5 and 1, e.g. 0.95 for 95 %"
        )
    return 1.0 - confidence


def _check_resamples(resamples: int) -> None:
    if resamples < MIN_RESAMPLES:
        raise MetricsError(
            f"resamples is {resamples}; use at least {MIN_RESAMPLES} "
            f"(default {DEFAULT_RESAMPLES}) so the interval ends are not noise"
        )


def _check_m(m: int) -> None:
    if m < 1:
        raise MetricsError(f"the forecast horizon m is {m}; forecast at least 1 run")


def _check_prior(prior: tuple[float, float]) -> None:
    if not (prior[0] > 0 and prior[1] > 0):
        raise MetricsError(f"a Beta prior needs two positive parameters, got {prior}")


def _need_two_cases(cases: int) -> None:
    """A dataset interval is between cases: it needs two of them."""
    if cases < 2:
        raise MetricsError(
            f"a dataset interval needs at least 2 cases with counted runs; have {cases}"
        )


def _counts(runs: ArrayLike, passes: ArrayLike) -> tuple[Ints, Ints]:
    n = np.asarray(runs, dtype=np.int64).ravel()
    c = np.asarray(passes, dtype=np.int64).ravel()
    if n.shape != c.shape:
        raise MetricsError(f"runs and passes differ in length ({n.size} and {c.size})")
    if n.size == 0 or np.any(n < 1):
        raise NoRunsError(f"every case needs at least one counted run: {NO_RUNS}")
    if np.any(c < 0) or np.any(c > n):
        raise MetricsError("passes must lie between 0 and the counted runs of each case")
    return n, c


def _unique_rows(
    rows: NDArray[Any],
) -> tuple[NDArray[Any], NDArray[np.intp], NDArray[np.intp]]:
    """The distinct rows in sorted order, the index of each row's record, and how many
    rows each record has: `np.unique(rows, axis=0, return_inverse=True,
    return_counts=True)` (same values, same order), about ten times faster on 100,000
    rows, since it sorts with `lexsort` instead of comparing rows as structured records."""
    if rows.shape[0] == 0:
        return rows, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    order = np.lexsort(rows.T[::-1])  # the first column is the primary key
    ordered = rows[order]
    starts = np.empty(ordered.shape[0], dtype=bool)
    starts[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=starts[1:])
    inverse = np.empty(rows.shape[0], dtype=np.intp)
    inverse[order] = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), ordered.shape[0]))
    return ordered[starts], inverse, counts


# --------------------------------------------------------------------------- distributions


def _z(q: float) -> float:
    return NormalDist().inv_cdf(q)


def _lgamma(x: Floats) -> Floats:
    # Per distinct value: a suite's cases share few (runs, passes) pairs, so 100,000
    # cases cost a few dozen lgamma calls, not 100,000 (a few values: each, unsorted).
    if x.size <= _FEW_VALUES:
        return np.asarray([math.lgamma(v) for v in x.ravel().tolist()]).reshape(x.shape)
    values, inverse = np.unique(x.ravel(), return_inverse=True)
    flat = np.asarray([math.lgamma(v) for v in values.tolist()], dtype=np.float64)
    return flat[inverse].reshape(x.shape)


def _lbeta(a: Floats, b: Floats) -> Floats:
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def _beta_cf(a: Floats, b: Floats, x: Floats) -> Floats:
    """Continued fraction of the incomplete beta function (modified Lentz), vectorised."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, 20_001):
        m2 = 2.0 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            step = d * c
            h = h * step
        if np.all(np.abs(step - 1.0) < eps):
            break
    return h


def _beta_cf_floats(a: list[float], b: list[float], x: list[float]) -> list[float]:
    """`_beta_cf` on Python floats: the same operations in the same order, the same
    stopping rule over all the values (so the very same bits), at a tenth of the cost
    for a few values. IEEE arithmetic rounds each + - * / alike in numpy and Python."""
    tiny, eps = 1e-300, 1e-15
    qab = [ai + bi for ai, bi in zip(a, b, strict=True)]
    qap = [ai + 1.0 for ai in a]
    qam = [ai - 1.0 for ai in a]
    c = [1.0] * len(x)
    d = [1.0 - s * xi / p for s, xi, p in zip(qab, x, qap, strict=True)]
    d = [1.0 / (tiny if abs(di) < tiny else di) for di in d]
    h = d.copy()
    values = range(len(x))
    for m in range(1, 20_001):
        m2 = 2.0 * m
        done = True
        for i in values:
            ai, xi, di, ci = a[i], x[i], d[i], c[i]
            odd = m * (b[i] - m) * xi / ((qam[i] + m2) * (ai + m2))
            even = -(ai + m) * (qab[i] + m) * xi / ((ai + m2) * (qap[i] + m2))
            di = 1.0 + odd * di
            di = 1.0 / (tiny if -tiny < di < tiny else di)
            ci = 1.0 + odd / ci
            ci = tiny if -tiny < ci < tiny else ci
            hi = h[i] * (di * ci)
            di = 1.0 + even * di
            di = 1.0 / (tiny if -tiny < di < tiny else di)
            ci = 1.0 + even / ci
            ci = tiny if -tiny < ci < tiny else ci
            step = di * ci
            d[i], c[i], h[i] = di, ci, hi * step
            if done and not -eps < step - 1.0 < eps:
                done = False
        if done:
            break
    return h


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Floats:
    """The regularised incomplete beta function I_x(a, b): the Beta(a, b) CDF at x."""
    a_, b_, x_ = np.broadcast_arrays(
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
        np.asarray(x, dtype=np.float64),
    )
    inside = np.clip(x_, 1e-300, 1.0 - 1e-16)
    # The fraction converges fast below the mean; above it, use I_x(a, b) = 1 - I_{1-x}(b, a).
    swap = inside > (a_ + 1.0) / (a_ + b_ + 2.0)
    p = np.where(swap, b_, a_)
    q = np.where(swap, a_, b_)
    y = np.where(swap, 1.0 - inside, inside)
    front = np.exp(p * np.log(y) + q * np.log1p(-y) - _lbeta(p, q)) / p
    if y.size <= _FEW_VALUES:
        fraction = _beta_cf_floats(p.ravel().tolist(), q.ravel().tolist(), y.ravel().tolist())
        part = front * np.asarray(fraction, dtype=np.float64).reshape(y.shape)
    else:
        part = front * _beta_cf(p, q, y)
    value = np.where(swap, 1.0 - part, part)
    value = np.where(x_ <= 0.0, 0.0, np.where(x_ >= 1.0, 1.0, value))
    return np.asarray(np.clip(value, 0.0, 1.0), dtype=np.float64)


def beta_quantile(a: ArrayLike, b: ArrayLike, q: ArrayLike) -> Floats:
    """The q-quantile of Beta(a, b): Newton steps on `betainc`, kept inside a shrinking bracket.

    A Newton step that would leave the bracket is replaced by bisection, so the
    iteration cannot diverge in the tails; it stops at about 1e-14.
    """
    a_, b_, q_ = np.broadcast_arrays(
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
        np.asarray(q, dtype=np.float64),
    )
    lo = np.zeros(a_.shape)
    hi = np.ones(a_.shape)
    x = np.clip(a_ / (a_ + b_), 1e-6, 1 - 1e-6)
    lbeta = _lbeta(a_, b_)
    for _ in range(200):
        f = betainc(a_, b_, x) - q_
        below = f < 0
        lo = np.where(below, x, lo)
        hi = np.where(below, hi, x)
        # x may reach 0 or 1 (log of 0: an infinite density): the step bisects instead
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            density = np.exp((a_ - 1.0) * np.log(x) + (b_ - 1.0) * np.log1p(-x) - lbeta)
            newton = x - f / density
        inside = np.isfinite(newton) & (newton > lo) & (newton < hi)
        step = np.where(inside, newton, 0.5 * (lo + hi))
        done = np.abs(step - x) <= 1e-14 * np.maximum(x, 1e-300)
        x = step
        if np.all(done | (hi - lo <= 1e-15 * np.maximum(hi, 1e-300))):
            break
    x = np.where(q_ <= 0.0, 0.0, np.where(q_ >= 1.0, 1.0, x))
    return np.asarray(x, dtype=np.float64)


def beta_moment(a: ArrayLike, b: ArrayLike, m: ArrayLike) -> Floats:
    """E[p^m] for p ~ Beta(a, b): B(a + m, b) / B(a, b) = prod_{i<m} (a + i) / (a + b + i)."""
    a_, b_, m_ = np.broadcast_arrays(
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
        np.asarray(m, dtype=np.float64),
    )
    log = _lgamma(a_ + m_) - _lgamma(a_) + _lgamma(a_ + b_) - _lgamma(a_ + b_ + m_)
    return np.asarray(np.exp(log), dtype=np.float64)


@functools.lru_cache(maxsize=4096)
def _t_quantile(df: int, alpha: float) -> float:
    """Two-sided t quantile: P(|T_df| > t) = alpha, from the Beta(df/2, 1/2) identity."""
    x = float(beta_quantile(df / 2.0, 0.5, alpha))
    return math.sqrt(df * (1.0 - x) / x)


# --------------------------------------------------------------------------- estimators


def pass_hat_array(runs: ArrayLike, passes: ArrayLike, j: int) -> Floats:
    """Unbiased pass^j per case, C(c, j) / C(n, j), for arrays of n >= j and c."""
    n = np.asarray(runs, dtype=np.float64)
    c = np.asarray(passes, dtype=np.float64)
    out = np.ones(np.broadcast_shapes(n.shape, c.shape))
    for t in range(j):
        out *= np.clip(c - t, 0.0, None) / (n - t)
    return out


def pass_at_array(runs: ArrayLike, passes: ArrayLike, j: int) -> Floats:
    """Unbiased pass@j per case, 1 - C(n - c, j) / C(n, j), for arrays of n >= j and c."""
    n = np.asarray(runs, dtype=np.float64)
    return 1.0 - pass_hat_array(n, n - np.asarray(passes, dtype=np.float64), j)


# --------------------------------------------------------------------------- intervals


@dataclass(frozen=True)
class Interval:
    """A figure with the interval that says how far to trust it."""

    label: str
    """What is estimated, labelled with what was counted: `pass@1`, `pass@3`, `pass^3`."""
    estimate: float
    """The point figure."""
    low: float
    """Lower end."""
    high: float
    """Upper end."""
    confidence: float
    """Nominal coverage, e.g. 0.95."""
    method: str
    """How the ends were found, in words."""

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def wilson(passes: ArrayLike, runs: ArrayLike, confidence: float = 0.95) -> tuple[Floats, Floats]:
    """Wilson score interval of passes / runs, per case (arrays in, arrays out)."""
    alpha = _check_confidence(confidence)
    c = np.asarray(passes, dtype=np.float64)
    n = np.asarray(runs, dtype=np.float64)
    z = _z(1.0 - alpha / 2.0)
    z2 = z * z
    centre = (c + z2 / 2.0) / (n + z2)
    half = z / (n + z2) * np.sqrt(c * (n - c) / n + z2 / 4.0)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def all_or_none_bound(runs: ArrayLike, confidence: float = 0.95) -> Floats:
    """With n of n passed, the exact one-sided upper bound on the failure rate: 1 - (1-conf)^(1/n).

    The same bounds the pass rate when n of n failed. At 95 % it is below 3/n for
    every n, and close to it for large n: the "rule of three".
    """
    alpha = _check_confidence(confidence)
    n = np.asarray(runs, dtype=np.float64)
    return np.asarray(1.0 - alpha ** (1.0 / n), dtype=np.float64)


@dataclass(frozen=True)
class CaseInterval:
    """One case's pass rate with its Wilson interval."""

    case: str
    runs: int
    """Counted runs."""
    passes: int
    rate: float
    low: float
    high: float
    confidence: float
    bound: float | None
    """All passed: the largest failure rate consistent with that (one-sided, exact);
    all failed: the largest pass rate. None otherwise."""

    @property
    def note(self) -> str | None:
        """What an all-pass or all-fail record bounds, in words."""
        if self.bound is None:
            return None
        what = "failure" if self.passes == self.runs else "pass"
        verb = "passed" if self.passes == self.runs else "failed"
        return (
            f"all {self.runs} {verb}: {what} rate below {self.bound:.1%} "
            f"({self.confidence:.0%}, one-sided)"
        )


def case_intervals(
    accounting: Accounting, confidence: float = 0.95, only: Collection[str] | None = None
) -> tuple[CaseInterval, ...]:
    """Wilson intervals for every case with a counted run (others have no rate to bound);
    `only` restricts them to those case ids."""
    counted = [c for c in accounting.cases if c.counted and (only is None or c.case in only)]
    if not counted:
        return ()
    n = np.array([c.counted for c in counted], dtype=np.int64)
    p = np.array([c.passes for c in counted], dtype=np.int64)
    low, high = wilson(p, n, confidence)
    bound = all_or_none_bound(n, confidence)
    # .tolist() once: indexing a numpy array per case costs more than the rest
    return tuple(
        CaseInterval(
            case=c.case,
            runs=c.counted,
            passes=c.passes,
            rate=c.passes / c.counted,
            low=lo,
            high=hi,
            confidence=confidence,
            bound=b if c.passes in (0, c.counted) else None,
        )
        for c, lo, hi, b in zip(counted, low.tolist(), high.tolist(), bound.tolist(), strict=True)
    )


def _degenerate(label: str, value: float, cases: int, confidence: float) -> Interval | None:
    """Every case at 1 (or 0): the exact bound over cases, since a spread of zero proves nothing."""
    if value not in (0.0, 1.0):
        return None
    edge = ((1.0 - confidence) / 2.0) ** (1.0 / cases)
    low, high = (edge, 1.0) if value == 1.0 else (0.0, 1.0 - edge)
    method = f"exact bound, every case at {value:.0f}"
    return Interval(label, value, low, high, confidence, method)


def cluster_interval(runs: ArrayLike, passes: ArrayLike, confidence: float = 0.95) -> Interval:
    """pass@1 with a cluster-robust standard error: each case's runs are one cluster.

    pass@1 = sum(passes) / sum(runs). Its linearised variance is
    G / (G - 1) * sum_i (c_i - p n_i)^2 / N^2 over the G cases; the interval uses
    the t quantile with G - 1 degrees of freedom, which matters for few cases.
    """
    alpha = _check_confidence(confidence)
    n, c = _counts(runs, passes)
    cases = n.size
    _need_two_cases(cases)
    total = float(n.sum())
    p = float(c.sum()) / total
    degenerate = _degenerate("pass@1", p, cases, confidence)
    if degenerate is not None:
        return degenerate
    resid = c - p * n
    se = math.sqrt(cases / (cases - 1) * float(resid @ resid)) / total
    t = _t_quantile(cases - 1, alpha)
    if se * se < p * (1.0 - p) / total:
        return _binomial_floor(p, int(total), cases, confidence)
    method = f"cluster-robust SE, t({cases - 1})"
    return Interval(RATE_LABEL, p, max(0.0, p - t * se), min(1.0, p + t * se), confidence, method)


def _binomial_floor(p: float, runs: int, cases: int, confidence: float) -> Interval:
    """The pass rate's interval when the cases agree more than independent runs would.

    A cluster SE below the binomial one (zero when every case has the same rate)
    proves nothing about a new draw of cases: fall back to the Wilson interval on
    all runs as if independent, with the t quantile of the cases.
    """
    alpha = 1.0 - confidence
    z = _t_quantile(cases - 1, alpha)
    z2 = z * z
    centre = (p * runs + z2 / 2.0) / (runs + z2)
    half = z / (runs + z2) * math.sqrt(p * (1.0 - p) * runs + z2 / 4.0)
    method = f"Wilson on all {runs} runs, t({cases - 1}): cluster SE below the binomial floor"
    return Interval(
        RATE_LABEL, p, max(0.0, centre - half), min(1.0, centre + half), confidence, method
    )


def score_interval(
    label: str,
    values: ArrayLike,
    trials: float,
    confidence: float = 0.95,
) -> Interval:
    """A mean over cases of per-case figures in [0, 1] (pass@j, pass^j), with an interval
    that behaves at 0 and 1.

    The cluster variance of the mean, s^2 / G, gives an effective number of Bernoulli
    trials n_eff = mean (1 - mean) / (s^2 / G) (Kish's design effect; Korn and
    Graubard 1998); the interval is the continuity-corrected Wilson score interval
    (Newcombe 1998) at n_eff, with the t(G - 1) quantile for few cases. n_eff is
    capped at `trials`, the disjoint groups of j runs the data holds (sum n_i / j):
    no dataset figure is more precise than that many independent trials. The cap
    is the binomial floor when the cases agree (s = 0), and it keeps a skewed sample
    of few cases from claiming a spread it has not seen. When every figure is 0
    or 1 each case is one Bernoulli trial, and this is the score interval over cases.
    """
    alpha = _check_confidence(confidence)
    v = np.asarray(values, dtype=np.float64).ravel()
    cases = v.size
    _need_two_cases(cases)
    mean = float(v.mean())
    degenerate = _degenerate(label, mean, cases, confidence)
    if degenerate is not None:
        return degenerate
    spread = float(v.var(ddof=1)) / cases
    floor = mean * (1.0 - mean) / trials
    n = mean * (1.0 - mean) / max(spread, floor)
    z = _t_quantile(cases - 1, alpha)
    z2 = z * z
    low = (
        2 * n * mean
        + z2
        - 1
        - z * math.sqrt(max(0.0, z2 - 2 - 1 / n + 4 * mean * (n * (1 - mean) + 1)))
    ) / (2 * (n + z2))
    high = (
        2 * n * mean
        + z2
        + 1
        + z * math.sqrt(max(0.0, z2 + 2 - 1 / n + 4 * mean * (n * (1 - mean) - 1)))
    ) / (2 * (n + z2))
    floored = ", binomial floor" if spread <= floor else ""
    method = (
        f"Wilson score (continuity-corrected) at effective n = {n:.3g}{floored}, t({cases - 1})"
    )
    return Interval(
        label, mean, max(0.0, min(low, mean)), min(1.0, max(high, mean)), confidence, method
    )


def _resample_counts(cases: int, resamples: int, rng: np.random.Generator) -> Iterator[Ints]:
    """Blocks of bootstrap multiplicities: row r says how often each case was drawn."""
    rows = max(1, _CHUNK // cases)
    for start in range(0, resamples, rows):
        r = min(rows, resamples - start)
        idx = rng.integers(0, cases, size=(r, cases), dtype=np.int64)
        idx += np.arange(0, r * cases, cases, dtype=np.int64)[:, None]
        yield np.bincount(idx.ravel(), minlength=r * cases).reshape(r, cases)


def _bootstrap_totals(columns: Floats, resamples: int, seed: int | np.random.Generator) -> Floats:
    """Per resample, the column sums over the resampled cases: shape (resamples, columns).

    Drawing G cases with replacement matters only through how many copies of
    each distinct case record were drawn, and those counts are exactly
    Multinomial(G, share of each record). With k = 10 there are at most 11
    distinct records, so B x 11 draws replace B x G; when records are mostly
    distinct, cases are drawn one by one in blocks.
    """
    rng = np.random.default_rng(seed)
    cases = columns.shape[0]
    records, _, counts = _unique_rows(columns)
    if records.shape[0] * _FEW_RECORDS <= cases:
        draws = rng.multinomial(cases, counts / cases, size=resamples)
        return np.asarray(draws @ records, dtype=np.float64)
    blocks = [w @ columns for w in _resample_counts(cases, resamples, rng)]
    return np.concatenate(blocks, axis=0)


def _expanded_tail(cases: int, confidence: float) -> float:
    """The tail probability that widens a percentile interval for a small number of cases.

    A plain percentile bootstrap of a mean undercovers with few clusters: it acts
    like a z interval with the SE shrunk by sqrt((G-1)/G). Hesterberg's expanded
    percentile interval takes the quantiles at Phi(-sqrt(G/(G-1)) t_{G-1}) instead.
    """
    t = _t_quantile(cases - 1, 1.0 - confidence)
    return NormalDist().cdf(-math.sqrt(cases / (cases - 1)) * t)


def _bootstrap_ends(values: Floats, tail: float) -> tuple[float, float]:
    """The tail and 1 - tail quantiles of B bootstrap values, read at the order statistic
    (B + 1) * tail (Davison and Hinkley 1997, sec. 5.2.2; numpy's "weibull").

    The (B + 1) q-th of B draws from a distribution F lands, on average, at F's q
    quantile; numpy's default (linear, 1 + (B - 1) q) lands at (1 + (B - 1) q) / (B + 1):
    2.97 % instead of 2.5 % per tail at B = 200, a 94 % interval.
    """
    return _weibull_quantile(values, tail), _weibull_quantile(values, 1.0 - tail)


def _weibull_quantile(values: Floats, q: float) -> float:
    """`np.quantile(values, q, method="weibull")` of a 1-d array, the same operations
    in the same order (so the very same bits; tests/test_stats_floats.py compares them
    on generated data): the (B + 1) q-th order statistic, linearly interpolated.
    numpy's general machinery for it costs more than the bootstrap, and loads
    `numpy.ma` (8 ms of a report's start) to ask whether the array is masked."""
    count = values.size
    if count == 0 or np.isnan(values).any() or np.signbit(values).any():
        # NaN, or a sign (where -0.0 and 0.0 tie, and numpy's partial sort places them
        # its own way): numpy's own path. A bootstrap's rates and shares have neither.
        return float(np.quantile(values, q, method="weibull"))
    ordered: list[float] = np.sort(values).tolist()
    virtual = count * q + (0 + q * 1) - 1  # numpy's _compute_virtual_index(n, q, 0, 0)
    if virtual >= count - 1:  # numpy clips both indices to the ends
        below = above = ordered[-1]
        previous = count - 1
    elif virtual < 0:
        below = above = ordered[0]
        previous = 0
    else:
        previous = math.floor(virtual)
        below, above = ordered[previous], ordered[previous + 1]
    gamma = virtual - previous
    step = above - below  # numpy's _lerp: from the nearer end
    return above - step * (1 - gamma) if gamma >= 0.5 else below + step * gamma


def _percentile(
    label: str, estimate: float, values: Floats, cases: int, confidence: float, method: str
) -> Interval:
    tail = _expanded_tail(cases, confidence)
    low, high = _bootstrap_ends(values, tail)
    return Interval(label, estimate, float(low), float(high), confidence, method)


def cluster_bootstrap(
    runs: ArrayLike,
    passes: ArrayLike,
    j: int | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[Interval, Interval, Interval]:
    """Cluster-bootstrap percentile intervals for pass@1, pass@j and pass^j.

    Cases are resampled with replacement and keep all their runs; `j` defaults
    to the smallest count, the largest j every case reaches.
    """
    _check_confidence(confidence)
    _check_resamples(resamples)
    n, c = _counts(runs, passes)
    cases = n.size
    _need_two_cases(cases)
    j = _common_j(n, j)
    at = pass_at_array(n, c, j)
    hat = pass_hat_array(n, c, j)
    columns = np.column_stack([c, n, at, hat]).astype(np.float64)
    totals = _bootstrap_totals(columns, resamples, seed)
    method = f"cluster bootstrap, B = {resamples}"
    rate = float(c.sum() / n.sum())
    figures = [
        (RATE_LABEL, rate, totals[:, 0] / totals[:, 1]),
        (label_at(j), float(at.mean()), totals[:, 2] / cases),
        (label_hat(j), float(hat.mean()), totals[:, 3] / cases),
    ]
    out = []
    for label, estimate, values in figures:
        flat = _degenerate(label, estimate, cases, confidence) if np.ptp(values) == 0 else None
        if flat is None and label == RATE_LABEL and np.ptp(values) == 0:
            flat = _binomial_floor(rate, int(n.sum()), cases, confidence)
        out.append(flat or _percentile(label, estimate, values, cases, confidence, method))
    return out[0], out[1], out[2]


def _common_j(n: Ints, j: int | None) -> int:
    smallest = int(n.min())
    if j is None:
        return smallest
    if j < 1:
        raise MetricsError(f"j must be at least 1, got {j}")
    if j > smallest:
        raise MetricsError(
            f"pass@{j} / pass^{j} need {j} counted runs in every case, "
            f"but one case has only {smallest}"
        )
    return j


@dataclass(frozen=True)
class DatasetIntervals:
    """Intervals beside the dataset figures."""

    cases: int
    """Cases with at least one counted run: the clusters."""
    runs: int
    """Counted runs over them."""
    j: int
    """The j of pass@j / pass^j: one every included case reaches."""
    pass_at_1: Interval
    """The headline pass rate, which estimates pass@1. Every case with the same counted
    runs: the pass rate over runs, cluster-robust SE interval (t with cases - 1 degrees
    of freedom), or Wilson on all runs when the cluster SE is below the binomial floor.
    Cases with different counted runs: the mean of per-case rates (`case_rate_interval`),
    each case weighing once."""
    pass_at_1_bootstrap: Interval
    """Cluster-bootstrap interval of the same figure."""
    pass_at_j: Interval
    """Score interval at the effective number of trials (`score_interval`)."""
    pass_hat_j: Interval
    resamples: int
    seed: int
    at_requested: tuple[Interval, Interval] | None = None
    """pass@k and pass^k at the requested k: the figures over the cases that reached it,
    with the interval of what full runs of every case could have shown (`at_k_bounds`);
    None when every case reached k, or fewer than 2 did."""
    requested_cases: int = 0
    """Cases in the `at_requested` figures."""
    requested_left_out: int = 0
    """Cases with a counted run left out of `at_requested` (fewer than k counted runs)."""
    over_runs: Interval | None = None
    """The pass rate over runs (all passes / all counted runs) with its cluster-robust
    interval, named beside the headline when cases counted different runs (None when
    they all counted the same: it is then the headline itself)."""

    @property
    def weighs_cases(self) -> bool:
        """The headline pass rate is the mean of per-case rates (cases counted different runs)."""
        return self.over_runs is not None


def _counted_arrays(accounting: Accounting) -> tuple[Ints, Ints]:
    """Counted runs and passes of every case with a counted run (read in C: a report
    asks three times, of 100,000 cases)."""
    cases = accounting.cases
    n = np.fromiter(map(_COUNTED, cases), dtype=np.int64, count=len(cases))
    p = np.fromiter(map(_PASSES, cases), dtype=np.int64, count=len(cases))
    counted = n > 0
    if not counted.any():
        raise NoRunsError(NO_RUNS)
    if counted.all():
        return n, p
    return n[counted], p[counted]


_COUNTED = attrgetter("counted")
_PASSES = attrgetter("passes")


def dataset_intervals(
    accounting: Accounting,
    j: int | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> DatasetIntervals:
    """Intervals for the dataset figures over the cases with a counted run."""
    n, c = _counted_arrays(accounting)
    return dataset_intervals_counts(
        n,
        c,
        accounting.k_least,  # the k every case was asked for (see Accounting.at_requested)
        j,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        unseen=len(accounting.cases) - int(n.size),
    )


def dataset_intervals_counts(
    runs: ArrayLike,
    passes: ArrayLike,
    k: int,
    j: int | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
    unseen: int = 0,
) -> DatasetIntervals:
    """`dataset_intervals` on arrays: counted runs and passes of every case with a counted
    run, and the requested k (what simulations call; the report goes through the same).
    `unseen` cases have no counted run: they enter only the bounds at the requested k."""
    n, c = _counts(runs, passes)
    over_runs = None
    if int(n.min()) == int(n.max()):
        at1 = cluster_interval(n, c, confidence)
        boot1 = _bootstrap_rate(n, c, resamples=resamples, confidence=confidence, seed=seed)
    else:
        at1 = case_rate_interval(n, c, confidence)
        boot1 = case_rate_bootstrap(n, c, resamples=resamples, confidence=confidence, seed=seed)
        over_runs = cluster_interval(n, c, confidence)
    j = _common_j(n, j)
    at_j, hat_j = case_mean_intervals(n, c, j, confidence)
    reached = n >= k
    requested = None
    if j < k and int(reached.sum()) >= 2:
        figures = case_mean_intervals(n[reached], c[reached], k, confidence)
        requested = at_k_bounds(figures, n, c, k, unseen, confidence)
    return DatasetIntervals(
        cases=int(n.size),
        runs=int(n.sum()),
        j=j,
        pass_at_1=at1,
        pass_at_1_bootstrap=boot1,
        pass_at_j=at_j,
        pass_hat_j=hat_j,
        resamples=resamples,
        seed=seed,
        at_requested=requested,
        requested_cases=int(reached.sum()) if requested else 0,
        requested_left_out=int((~reached).sum()) if requested else 0,
        over_runs=over_runs,
    )


AT_K_METHOD = (
    "bounds of what full runs would have shown (runs not counted as failures, as passes), "
    "each with its score interval"
)


def at_k_bounds(
    figures: tuple[Interval, Interval],
    runs: ArrayLike,
    passes: ArrayLike,
    k: int,
    unseen: int = 0,
    confidence: float = 0.95,
) -> tuple[Interval, Interval]:
    """pass@k and pass^k at the requested k, over every case (Imbens and Manski 2004, in
    its conservative form): the figures over the cases that reached k (`figures`) are
    biased when errors fall on some cases (hard ones error more: pass^5 read 0.206 for a
    truth of 0.107 in the review), so their interval is the range full runs could have
    shown. A case short of k gets its runs not counted as failures for the lower bound
    and as passes for the upper; a case with no counted run (`unseen`) gets 0 and 1.
    The interval runs from the lower bound's lower end to the upper bound's upper end
    (each a `score_interval`), so it holds the whole range, and the truth in it, at least
    `confidence` of the time whatever the errors depend on; it is widened to hold the
    figure over the reached cases when that lies outside the bounds."""
    n, c = _counts(runs, passes)
    short = n < k
    size = k + 0 * n  # every case as if it ran k (cases that ran more keep their runs)
    full = np.maximum(n, size)
    filled = c + np.where(short, k - n, 0)
    lows = (
        np.concatenate([pass_at_array(full, c, k), np.zeros(unseen)]),
        np.concatenate([pass_hat_array(full, c, k), np.zeros(unseen)]),
    )
    highs = (
        np.concatenate([pass_at_array(full, filled, k), np.ones(unseen)]),
        np.concatenate([pass_hat_array(full, filled, k), np.ones(unseen)]),
    )
    trials = float(n.size + unseen)
    out = []
    for figure, low_values, high_values in zip(figures, lows, highs, strict=True):
        low = score_interval(figure.label, low_values, trials, confidence).low
        high = score_interval(figure.label, high_values, trials, confidence).high
        estimate = figure.estimate
        out.append(
            Interval(
                figure.label,
                estimate,
                min(low, estimate),
                max(high, estimate),
                confidence,
                AT_K_METHOD,
            )
        )
    return out[0], out[1]


def _case_rate_trials(n: Ints) -> float:
    """The independent runs the mean of per-case rates is worth when every case has the
    same p: G^2 / sum(1 / n_i), the variance p(1 - p) sum(1 / n_i) / G^2 turned into
    trials (G times the harmonic mean of the counted runs; sum(n) when they are equal)."""
    return float(n.size) ** 2 / float((1.0 / n).sum())


def case_rate_interval(runs: ArrayLike, passes: ArrayLike, confidence: float = 0.95) -> Interval:
    """The pass rate as the mean of per-case rates, each case weighing once, with the
    score interval at the effective number of trials (`score_interval`): the cluster
    variance s^2 / G of the rates, floored at the binomial variance of those rates had
    every case the same p (n_eff capped at G^2 / sum(1 / n_i)), t(G - 1).

    The headline whenever cases counted different runs: the pass rate over runs then
    weighs a case by its counted runs, and errors that fall on hard cases move weight
    to easy ones (20 % errors with P(error) proportional to 1 - p biased it by 2-4
    points in the review, so its interval missed the truth at many cases)."""
    n, c = _counts(runs, passes)
    return score_interval(CASE_RATE_LABEL, c / n, _case_rate_trials(n), confidence)


def case_rate_bootstrap(
    runs: ArrayLike,
    passes: ArrayLike,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """The cluster-bootstrap interval of the mean of per-case rates (cases resampled with
    replacement; expanded percentile), beside `case_rate_interval`."""
    _check_confidence(confidence)
    _check_resamples(resamples)
    n, c = _counts(runs, passes)
    cases = n.size
    _need_two_cases(cases)
    rates = (c / n).astype(np.float64)
    mean = float(rates.mean())
    values = _bootstrap_totals(rates[:, None], resamples, seed)[:, 0] / cases
    if np.ptp(values) == 0:
        flat = _degenerate(CASE_RATE_LABEL, mean, cases, confidence)
        return flat or case_rate_interval(n, c, confidence)
    method = f"cluster bootstrap, B = {resamples}"
    boot = _percentile(CASE_RATE_LABEL, mean, values, cases, confidence, method)
    trials = _case_rate_trials(n)
    return _floored(boot, score_interval(CASE_RATE_LABEL, np.full(cases, mean), trials, confidence))


def _floored(boot: Interval, floor: Interval) -> Interval:
    """A bootstrap interval never narrower than the binomial floor's ends: resampling a few
    cases that agree (5 cases at one p) sees less spread than independent runs would have,
    and covered 87-92 % there. The floor is the interval the analytic method falls back to
    when the cases agree; the method says when it decided an end."""
    low, high = min(boot.low, floor.low), max(boot.high, floor.high)
    if (low, high) == (boot.low, boot.high):
        return boot
    method = f"{boot.method}, widened to the binomial floor"
    return Interval(boot.label, boot.estimate, low, high, boot.confidence, method)


def case_mean_intervals(
    runs: ArrayLike, passes: ArrayLike, j: int, confidence: float = 0.95
) -> tuple[Interval, Interval]:
    """pass@j and pass^j over cases (each with at least j counted runs) with
    `score_interval`s: n_eff capped at the sum over cases of n_i / j."""
    n, c = _counts(runs, passes)
    j = _common_j(n, j)
    trials = float(n.sum()) / j
    return (
        score_interval(label_at(j), pass_at_array(n, c, j), trials, confidence),
        score_interval(label_hat(j), pass_hat_array(n, c, j), trials, confidence),
    )


def _bootstrap_rate(
    runs: Ints, passes: Ints, *, resamples: int, confidence: float, seed: int
) -> Interval:
    """The cluster-bootstrap interval of the pass rate over runs alone."""
    _check_confidence(confidence)
    _check_resamples(resamples)
    cases = runs.size
    _need_two_cases(cases)
    rate = float(passes.sum() / runs.sum())
    totals = _bootstrap_totals(np.column_stack([passes, runs]).astype(np.float64), resamples, seed)
    values = totals[:, 0] / totals[:, 1]
    if np.ptp(values) == 0:
        flat = _degenerate(RATE_LABEL, rate, cases, confidence)
        return flat or _binomial_floor(rate, int(runs.sum()), cases, confidence)
    method = f"cluster bootstrap, B = {resamples}"
    boot = _percentile(RATE_LABEL, rate, values, cases, confidence, method)
    return _floored(boot, _binomial_floor(rate, int(runs.sum()), cases, confidence))


# --------------------------------------------------------------------------- forecast


Prior = tuple[float, float] | Literal["fitted"]
"""A Beta(a0, b0) prior, or "fitted": one Beta fitted to all cases (empirical Bayes)."""


def _prior_name(prior: tuple[float, float]) -> str:
    if prior == JEFFREYS:
        return "Jeffreys Beta(1/2, 1/2)"
    if prior == UNIFORM:
        return "uniform Beta(1, 1)"
    return f"Beta({prior[0]:.3g}, {prior[1]:.3g})"


def fitted_prior(runs: ArrayLike, passes: ArrayLike) -> tuple[float, float]:
    """A Beta prior fitted to all cases by beta-binomial moments (empirical Bayes).

    Each case then borrows strength from the others: with 3 runs a case's
    forecast leans on how the other cases behaved rather than on a flat guess.
    Needs 2+ cases, a case with 2+ runs, and some passes and some failures.
    """
    n, c = _counts(runs, passes)
    if n.size < 2:
        raise MetricsError(
            f"fitting a prior needs at least 2 cases with counted runs; have {n.size}"
        )
    if c.sum() in (0, n.sum()):
        raise MetricsError(
            "every counted run passed (or every one failed): no spread to fit a prior from; "
            "use the Jeffreys prior"
        )
    return _population(n, c)


def _resolve_prior(prior: Prior, n: Ints, c: Ints) -> tuple[tuple[float, float], str]:
    if prior == "fitted":
        fitted = fitted_prior(n, c)
        return fitted, f"fitted {_prior_name(fitted)}"
    _check_prior(prior)
    return prior, _prior_name(prior)


def forecast_counts(
    runs: ArrayLike,
    passes: ArrayLike,
    m: int,
    *,
    prior: tuple[float, float] = JEFFREYS,
    confidence: float = 0.95,
) -> tuple[Floats, Floats, Floats]:
    """Per case: P(the next m runs all pass) = E[p^m], and an equal-tailed credible interval.

    The single-run success probability p gets the posterior Beta(c + a0, n - c + b0)
    from the prior Beta(a0, b0). p^m rises with p, so the interval of p^m is the
    interval of p raised to the m-th power.
    """
    alpha = _check_confidence(confidence)
    _check_m(m)
    _check_prior(prior)
    n, c = _counts(runs, passes)
    a = c + prior[0]
    b = n - c + prior[1]
    expected = beta_moment(a, b, m)
    # Posteriors repeat (k = 10 gives at most 11 of them); invert each one once.
    pairs, inverse, _ = _unique_rows(np.column_stack([a, b]))
    ends = np.array([_beta_ends(a_, b_, alpha) for a_, b_ in pairs.tolist()]).reshape(-1, 2)
    low = ends[inverse, 0] ** m
    high = ends[inverse, 1] ** m
    return expected, low, high


MIN_SHARE_CASES = 10
"""Fewer cases give no dataset forecast interval: the fitted population (and so the
interval) is then too unstable to be calibrated (docs/numbers.md)."""


@dataclass(frozen=True)
class ShareForecast:
    """The expected share of these cases whose next m runs all pass.

    Fitted across cases (hierarchical Beta-Binomial): one Beta(alpha, beta) for the
    population of per-case success probabilities; each case's forecast is its
    posterior E[p^m] under that Beta; the share is their mean. The interval is a
    cluster bootstrap that refits the population in every resample, so the
    uncertainty of the fit is carried into the interval. None where that cannot be
    calibrated (`note` says why).
    """

    label: str
    estimate: float
    low: float | None
    high: float | None
    confidence: float
    method: str
    note: str | None = None
    """Why there is no interval, when there is none."""

    @property
    def basis(self) -> str:
        """The prior the share uses, in words: the Beta fitted across cases, or the
        per-case prior when no population could be fitted. A per-case column beside it
        may use another prior (`--prior`): the share's row names its own."""
        return self.method.split(", cluster bootstrap")[0]


def _moment_products(a: Floats, b: Floats, m: int) -> Floats:
    """E[p^m] under Beta(a, b), elementwise, as prod_{i<m} (a + i) / (a + b + i)."""
    out = np.ones(np.broadcast_shapes(a.shape, b.shape))
    for i in range(m):
        out *= (a + i) / (a + b + i)
    return out


def _fit_sums(sums: Floats, cases: int) -> tuple[Floats, Floats]:
    """Beta-binomial moment fits (as `_population`) for many resamples at once.

    `sums` columns: sum n, sum c, sum n^2, sum c n, sum c^2, sum n (n - 1).
    """
    sn, sc, snn, scn, scc, pairs = sums.T
    mu = sc / sn
    resid = (scc - 2.0 * mu * scn + mu * mu * snn) * cases / (cases - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (resid / (mu * (1.0 - mu)) - sn) / pairs
    rho = np.clip(np.nan_to_num(rho, nan=1e-6, posinf=1.0, neginf=1e-6), 1e-6, 1.0 - 1e-6)
    size = 1.0 / rho - 1.0
    return mu * size, (1.0 - mu) * size


def _fit_case_sums(sums: Floats, cases: int) -> tuple[Floats, Floats]:
    """Beta moment fits with each case weighing once, for many resamples at once: the
    mean is the mean of per-case rates r_i = c_i / n_i, and the spread solves
    E[(r_i - mu)^2] = mu (1 - mu) (1 / n_i + rho (1 - 1 / n_i)) summed over cases.
    Used when cases counted different runs: a fit weighed by runs leans toward the
    cases that counted more, which errors on hard cases make the easy ones (the share
    covered 82 % at 2,000 cases, 20 % informative errors). With equal runs it is
    `_fit_sums` exactly.

    `sums` columns: sum r, sum r^2, sum 1 / n, sum (1 - 1 / n); the weights sum to `cases`.
    """
    sr, srr, inv, pairs = sums.T
    mu = sr / cases
    resid = (srr - cases * mu * mu) * cases / (cases - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (resid / (mu * (1.0 - mu)) - inv) / pairs
    rho = np.clip(np.nan_to_num(rho, nan=1e-6, posinf=1.0, neginf=1e-6), 1e-6, 1.0 - 1e-6)
    size = 1.0 / rho - 1.0
    return mu * size, (1.0 - mu) * size


def _share_note(n: Ints, c: Ints) -> str | None:
    if n.size < MIN_SHARE_CASES:
        return (
            f"no interval: {plural(int(n.size), 'case')}; a calibrated dataset forecast needs "
            f"at least {MIN_SHARE_CASES}"
        )
    if c.sum() in (0, n.sum()):
        return "no interval: every counted run passed (or every one failed), nothing to fit"
    if not np.any(n >= 2):
        return "no interval: no case has 2 counted runs to tell cases apart from runs"
    return None


def _overdispersed(n: Ints, c: Ints, alpha: float) -> bool:
    """The cases differ more than their runs would if every case had the pooled rate: the
    dispersion statistic sum (c - n p)^2 / (n p (1 - p)) above the 1 - alpha quantile of
    chi-square with G - 1 degrees of freedom (Wilson-Hilferty)."""
    p = float(c.sum() / n.sum())
    if p in (0.0, 1.0):
        return False
    stat = float((((c - n * p) ** 2) / (n * p * (1.0 - p))).sum())
    df = n.size - 1
    z = _z(1.0 - alpha)
    quantile = df * (1.0 - 2.0 / (9.0 * df) + z * math.sqrt(2.0 / (9.0 * df))) ** 3
    return stat > quantile


@functools.lru_cache(maxsize=4096)
def _beta_ends(a: float, b: float, alpha: float) -> tuple[float, float]:
    """Equal-tailed ends of Beta(a, b), memoised: the same posteriors come back in every
    report (and every replication of a simulation)."""
    ends = beta_quantile(a, b, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(ends[0]), float(ends[1])


def share_forecast(
    runs: ArrayLike,
    passes: ArrayLike,
    m: int,
    *,
    prior: tuple[float, float] = JEFFREYS,
    confidence: float = 0.95,
    prior_name: str | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> ShareForecast:
    """The expected share of these cases whose next m runs all pass, with an interval.

    One population Beta is fitted to all cases (beta-binomial moments); the share
    is the mean over cases of the posterior E[p_i^m] under it. The interval
    resamples cases (with all their runs), refits the population and recomputes
    the share, B times (percentile, expanded for few cases), and always holds the
    estimate. With fewer than `MIN_SHARE_CASES` cases, no spread, or no case with
    two counted runs, no population can be fitted: the estimate is then the mean
    of the per-case forecasts under `prior`, with no interval.
    """
    alpha = _check_confidence(confidence)
    _check_m(m)
    _check_prior(prior)
    _check_resamples(resamples)
    n, c = _counts(runs, passes)
    label = f"next {m} all pass"
    note = _share_note(n, c)
    if note is not None:
        first = beta_moment(c + prior[0], n - c + prior[1], m)
        method = f"{prior_name or _prior_name(prior)} prior, per case"
        return ShareForecast(label, float(first.mean()), None, None, confidence, method, note)
    cases = n.size
    records, _, counts = _unique_rows(np.column_stack([n, c]))
    rn, rc = (records[:, i].astype(np.float64) for i in (0, 1))
    varied = int(n.min()) != int(n.max())
    if varied:  # each case weighs once (`_fit_case_sums`)
        rate = rc / rn
        columns = np.column_stack([rate, rate * rate, 1.0 / rn, 1.0 - 1.0 / rn])
    else:
        columns = np.column_stack([rn, rc, rn * rn, rc * rn, rc * rc, rn * (rn - 1.0)])
    rng = np.random.default_rng(seed)
    weights = np.vstack([counts[None, :], rng.multinomial(cases, counts / cases, resamples)])
    weights = weights.astype(np.float64)
    fit = _fit_case_sums if varied else _fit_sums
    a, b = fit(weights @ columns, cases)
    predicted = _moment_products(rc[None, :] + a[:, None], rn - rc + b[:, None], m)
    shares = (weights * predicted).sum(axis=1) / cases
    estimate = float(shares[0])
    tail = _expanded_tail(cases, confidence) if cases > 1 else alpha / 2.0
    low, high = _bootstrap_ends(shares[1:], tail)
    method = (
        f"fitted Beta({a[0]:.3g}, {b[0]:.3g}) across cases, "
        f"cluster bootstrap refitting it, B = {resamples}"
    )
    if not _overdispersed(n, c, alpha):
        # the cases may all share one p: the moment fit cannot go below no spread, so its
        # resamples lean high; hold what one p for all would give as well
        one_p = (
            score_interval(
                CASE_RATE_LABEL,
                np.full(cases, float((c / n).mean())),
                _case_rate_trials(n),
                confidence,
            )
            if varied
            else _binomial_floor(float(c.sum() / n.sum()), int(n.sum()), cases, confidence)
        )
        low, high = min(low, one_p.low**m), max(high, one_p.high**m)
        method += ", or one p for all cases (no spread beyond the runs' own)"
    return ShareForecast(
        label, estimate, min(low, estimate), max(high, estimate), confidence, method
    )


@dataclass(frozen=True)
class CaseForecast:
    """One case: how likely the next m runs all pass, given what was counted."""

    case: str
    runs: int
    passes: int
    m: int
    expected: float
    """P(next m runs all pass) = E[p^m] under the posterior."""
    low: float
    high: float
    """Equal-tailed credible interval of p^m."""


@dataclass(frozen=True)
class Forecast:
    """Per-case forecasts and the dataset's expected share passing m in a row."""

    m: int
    prior: tuple[float, float]
    prior_name: str
    confidence: float
    cases: tuple[CaseForecast, ...]
    """Cases with at least one counted run."""
    share: ShareForecast
    """Expected share of those cases whose next m runs all pass (fitted across cases)."""


def forecast(
    accounting: Accounting,
    m: int = 10,
    *,
    prior: Prior = JEFFREYS,
    confidence: float = 0.95,
    only: Collection[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Forecast:
    """Forecast the next m runs of every case with a counted run (per case: of those in
    `only`, when given; the expected share always covers every case)."""
    n, c = _counted_arrays(accounting)
    beta_prior, name = _resolve_prior(prior, n, c)
    counted = [x for x in accounting.cases if x.counted and (only is None or x.case in only)]
    expected = low = high = np.zeros(0)
    if counted:
        expected, low, high = forecast_counts(
            np.array([x.counted for x in counted], dtype=np.int64),
            np.array([x.passes for x in counted], dtype=np.int64),
            m,
            prior=beta_prior,
            confidence=confidence,
        )
    return Forecast(
        m=m,
        prior=beta_prior,
        prior_name=name,
        confidence=confidence,
        cases=tuple(
            CaseForecast(x.case, x.counted, x.passes, m, e, lo, hi)
            for x, e, lo, hi in zip(
                counted, expected.tolist(), low.tolist(), high.tolist(), strict=True
            )
        ),
        share=share_forecast(
            n,
            c,
            m,
            prior=beta_prior,
            confidence=confidence,
            prior_name=name,
            resamples=resamples,
            seed=seed,
        ),
    )


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class Plan:
    """How many runs per case, or cases, bring an interval under a target half-width.

    The variance model: the dataset figure's variance is
    (between + within(n)) / cases, where `between` is the spread of the true
    per-case value across cases and within(n) the noise of estimating one case
    from n runs. More runs shrink only the second part, more cases both.
    """

    label: str
    """The figure planned for: `pass@1` or `pass^j`."""
    target: float
    """The half-width asked for."""
    confidence: float
    cases: int
    """Cases now."""
    runs_per_case: float
    """Counted runs per case now (harmonic mean)."""
    half_width: float
    """Half-width the variance model predicts now."""
    between: float
    """Between-case variance of the true per-case value."""
    within: float
    """Within-case variance of one case's estimate at the current runs."""
    runs_needed: int | None
    """Runs per case that reach the target on this many cases; None when no number can."""
    cases_needed: int
    """Cases that reach the target at the current runs per case."""
    cases_floor: int
    """Cases needed even with unlimited runs per case."""


def _plan_sizes(
    between: float, within_at: float, target: float, confidence: float
) -> tuple[int, int]:
    z2 = _z(0.5 + confidence / 2.0) ** 2
    needed = max(2, math.ceil(z2 * (between + within_at) / target**2))
    floor = max(2, math.ceil(z2 * between / target**2))
    return needed, floor


def _check_target(target: float) -> None:
    if not 0.0 < target < 0.5:
        raise MetricsError(
            f"target half-width is {target}; give a fraction between 0 and 0.5, "
            "e.g. 0.05 for ±5 points"
        )


def plan_pass_at_1(
    runs: ArrayLike, passes: ArrayLike, target: float, *, confidence: float = 0.95
) -> Plan:
    """Runs per case and cases for a pass@1 interval of half-width `target`.

    Within-case variance: the unbiased c(n - c) / (n(n - 1)) of p(1 - p), averaged
    over cases with 2+ runs; between-case variance: the spread of the case rates
    minus what the within-case noise explains (method of moments, at least 0).
    """
    _check_confidence(confidence)
    _check_target(target)
    n, c = _counts(runs, passes)
    cases = n.size
    if cases < 2:
        raise MetricsError(f"planning needs at least 2 cases with counted runs; have {cases}")
    several = n >= 2
    if not several.any():
        raise MetricsError("planning needs a case with 2+ counted runs to see within-case spread")
    nf, cf = n.astype(np.float64), c.astype(np.float64)
    if c.sum() in (0, n.sum()):
        raise MetricsError(_NO_SPREAD)
    w_case = np.where(several, cf * (nf - cf) / (nf * np.maximum(nf - 1.0, 1.0)), np.nan)
    within = float(np.nanmean(w_case))
    w_case = np.where(several, w_case, within)
    rates = cf / nf
    between = max(0.0, float(rates.var(ddof=1)) - float((w_case / nf).mean()))
    harmonic = float(cases / (1.0 / nf).sum())
    z = _z(0.5 + confidence / 2.0)
    budget = cases * target**2 / z**2
    if budget <= between:
        runs_needed = None
    elif within == 0.0:
        runs_needed = 1
    else:
        runs_needed = max(1, math.ceil(within / (budget - between)))
    needed, floor = _plan_sizes(between, within / harmonic, target, confidence)
    return Plan(
        label="pass@1",
        target=target,
        confidence=confidence,
        cases=cases,
        runs_per_case=harmonic,
        half_width=z * math.sqrt((between + within / harmonic) / cases),
        between=between,
        within=within / harmonic,
        runs_needed=runs_needed,
        cases_needed=needed,
        cases_floor=floor,
    )


def _u_weights(n: int, j: int) -> list[float]:
    """Hoeffding weights: Var(U_n) = sum_c w_c zeta_c for the U-statistic of pass^j."""
    total = math.comb(n, j)
    return [math.comb(j, s) * math.comb(n - j, j - s) / total for s in range(1, j + 1)]


def _population(n: Ints, c: Ints) -> tuple[float, float]:
    """Beta(alpha, beta) of the per-case success probability, by the beta-binomial moments.

    Mean: all passes / all runs. Spread: E[(c_i - n_i mu)^2] = n_i mu (1 - mu)
    (1 + (n_i - 1) rho) with rho = 1 / (alpha + beta + 1), solved for rho.
    """
    nf, cf = n.astype(np.float64), c.astype(np.float64)
    mu = float(cf.sum() / nf.sum())
    if mu in (0.0, 1.0):
        raise MetricsError(_NO_SPREAD)
    pairs = float((nf * (nf - 1.0)).sum())
    if pairs == 0.0:
        raise MetricsError(
            "a case with 2+ counted runs is needed to tell within-case from between-case spread"
        )
    resid = float(((cf - mu * nf) ** 2).sum()) * n.size / (n.size - 1)
    rho = (resid / (mu * (1.0 - mu)) - float(nf.sum())) / pairs
    size = 1.0 / min(max(rho, 1e-6), 1.0 - 1e-6) - 1.0
    return mu * size, (1.0 - mu) * size


_NO_SPREAD = (
    "every counted run passed (or every one failed): there is no spread to plan from; "
    "the interval is then the exact bound over cases, which shrinks like 3.7 / cases"
)


def _hat_within(alpha: float, beta: float, runs: int, j: int) -> float:
    """E[Var(pass^j estimate from `runs` runs | p)] for p ~ Beta(alpha, beta).

    Hoeffding: Var(U_n | p) = sum_s w_s (p^(2j-s) - p^(2j)), s = 1..j.
    """
    moments = beta_moment(alpha, beta, np.arange(j, 2 * j + 1))
    weights = _u_weights(runs, j)
    return sum(w * float(moments[j - s] - moments[j]) for s, w in enumerate(weights, start=1))


def plan_pass_hat(
    runs: ArrayLike,
    passes: ArrayLike,
    j: int,
    target: float,
    *,
    confidence: float = 0.95,
    max_runs: int = 1000,
) -> Plan:
    """Runs per case (at least j) and cases for a pass^j interval of half-width `target`.

    The within-case variance of the unbiased C(c, j) / C(n, j) has an exact
    U-statistic formula in the moments of p; it is averaged over a Beta fitted to
    all cases (beta-binomial moments), because estimating it case by case without
    a model would need 2j runs per case. The between-case variance is the spread
    of the case estimates minus that.
    """
    _check_confidence(confidence)
    _check_target(target)
    n, c = _counts(runs, passes)
    cases = n.size
    if cases < 2:
        raise MetricsError(f"planning needs at least 2 cases with counted runs; have {cases}")
    j = _common_j(n, j)
    estimates = pass_hat_array(n, c, j)
    if np.ptp(estimates) == 0 and estimates[0] in (0.0, 1.0):
        raise MetricsError(
            f"every case has pass^{j} = {estimates[0]:.0f}: there is no spread to plan from; "
            "the interval is the exact bound over cases, which shrinks like 3.7 / cases"
        )
    alpha, beta = _population(n, c)
    sizes, counts = np.unique(n, return_counts=True)
    within_now = (
        sum(
            int(k) * _hat_within(alpha, beta, int(size), j)
            for size, k in zip(sizes.tolist(), counts.tolist(), strict=True)
        )
        / cases
    )
    between = max(0.0, float(estimates.var(ddof=1)) - within_now)
    z = _z(0.5 + confidence / 2.0)
    room = cases * target**2 / z**2 - between

    runs_needed: int | None = None
    if room > 0 and _hat_within(alpha, beta, max_runs, j) <= room:
        lo, hi = j, max_runs  # the within variance falls with the runs: bisect
        while lo < hi:
            mid = (lo + hi) // 2
            if _hat_within(alpha, beta, mid, j) <= room:
                hi = mid
            else:
                lo = mid + 1
        runs_needed = lo
    needed, floor = _plan_sizes(between, within_now, target, confidence)
    return Plan(
        label=f"pass^{j}",
        target=target,
        confidence=confidence,
        cases=cases,
        runs_per_case=float(cases / (1.0 / n).sum()),
        half_width=z * math.sqrt((between + within_now) / cases),
        between=between,
        within=within_now,
        runs_needed=runs_needed,
        cases_needed=needed,
        cases_floor=floor,
    )


def plan(
    accounting: Accounting,
    target: float,
    *,
    confidence: float = 0.95,
) -> tuple[Plan, Plan]:
    """Plans for pass@1 and for pass^j at the dataset's j."""
    n, c = _counted_arrays(accounting)
    return (
        plan_pass_at_1(n, c, target, confidence=confidence),
        plan_pass_hat(n, c, int(n.min()), target, confidence=confidence),
    )


# --------------------------------------------------------------------------- comparison

Metric = Literal["pass@1", "pass@k", "pass^k"]
METRICS: tuple[str, ...] = get_args(Metric)
Outcome = Literal["better", "worse", "none"]


def check_suites(
    hash_a: str | None, hash_b: str | None, *, allow_different: bool = False
) -> tuple[str, ...]:
    """Refuse to compare runs of different suites unless allowed; return notes to show.

    Verdict files carry no suite hash (None): nothing can be checked, and the
    note says so when only one side has one.
    """
    if hash_a is None and hash_b is None:
        return ()
    if hash_a is None or hash_b is None:
        side = "A" if hash_a is None else "B"
        return (f"{side} has no suite hash (a verdict file): cannot check both ran the same suite",)
    if hash_a == hash_b:
        return ()
    what = f"A ran suite {hash_a[:12]}, B ran suite {hash_b[:12]}"
    if not allow_different:
        raise InputError(
            f"the experiments ran different suites ({what}); "
            "pass --allow-different-suites to compare their shared cases anyway"
        )
    return (f"suites differ: {what}; only the cases both contain are compared",)


FLIP_METHOD = "inverted sign-flip test: the shifts it does not reject"
"""How compare's interval and p-value are found (`Difference.method`)."""
FLOOR_METHOD = (
    "inverted sign-flip test, widened to the binomial floor: "
    "every paired case moved by the same amount"
)
"""The same when every case moved alike: a test on no spread proves nothing alone."""
CASE_RATE_METHOD = (
    "inverted sign-flip test and the paired t test, each case once: the shifts neither rejects"
)
"""compare's pass rate when cases counted different runs (the mean of per-case rates)."""
DISAGREE_METHOD = (
    "inverted sign-flip test, widened to hold the pass rate over runs: "
    "the run-weighted case differences point the other way, so no verdict"
)
"""Unequal runs per case: the pooled difference lies outside the test's interval."""


@dataclass(frozen=True)
class Difference:
    """B - A on one dataset figure over the paired cases."""

    label: str
    """`pass@1`, `pass@j` or `pass^j` at the j both sides reach."""
    a: float
    b: float
    difference: float
    """b - a."""
    low: float
    high: float
    """The shifts of every paired case's difference that the sign-flip test does not
    reject at 1 - confidence (the test inverted): it excludes 0 exactly when the test
    rejects, so the interval and the verdict never disagree."""
    confidence: float
    p_value: float
    """Two-sided sign-flip permutation p-value (A and B swapped within cases): twice the
    smaller one-sided p-value, the test the interval inverts."""
    exact: bool
    """The p-value enumerated every sign flip (few cases) rather than sampling them."""
    se: float
    """Paired cluster-robust standard error of the difference."""
    mde: float
    """Minimum detectable difference: (z_{1-alpha/2} + z_power) * se (see `mde_note`)."""
    power: float
    method: str = FLIP_METHOD
    """How the interval (and the p-value) were found."""
    mde_note: str | None = None
    """Why no difference is detectable at all with these cases (the MDE is then not a
    figure to show: above 100 points, or a test that cannot reject); None otherwise."""


@dataclass(frozen=True)
class Verdict:
    """The comparison in words, and what would settle it."""

    metric: str
    """The label of the figure the verdict rests on."""
    outcome: Outcome
    text: str
    cases_needed: int | None
    """Cases (at the current runs) to detect the observed difference at the power asked."""
    runs_needed: int | None
    """Runs per case on these cases for the same (pass@1 only); None when runs cannot."""


@dataclass(frozen=True)
class CaseDifference:
    """One paired case: counted runs and passes on each side."""

    case: str
    runs_a: int
    passes_a: int
    runs_b: int
    passes_b: int

    p_value: float = 1.0
    """Two-sided Fisher exact test of this case's A runs against its B runs."""
    q_value: float = 1.0
    """`p_value` adjusted for testing every paired case (Benjamini-Hochberg)."""

    @property
    def outcome(self) -> Outcome:
        """better / worse when the adjusted p-value is below 0.05, else none."""
        if self.q_value < CASE_ALPHA:
            return "better" if self.difference > 0 else "worse"
        return "none"

    @property
    def rate_a(self) -> float:
        return self.passes_a / self.runs_a

    @property
    def rate_b(self) -> float:
        return self.passes_b / self.runs_b

    @property
    def difference(self) -> float:
        return self.rate_b - self.rate_a


@dataclass(frozen=True)
class Comparison:
    """B against A, paired by case."""

    a: Accounting
    b: Accounting
    cases: tuple[CaseDifference, ...]
    """The paired cases: in both, with a counted run on each side."""
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    left_out: tuple[str, ...]
    """In both, but with no counted run on at least one side."""
    j: int
    """The largest j every paired case reaches on both sides."""
    pass_at_1: Difference
    pass_at_j: Difference
    pass_hat_j: Difference
    verdict: Verdict
    resamples: int
    seed: int
    notes: tuple[str, ...]
    adjust: Adjust = "bh"
    """How the per-case p-values were adjusted (`CORRECTIONS` names it)."""

    @property
    def correction(self) -> str:
        return CORRECTIONS[self.adjust]


def _hypergeometric_pmf(total: int, good: int, draws: int) -> tuple[Ints, Floats]:
    """Support and probabilities of the passes among `draws` of `total` runs, `good` passing."""
    lo, hi = max(0, good - (total - draws)), min(draws, good)
    x = np.arange(lo, hi + 1, dtype=np.int64)
    log = np.array(
        [
            math.lgamma(good + 1)
            - math.lgamma(v + 1)
            - math.lgamma(good - v + 1)
            + math.lgamma(total - good + 1)
            - math.lgamma(draws - v + 1)
            - math.lgamma(total - good - draws + v + 1)
            - math.lgamma(total + 1)
            + math.lgamma(draws + 1)
            + math.lgamma(total - draws + 1)
            for v in x.tolist()
        ]
    )
    pmf = np.exp(log - log.max())
    return x, pmf / pmf.sum()


def _flip_totals(flips: Floats, resamples: int, rng: np.random.Generator) -> Iterator[Floats]:
    """Blocks of sum_i s_i * flips[i] over random (or all) swap patterns s in {0, 1}^G.

    Few cases: every pattern once (an exact test). Few distinct case records:
    the number of swapped cases among the m copies of a record is
    Binomial(m, 1/2), which gives the same sums as flipping case by case.
    """
    cases = flips.shape[0]
    if _enumerates(cases, resamples):
        codes = np.arange(2**cases, dtype=np.int64)[:, None]
        yield ((codes >> np.arange(cases, dtype=np.int64)) & 1).astype(np.float64) @ flips
        return
    records, counts = np.unique(flips, axis=0, return_counts=True)
    if records.shape[0] * _FEW_RECORDS <= cases:
        swapped = rng.binomial(counts, 0.5, size=(resamples, counts.size))
        yield np.asarray(swapped @ records, dtype=np.float64)
        return
    rows = max(1, _CHUNK // cases)
    for start in range(0, resamples, rows):
        r = min(rows, resamples - start)
        yield (rng.random((r, cases)) < 0.5).astype(np.float64) @ flips


def _enumerates(cases: int, resamples: int) -> bool:
    return cases < 63 and 2**cases <= resamples


def _paired_se(
    na: Floats,
    ca: Floats,
    nb: Floats,
    cb: Floats,
    d_at: Floats,
    d_hat: Floats,
    j: int,
    means: tuple[float, float, float, float],
) -> tuple[float, float, float]:
    """Paired cluster-robust SEs of the three differences. A SE of 0 (every case
    moved by the same amount) proves nothing, and an MDE of 0 would claim any
    difference could be seen: it is replaced by the binomial SE of independent
    trials on each side (runs for the pass rate; sum n / j groups for pass@j and
    pass^j), with half a trial added to a side at 0 or 1."""
    cases = na.size
    pa, pb = ca.sum() / na.sum(), cb.sum() / nb.sum()
    resid = (cb - pb * nb) / nb.sum() - (ca - pa * na) / na.sum()
    se1 = math.sqrt(cases / (cases - 1) * float(resid @ resid))
    floors = (
        _floor_var(pa, na.sum()) + _floor_var(pb, nb.sum()),
        _floor_var(means[0], na.sum() / j) + _floor_var(means[1], nb.sum() / j),
        _floor_var(means[2], na.sum() / j) + _floor_var(means[3], nb.sum() / j),
    )
    ses = (
        se1,
        float(d_at.std(ddof=1)) / math.sqrt(cases),
        float(d_hat.std(ddof=1)) / math.sqrt(cases),
    )
    return tuple(  # type: ignore[return-value]
        se if se > 0 else math.sqrt(floor) for se, floor in zip(ses, floors, strict=True)
    )


def _case_rate_se(na: Floats, ca: Floats, nb: Floats, cb: Floats, d: Floats) -> float:
    """SE of the mean of per-case rate differences, floored at the binomial SE of each
    side's mean of rates (p(1 - p) sum(1 / n_i) / G^2), as `_paired_se` floors its own."""
    cases = na.size
    se = float(d.std(ddof=1)) / math.sqrt(cases)
    pa, pb = float((ca / na).mean()), float((cb / nb).mean())
    floor = _floor_var(pa, cases**2 / float((1.0 / na).sum())) + _floor_var(
        pb, cases**2 / float((1.0 / nb).sum())
    )
    return se if se > 0 else math.sqrt(floor)


def _floor_var(mean: float, trials: float) -> float:
    shrunk = (mean * trials + 0.5) / (trials + 1.0)
    return shrunk * (1.0 - shrunk) / trials


def _t_sf2(x: float, df: int) -> float:
    """Two-sided t tail P(|T_df| >= x), from the Beta(df/2, 1/2) identity."""
    if x <= 0:
        return 1.0
    return float(betainc(df / 2.0, 0.5, df / (df + x * x)))


@dataclass(frozen=True)
class _Flips:
    """Every sign-flip pattern drawn, as the weighted mean of the swapped cases' differences.

    Swapping A and B within the set S of cases turns sum_i w_i (d_i - delta) into
    itself minus 2 sum_{i in S} w_i (d_i - delta); that pattern's statistic is at least
    the observed one exactly when delta >= m_S, the weighted mean of d over S. So the
    one-sided p-values at any shift delta count the m_S on one side of it (Hartigan's
    subsample means), and inverting the test needs only their order statistics."""

    means: Floats
    """m_S of every drawn pattern with a nonempty S, rounded to 12 decimals (ties exact)."""
    base: int
    """Patterns that always count as extreme: the empty S (and the observed one when sampled)."""
    total: int
    """The p-values' denominator: 2^G enumerated, or the draws + 1 when sampled."""


def _flip_test(flips: _Flips, alpha: float) -> tuple[float, float, float]:
    """(low, high, two-sided p at 0) of the sign-flip test and its inversion.

    p = twice the smaller one-sided p-value; the interval holds every shift whose
    two-sided p-value is at least alpha, computed from the same counts with the
    same arithmetic, so low > 0 or high < 0 exactly when p < alpha."""
    m = flips.means
    counts = np.arange(m.size + 1, dtype=np.float64)
    accepted = 2.0 * (flips.base + counts) / flips.total >= alpha
    q = int(np.argmax(accepted)) if accepted.any() else m.size
    low = float(m[q - 1]) if q >= 1 else -1.0
    high = float(m[m.size - q]) if q >= 1 else 1.0
    up = 2.0 * (flips.base + int(np.count_nonzero(m <= 0.0))) / flips.total
    down = 2.0 * (flips.base + int(np.count_nonzero(m >= 0.0))) / flips.total
    return max(-1.0, low), min(1.0, high), min(1.0, up, down)


def _draw_flips(
    columns: Floats, resamples: int, rng: np.random.Generator
) -> tuple[list[_Flips], bool]:
    """Sign flips of every statistic at once. `columns` holds, per statistic, the pair
    (w_i d_i, w_i); the flips are shared, so the three figures see the same patterns."""
    cases = columns.shape[0]
    exact = _enumerates(cases, resamples)
    blocks = list(_flip_totals(columns, resamples, rng))
    sums = np.concatenate(blocks, axis=0)
    out = []
    for i in range(0, columns.shape[1], 2):
        weight = sums[:, i + 1]
        empty = weight <= 0.0
        means = np.round(sums[~empty, i] / weight[~empty], 12) + 0.0  # -0.0 is 0.0
        base = int(np.count_nonzero(empty)) + (0 if exact else 1)
        total = sums.shape[0] + (0 if exact else 1)
        out.append(_Flips(np.sort(means), base, total))
    return out, exact


def _mde_note(mde: float, smallest_p: float, alpha: float) -> str | None:
    """Why no difference at all is detectable, or None: an MDE of 100 points or more
    (no difference of a share can reach it), or a test that cannot reject with so few cases."""
    if smallest_p >= alpha:
        return f"the sign-flip test cannot reach p < {alpha:g} with so few"
    if mde >= 1.0:
        return "the MDE would be above 100 pts"
    return None


def paired_differences(
    runs_a: ArrayLike,
    passes_a: ArrayLike,
    runs_b: ArrayLike,
    passes_b: ArrayLike,
    j: int | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    power: float = 0.8,
    seed: int = 0,
) -> tuple[Difference, Difference, Difference]:
    """B - A for pass@1, pass@j and pass^j over paired cases (row i is the same case).

    p-value: sign-flip permutation, swapping A and B within random cases (exact
    when the configurations are exchangeable; every pattern enumerated for few
    cases), two-sided as twice the smaller one-sided p-value. For the pass rate the
    flipped statistic is the run-share-weighted mean of per-case rate differences
    (see the comment below), valid with unequal k. Interval: the same test inverted
    (every shift of the per-case differences it does not reject), so it excludes 0
    exactly when p < 1 - confidence: the interval and the verdict cannot disagree.
    When every case moved by the same amount, a test on no spread proves nothing:
    the interval is widened to the binomial floor and p is the larger of the two.
    MDE uses the paired cluster-robust SE; a SE of 0 is replaced by the binomial
    SE of independent trials, so the MDE is never 0.
    """
    alpha = _check_confidence(confidence)
    _check_resamples(resamples)
    if not 0.5 <= power < 1:
        raise MetricsError(f"power is {power}; give a level between 0.5 and 1, e.g. 0.8")
    na_i, ca_i = _counts(runs_a, passes_a)
    nb_i, cb_i = _counts(runs_b, passes_b)
    if na_i.size != nb_i.size:
        raise MetricsError(
            f"A has {plural(int(na_i.size), 'case')} and B {nb_i.size}; pair them first"
        )
    cases = na_i.size
    if cases < 2:
        raise MetricsError(f"a comparison needs at least 2 paired cases; have {cases}")
    j = _common_j(np.minimum(na_i, nb_i), j)
    na, ca, nb, cb = (x.astype(np.float64) for x in (na_i, ca_i, nb_i, cb_i))
    at_a, at_b = pass_at_array(na, ca, j), pass_at_array(nb, cb, j)
    hat_a, hat_b = pass_hat_array(na, ca, j), pass_hat_array(nb, cb, j)
    _, seq_perm = np.random.SeedSequence(seed).spawn(2)

    # Sign flips: swapping A and B within case i turns its difference d_i into -d_i.
    # The pass rate's statistic is the mean of the per-case rate differences weighted by
    # each case's share of runs on the two sides, w_i = n_ai / N_a + n_bi / N_b: weights
    # that a swap leaves alone, so the flips stay valid with unequal k (swapping the
    # runs themselves, as before, moved 3 runs one way and 10 the other and made the
    # null far wider than the statistic). With the same runs in every case of a side,
    # it equals the difference of the pass rates over runs.
    #
    # When the cases counted different runs on either side (after an adaptive run, or
    # errors that fall on some cases), the pass rate judged is the mean of per-case rates
    # on each side and every case weighs once: run weights then follow what chose the
    # runs (an adaptive rule runs further the cases whose A runs disagreed) and biased
    # the flips (14 % A/A after `--until-decided`, all "B is better").
    d_rate = cb / nb - ca / na
    varied = bool(np.ptp(na) or np.ptp(nb))
    weights = np.ones(cases) if varied else na / na.sum() + nb / nb.sum()
    d_at, d_hat = at_b - at_a, hat_b - hat_a
    ones = np.ones(cases)
    columns = np.column_stack([weights * d_rate, weights, d_at, ones, d_hat, ones])
    flips, exact = _draw_flips(columns, resamples, np.random.default_rng(seq_perm))

    means = (float(at_a.mean()), float(at_b.mean()), float(hat_a.mean()), float(hat_b.mean()))
    ses = _paired_se(na, ca, nb, cb, d_at, d_hat, j, means)
    if varied:
        ses = (_case_rate_se(na, ca, nb, cb, d_rate), ses[1], ses[2])
    factor = _z(1.0 - alpha / 2.0) + _z(power)
    rate_row = (
        (CASE_RATE_LABEL, float((ca / na).mean()), float((cb / nb).mean()), d_rate)
        if varied
        else (RATE_LABEL, float(ca.sum() / na.sum()), float(cb.sum() / nb.sum()), d_rate)
    )
    rows = [
        rate_row,
        (label_at(j), float(at_a.mean()), float(at_b.mean()), d_at),
        (label_hat(j), float(hat_a.mean()), float(hat_b.mean()), d_hat),
    ]
    smallest_p = 2.0 / flips[0].total  # one pattern as extreme as the data, doubled
    out = []
    for i, (label, a, b, d) in enumerate(rows):
        low, high, p = _flip_test(flips[i], alpha)
        method = FLIP_METHOD
        if np.ptp(d) == 0:  # every case moved alike: no spread is no proof
            t = _t_quantile(cases - 1, alpha)
            low = min(low, max(-1.0, b - a - t * ses[i]))
            high = max(high, min(1.0, b - a + t * ses[i]))
            p = max(p, _t_sf2(abs(b - a) / ses[i], cases - 1))
            method = FLOOR_METHOD
        elif i == 0 and varied:
            # different runs per case: a case's difference is not symmetric under "no
            # difference" (its two rates differ in spread), so the flips alone run a
            # little hot; the paired t test on the same differences must agree
            t = _t_quantile(cases - 1, alpha)
            low = min(low, max(-1.0, b - a - t * ses[i]))
            high = max(high, min(1.0, b - a + t * ses[i]))
            p = max(p, _t_sf2(abs(b - a) / ses[i], cases - 1))
            method = CASE_RATE_METHOD
        if not low <= b - a <= high:  # unequal runs per case: pooled and weighted disagree
            low, high = min(low, b - a), max(high, b - a)
            if low <= 0.0 <= high and p < alpha:
                method = DISAGREE_METHOD
        mde = factor * ses[i]
        out.append(
            Difference(
                label=label,
                a=a,
                b=b,
                difference=b - a,
                low=low,
                high=high,
                confidence=confidence,
                p_value=p,
                exact=exact,
                se=ses[i],
                mde=mde,
                power=power,
                method=method,
                mde_note=_mde_note(mde, smallest_p, alpha),
            )
        )
    return out[0], out[1], out[2]


CASE_ALPHA = 0.05
"""False discovery rate of the per-case verdicts in `compare`."""
CASE_CORRECTION = "Benjamini-Hochberg"
"""How the per-case p-values are adjusted for testing every paired case, by default."""
Adjust = Literal["bh", "holm"]
"""`--adjust`: Benjamini-Hochberg (false discovery rate) or Holm (family-wise error)."""
CORRECTIONS: dict[str, str] = {"bh": CASE_CORRECTION, "holm": "Holm"}
"""The name of each adjustment, as reports print it."""


def fisher_exact(na: int, ca: int, nb: int, cb: int) -> float:
    """Two-sided Fisher exact p-value of ca/na against cb/nb (sum of the tables no
    more likely than the one seen)."""
    support, pmf = _hypergeometric_pmf(na + nb, ca + cb, na)
    seen = pmf[int(np.searchsorted(support, ca))]
    return float(min(1.0, pmf[pmf <= seen * (1.0 + 1e-7)].sum()))


def benjamini_hochberg(p_values: ArrayLike) -> Floats:
    """Benjamini-Hochberg adjusted p-values (q-values): reject where q < the FDR level."""
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if p.size == 0:
        return p
    order = np.argsort(p)
    ranked = p[order] * p.size / np.arange(1, p.size + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty_like(p)
    out[order] = np.minimum(q, 1.0)
    return out


def holm(p_values: ArrayLike) -> Floats:
    """Holm's step-down adjusted p-values: reject where they fall under the family-wise
    error rate (every case's verdict at once, not a share of them as BH controls)."""
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if p.size == 0:
        return p
    order = np.argsort(p, kind="stable")
    ranked = p[order] * (p.size - np.arange(p.size))
    adjusted = np.maximum.accumulate(ranked)
    out = np.empty_like(p)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def _check_adjust(adjust: str) -> Adjust:
    if adjust not in CORRECTIONS:
        raise InputError(f"--adjust is {adjust!r}; use holm or bh")
    return cast("Adjust", adjust)


def case_tests(
    runs_a: ArrayLike,
    passes_a: ArrayLike,
    runs_b: ArrayLike,
    passes_b: ArrayLike,
    adjust: Adjust = "bh",
) -> tuple[Floats, Floats]:
    """Per paired case: the Fisher exact p-value and its adjusted value over the cases
    (`adjust`: Benjamini-Hochberg q-value, or Holm's family-wise adjusted p-value)."""
    _check_adjust(adjust)
    na, ca = _counts(runs_a, passes_a)
    nb, cb = _counts(runs_b, passes_b)
    rows = np.column_stack([na, ca, nb, cb])
    records, inverse = np.unique(rows, axis=0, return_inverse=True)
    p_record = np.array([fisher_exact(*r) for r in records.tolist()])
    p = p_record[inverse.ravel()]
    return p, holm(p) if adjust == "holm" else benjamini_hochberg(p)


def _runs_for_difference(
    na: Floats, ca: Floats, nb: Floats, cb: Floats, delta: float, factor: float
) -> int | None:
    """Runs per case (both sides) for the pass@1 difference to reach power; None if runs cannot."""
    cases = na.size

    def unbiased(n: Floats, c: Floats) -> Floats:
        return np.where(n >= 2, c * (n - c) / (n * np.maximum(n - 1.0, 1.0)), np.nan)

    wa, wb = unbiased(na, ca), unbiased(nb, cb)
    if np.all(np.isnan(wa)) or np.all(np.isnan(wb)):
        return None
    within = float(np.nanmean(wa) + np.nanmean(wb))
    wa = np.where(np.isnan(wa), np.nanmean(wa), wa)
    wb = np.where(np.isnan(wb), np.nanmean(wb), wb)
    d = cb / nb - ca / na
    between = max(0.0, float(d.var(ddof=1)) - float((wa / na + wb / nb).mean()))
    budget = cases * delta**2 / factor**2
    if budget <= between:
        return None
    return max(1, math.ceil(within / (budget - between))) if within > 0 else 1


def decide(difference: Difference) -> Outcome:
    """B better or worse when the interval excludes 0 (the sign-flip test inverted: the
    same as p < 1 - confidence, unless the widened interval says why not); else none."""
    if difference.low > 0.0:
        return "better"
    if difference.high < 0.0:
        return "worse"
    return "none"


def _pts(x: float) -> str:
    return f"{x * 100:+.1f} pts"


def _verdict(chosen: Difference, cases: int, runs_needed: int | None, runs_now: float) -> Verdict:
    outcome = decide(chosen)
    evidence = (
        f"{chosen.label} {_pts(chosen.difference)} "
        f"({chosen.confidence:.0%} interval {_pts(chosen.low)} to {_pts(chosen.high)}, "
        f"p = {chosen.p_value:.3g}) over {cases} paired cases"
    )
    if outcome != "none":
        text = f"B is {outcome}: {evidence}."
        return Verdict(chosen.label, outcome, text, None, None)
    if chosen.mde_note is not None:
        text = (
            f"No difference detectable with {cases} paired cases ({chosen.mde_note}): {evidence}."
        )
    else:
        text = (
            f"No difference detectable at this size (MDE = {abs(chosen.mde) * 100:.1f} pts at "
            f"{chosen.power:.0%} power): {evidence}."
        )
    if chosen.difference == 0 or chosen.se == 0:
        return Verdict(chosen.label, outcome, text, None, None)
    # and never fewer cases than a sign-flip test needs to reject at all: 2 / 2^G < alpha
    fewest = math.floor(math.log2(2.0 / (1.0 - chosen.confidence))) + 1
    # ...and more cases than these, which did not decide it (an observed difference above
    # the MDE can still miss: the MDE is the one found 80 % of the time, not always)
    needed = max(fewest, cases + 1, math.ceil(cases * (chosen.mde / chosen.difference) ** 2))
    if cases < fewest:  # no number of runs lets the test reject on these few cases
        runs_needed = None
    text += (
        f" To detect {_pts(chosen.difference)} at {chosen.power:.0%} power: "
        f"about {needed} cases at {plural(math.ceil(runs_now), 'run')} each"
    )
    if runs_needed is not None:
        text += f", or {plural(runs_needed, 'run')} per case on these {cases} cases"
    elif chosen.label == RATE_LABEL:
        text += "; more runs on these cases cannot get there"
    return Verdict(chosen.label, outcome, text + ".", needed, runs_needed)


def compare_counts(
    runs_a: ArrayLike,
    passes_a: ArrayLike,
    runs_b: ArrayLike,
    passes_b: ArrayLike,
    *,
    metric: Metric = "pass@1",
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    power: float = 0.8,
    seed: int = 0,
) -> tuple[tuple[Difference, Difference, Difference], Verdict]:
    """The three paired differences and the verdict on `metric`, from paired arrays."""
    if metric not in METRICS:
        raise MetricsError(f"metric is {metric!r}; use one of {', '.join(METRICS)}")
    diffs = paired_differences(
        runs_a,
        passes_a,
        runs_b,
        passes_b,
        resamples=resamples,
        confidence=confidence,
        power=power,
        seed=seed,
    )
    chosen = diffs[METRICS.index(metric)]
    na, ca = (np.asarray(x, dtype=np.float64).ravel() for x in (runs_a, passes_a))
    nb, cb = (np.asarray(x, dtype=np.float64).ravel() for x in (runs_b, passes_b))
    runs_needed = None
    if metric == "pass@1" and chosen.difference != 0:
        factor = _z(0.5 + confidence / 2.0) + _z(power)
        runs_needed = _runs_for_difference(na, ca, nb, cb, abs(chosen.difference), factor)
    runs_now = float(np.concatenate([na, nb]).mean())
    return diffs, _verdict(chosen, na.size, runs_needed, runs_now)


def compare(
    a: Accounting,
    b: Accounting,
    *,
    metric: Metric = "pass@1",
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    power: float = 0.8,
    seed: int = 0,
    notes: Sequence[str] = (),
    adjust: Adjust = "bh",
) -> Comparison:
    """Compare B with A, paired by case; cases in one side only are listed and left out.
    `adjust` is how the per-case tests are adjusted for testing every case."""
    _check_adjust(adjust)
    by_b = {c.case: c for c in b.cases}
    names_a = {c.case for c in a.cases}
    if not a.cases or a.runs_counted == 0:
        raise InputError("A has no counted run; give a side with at least one passed or failed run")
    if not b.cases or b.runs_counted == 0:
        raise InputError("B has no counted run; give a side with at least one passed or failed run")
    shared = [(x, by_b[x.case]) for x in a.cases if x.case in by_b]
    if not shared:
        raise InputError(
            f"A and B share no case (A has {len(a.cases)}, B has {len(b.cases)}); "
            "compare two runs of the same suite"
        )
    paired = [(x, y) for x, y in shared if x.counted and y.counted]
    if len(paired) < 2:
        raise InputError(
            f"A and B share {plural(len(paired), 'case')} with counted runs on both sides; "
            "a comparison needs at least 2"
        )
    runs_a = np.array([x.counted for x, _ in paired], dtype=np.int64)
    passes_a = np.array([x.passes for x, _ in paired], dtype=np.int64)
    runs_b = np.array([y.counted for _, y in paired], dtype=np.int64)
    passes_b = np.array([y.passes for _, y in paired], dtype=np.int64)
    diffs, verdict = compare_counts(
        runs_a,
        passes_a,
        runs_b,
        passes_b,
        metric=metric,
        resamples=resamples,
        confidence=confidence,
        power=power,
        seed=seed,
    )
    j = int(np.minimum(runs_a, runs_b).min())
    p_case, q_case = case_tests(runs_a, passes_a, runs_b, passes_b, adjust)
    return Comparison(
        a=a,
        b=b,
        cases=tuple(
            CaseDifference(x.case, x.counted, x.passes, y.counted, y.passes, p, q)
            for (x, y), p, q in zip(paired, p_case.tolist(), q_case.tolist(), strict=True)
        ),
        only_a=tuple(x.case for x in a.cases if x.case not in by_b),
        only_b=tuple(y.case for y in b.cases if y.case not in names_a),
        left_out=tuple(x.case for x, y in shared if not (x.counted and y.counted)),
        j=j,
        pass_at_1=diffs[0],
        pass_at_j=diffs[1],
        pass_hat_j=diffs[2],
        verdict=verdict,
        resamples=resamples,
        seed=seed,
        notes=tuple(notes),
        adjust=adjust,
    )


# --------------------------------------------------------------------------- bundle


@dataclass(frozen=True)
class Uncertainty:
    """Everything `passhat metrics` and `passhat report` show beside the point figures."""

    confidence: float
    cases: tuple[CaseInterval, ...]
    dataset: DatasetIntervals | None
    """None when fewer than 2 cases have a counted run (see `dataset_note`)."""
    dataset_note: str | None
    forecast: Forecast
    plans: tuple[Plan, ...]
    """pass@1 and pass^j plans that could be made, when a target half-width was asked for."""
    plan_notes: tuple[str, ...]
    """Why a plan asked for could not be made (e.g. every run passed: no spread)."""
    ledger: ErrorLedger | None = None
    """The denominator ledger when runs errored: figures with errors left out, as
    failures, as passes."""


@without_gc
def uncertainty(
    accounting: Accounting,
    *,
    m: int = 10,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
    prior: Prior = JEFFREYS,
    target: float | None = None,
    only: Collection[str] | None = None,
) -> Uncertainty:
    """Case intervals, dataset intervals, the forecast, and plans when `target` is given.

    `only` limits the per-case intervals and forecasts to those case ids (a terminal
    table of 30 rows need not build 100,000); dataset figures always cover every case.
    """
    _check_confidence(confidence)
    _check_resamples(resamples)
    _check_m(m)
    n, _ = _counted_arrays(accounting)
    dataset: DatasetIntervals | None = None
    note: str | None = None
    if n.size >= 2:
        dataset = dataset_intervals(
            accounting, resamples=resamples, confidence=confidence, seed=seed
        )
    else:
        note = "one case with counted runs: a dataset interval needs 2 or more cases"
    plans: list[Plan] = []
    plan_notes: list[str] = []
    if target is not None:
        _check_target(target)
        n, c = _counted_arrays(accounting)
        j = int(n.min())
        for hat in (False, True):
            try:
                plans.append(
                    plan_pass_hat(n, c, j, target, confidence=confidence)
                    if hat
                    else plan_pass_at_1(n, c, target, confidence=confidence)
                )
            except MetricsError as error:
                plan_notes.append(f"{f'pass^{j}' if hat else 'pass@1'}: {error}")
    return Uncertainty(
        confidence=confidence,
        cases=case_intervals(accounting, confidence, only),
        dataset=dataset,
        dataset_note=note,
        forecast=forecast(
            accounting,
            m,
            prior=prior,
            confidence=confidence,
            only=only,
            resamples=resamples,
            seed=seed,
        ),
        plans=tuple(plans),
        plan_notes=tuple(plan_notes),
        ledger=accounting.error_ledger(),
    )
