"""The cluster bootstrap: cases resampled with replacement, each keeping all its runs,
and the expanded percentile interval read from the resamples."""

from __future__ import annotations

import math
from collections.abc import Iterator
from statistics import NormalDist
from typing import TYPE_CHECKING, Unpack

from passhat.metrics import CASE_RATE_LABEL, RATE_LABEL, label_at, label_hat
from passhat.stats._base import (
    Resampling,
    _blocks,
    _common_j,
    _counts,
    _few_records,
    _need_two_cases,
    _record_draws,
    _remembered,
    _resampled,
    _unique_rows,
    pass_at_array,
    pass_hat_array,
)
from passhat.stats._numpy import np
from passhat.stats.distributions import _t_quantile
from passhat.stats.intervals import (
    Interval,
    _binomial_floor,
    _case_rate_trials,
    _degenerate,
    case_rate_interval,
    score_interval,
)

if TYPE_CHECKING:
    from passhat.stats._numpy import ArrayLike, Floats, Ints


def _resample_counts(cases: int, resamples: int, rng: np.random.Generator) -> Iterator[Ints]:
    """Blocks of bootstrap multiplicities: row r says how often each case was drawn."""
    for r in _blocks(cases, resamples):
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
    cases = columns.shape[0]
    records, _, counts = _unique_rows(columns)
    if _few_records(records.shape[0], cases):
        if isinstance(seed, np.random.Generator):
            draws = seed.multinomial(cases, counts / cases, size=resamples)
        else:  # the share forecast may draw the very same (`_record_draws`)
            draws = _record_draws(cases, counts, resamples, seed)
        return np.asarray(draws @ records, dtype=np.float64)
    rng = np.random.default_rng(seed)
    blocks = [w @ columns for w in _resample_counts(cases, resamples, rng)]
    return np.concatenate(blocks, axis=0)


def _case_record_draws(
    runs: Ints, passes: Ints, resamples: int, seed: int
) -> tuple[Ints, Ints, Ints]:
    """The distinct case records (counted runs, passes) in sorted order, how many cases
    hold each, and how many copies of each `resamples` bootstrap draws of the cases
    hold: the one resampling the dataset bootstrap and the share forecast both read
    (each case with all its runs). Drawn as `_bootstrap_totals` draws: per record
    (`_record_draws`, multinomial) when there are few, else case by case from
    `default_rng(seed)`, summed per record. Remembered as `_record_draws` is, so the
    second of the two calls of a report costs nothing (the draws were a fifth of a
    simulated experiment's CPU). Records are (runs, passes) pairs, not the figures'
    own values, so one resampling serves every figure: the draws per record of a
    case's rate alone would be another multinomial."""
    records, inverse, counts = _unique_rows(np.column_stack([runs, passes]))
    cases = runs.size
    if _few_records(records.shape[0], cases):
        return records, counts, _record_draws(cases, counts, resamples, seed)

    def by_case() -> Ints:
        order = np.argsort(inverse, kind="stable")
        starts = np.cumsum(counts) - counts
        rng = np.random.default_rng(seed)
        blocks = _resample_counts(cases, resamples, rng)
        return np.concatenate([np.add.reduceat(w[:, order], starts, axis=1) for w in blocks])

    key = (seed, cases, resamples, "cases", inverse.tobytes())
    return records, counts, _remembered(key, by_case)


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
    low, high = _weibull_quantiles(values, (tail, 1.0 - tail))
    return low, high


def _weibull_quantile(values: Floats, q: float) -> float:
    """`np.quantile(values, q, method="weibull")` of a 1-d array, the same operations
    in the same order (so the very same bits; tests/test_stats_floats.py compares them
    on generated data): the (B + 1) q-th order statistic, linearly interpolated.
    numpy's general machinery for it costs more than the bootstrap, and loads
    `numpy.ma` (8 ms of a report's start) to ask whether the array is masked."""
    return _weibull_quantiles(values, (q,))[0]


def _weibull_quantiles(values: Floats, qs: tuple[float, ...]) -> list[float]:
    """`_weibull_quantile` at each of `qs`, the values checked and sorted once."""
    count = values.size
    if count == 0 or np.isnan(values).any() or np.signbit(values).any():
        # NaN, or a sign (where -0.0 and 0.0 tie, and numpy's partial sort places them
        # its own way): numpy's own path. A bootstrap's rates and shares have neither.
        return [float(np.quantile(values, q, method="weibull")) for q in qs]
    ordered: list[float] = np.sort(values).tolist()
    return [_read_quantile(ordered, q) for q in qs]


def _read_quantile(ordered: list[float], q: float) -> float:
    """The weibull quantile q of sorted values, as numpy interpolates it."""
    count = len(ordered)
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
    runs: ArrayLike, passes: ArrayLike, j: int | None = None, **resampling: Unpack[Resampling]
) -> tuple[Interval, Interval, Interval]:
    """Cluster-bootstrap percentile intervals for pass@1, pass@j and pass^j.

    Cases are resampled with replacement and keep all their runs; `j` defaults
    to the smallest count, the largest j every case reaches.
    """
    resamples, confidence, seed = _resampled(resampling)
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


def case_rate_bootstrap(
    runs: ArrayLike, passes: ArrayLike, **resampling: Unpack[Resampling]
) -> Interval:
    """The cluster-bootstrap interval of the mean of per-case rates (cases resampled with
    replacement; expanded percentile), beside `case_rate_interval`."""
    resamples, confidence, seed = _resampled(resampling)
    n, c = _counts(runs, passes)
    cases = n.size
    _need_two_cases(cases)
    rates = (c / n).astype(np.float64)
    mean = float(rates.mean())
    records, _, draws = _case_record_draws(n, c, resamples, seed)
    values = (draws @ (records[:, 1] / records[:, 0])) / cases
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


def _bootstrap_rate(runs: Ints, passes: Ints, **resampling: Unpack[Resampling]) -> Interval:
    """The cluster-bootstrap interval of the pass rate over runs alone."""
    resamples, confidence, seed = _resampled(resampling)
    cases = runs.size
    _need_two_cases(cases)
    rate = float(passes.sum() / runs.sum())
    records, _, draws = _case_record_draws(runs, passes, resamples, seed)
    # integer totals, exact in any order: the bits `_bootstrap_totals` gave
    totals = np.asarray(draws @ records[:, ::-1], dtype=np.float64)
    values = totals[:, 0] / totals[:, 1]
    if np.ptp(values) == 0:
        flat = _degenerate(RATE_LABEL, rate, cases, confidence)
        return flat or _binomial_floor(rate, int(runs.sum()), cases, confidence)
    method = f"cluster bootstrap, B = {resamples}"
    boot = _percentile(RATE_LABEL, rate, values, cases, confidence, method)
    return _floored(boot, _binomial_floor(rate, int(runs.sum()), cases, confidence))
