"""Intervals in closed form: per case (Wilson, the all-or-none bound), and per dataset
(cluster-robust, score-type at an effective number of trials, the bounds at the
requested k)."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passhat.accounting import Accounting
from passhat.metrics import CASE_RATE_LABEL, RATE_LABEL, label_at, label_hat
from passhat.stats._base import (
    _check_confidence,
    _common_j,
    _counts,
    _mean_var,
    _need_two_cases,
    pass_at_array,
    pass_hat_array,
)
from passhat.stats._numpy import np
from passhat.stats.distributions import _t_quantile, _z

if TYPE_CHECKING:
    from passhat.stats._numpy import ArrayLike, Floats, Ints


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
    mean, variance = _mean_var(v)
    degenerate = _degenerate(label, mean, cases, confidence)
    if degenerate is not None:
        return degenerate
    spread = variance / cases
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
    asked: ArrayLike | None = None,
) -> tuple[Interval, Interval]:
    """pass@k and pass^k at the requested k, over every case (Imbens and Manski 2004, in
    its conservative form): the figures over the cases that reached k are biased when
    errors fall on some cases (hard ones error more: pass^5 read 0.206 for a truth of
    0.107 in the review), so their interval is the range full runs could have shown. A
    case short of its `asked` runs (k when not given) gets its runs not counted as
    failures for the lower bound and as passes for the upper; a case with no counted run
    (`unseen`) gets 0 and 1. The interval runs from the lower bound's lower end to the
    upper bound's upper end (each a `score_interval`), so it holds the whole range, and
    the truth in it, at least `confidence` of the time whatever the errors depend on; it
    is widened to hold the figure (`figures`' estimates) when that lies outside."""
    n, c = _counts(runs, passes)
    full = np.maximum(n, k if asked is None else np.asarray(asked, dtype=np.int64).ravel())
    filled = c + (full - n)
    trials = float(n.size + unseen)
    return _filled_bounds(figures, full, c, filled, k, unseen, trials, confidence, AT_K_METHOD)


def _filled_bounds(
    figures: tuple[Interval, Interval],
    full: ArrayLike,
    passes: ArrayLike,
    filled: ArrayLike,
    j: int,
    unseen: int,
    trials: float,
    confidence: float,
    method: str,
) -> tuple[Interval, Interval]:
    """pass@j and pass^j from every case at its `full` runs, the runs not counted as
    failures (`passes`) for the lower bound and as passes (`filled`) for the upper; the
    `unseen` cases at 0 and 1."""
    zeros, ones = np.zeros(unseen), np.ones(unseen)
    at_j, hat_j = (
        _bounds(
            figure,
            np.concatenate([estimator(full, passes, j), zeros]),
            np.concatenate([estimator(full, filled, j), ones]),
            trials,
            confidence,
            method,
        )
        for figure, estimator in ((figures[0], pass_at_array), (figures[1], pass_hat_array))
    )
    return at_j, hat_j


LOSS_METHOD = (
    "worst-case bounds: runs not counted (errored or missing) as failures, as passes, "
    "each with its score interval"
)
"""How the dataset figures' bounds are found when runs were not counted (`loss_bounds`)."""


def _bounds(
    figure: Interval,
    low_values: Floats,
    high_values: Floats,
    trials: float,
    confidence: float,
    method: str,
) -> Interval:
    """From the lower bound's lower end to the upper bound's upper end (each a
    `score_interval`), widened to hold the figure itself."""
    low = score_interval(figure.label, low_values, trials, confidence).low
    high = score_interval(figure.label, high_values, trials, confidence).high
    estimate = figure.estimate
    return Interval(
        figure.label, estimate, min(low, estimate), max(high, estimate), confidence, method
    )


def loss_bounds(
    figures: tuple[Interval, Interval, Interval],
    runs: ArrayLike,
    passes: ArrayLike,
    asked: ArrayLike,
    j: int,
    unseen: int = 0,
    confidence: float = 0.95,
) -> tuple[Interval, Interval, Interval]:
    """The headline pass rate, pass@j and pass^j whatever the runs that were not counted
    would have shown (Imbens and Manski 2004, in its conservative form, as `at_k_bounds`).

    A run that would have failed may time out, crash or go missing more often than one
    that would have passed; the counted runs cannot tell, and the figures over them
    assume the loss is unrelated to the outcome. Here each case with counted runs
    gets its `asked` runs, the lost ones counted as failures for the lower bound and
    as passes for the upper; a case with no counted run (`unseen`) stays in the
    denominator at 0 and 1. Each bound's mean over cases gets its score interval, and
    the interval runs from the lower one's lower end to the upper one's upper end: it
    holds the truth at least `confidence` of the time whatever the loss depends on."""
    n, c = _counts(runs, passes)
    full = np.maximum(np.asarray(asked, dtype=np.int64).ravel(), n)
    filled = c + (full - n)
    zeros, ones = np.zeros(unseen), np.ones(unseen)
    cases = float(n.size + unseen)
    # the trials caps of the figures themselves (`case_rate_interval`, `case_mean_intervals`),
    # a case with no counted run as one run
    rate_trials = cases**2 / (float((1.0 / full).sum()) + unseen)
    j_trials = (float(full.sum()) + unseen) / j
    rate = _bounds(
        figures[0],
        np.concatenate([c / full, zeros]),
        np.concatenate([filled / full, ones]),
        rate_trials,
        confidence,
        LOSS_METHOD,
    )
    at_j, hat_j = _filled_bounds(
        (figures[1], figures[2]), full, c, filled, j, unseen, j_trials, confidence, LOSS_METHOD
    )
    return rate, at_j, hat_j


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
