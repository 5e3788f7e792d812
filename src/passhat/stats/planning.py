"""Planning: the runs per case and cases that bring an interval under a target
half-width, from the between- and within-case variance."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passhat.accounting import Accounting
from passhat.errors import MetricsError
from passhat.stats._base import (
    _check_confidence,
    _common_j,
    _counted_arrays,
    _counts,
    pass_hat_array,
)
from passhat.stats._numpy import np
from passhat.stats.distributions import _z, beta_moment
from passhat.stats.forecasts import _NO_SPREAD, _population

if TYPE_CHECKING:
    from passhat.stats._numpy import ArrayLike, Ints


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


def _planning_counts(
    runs: ArrayLike, passes: ArrayLike, target: float, confidence: float
) -> tuple[Ints, Ints]:
    """The counted runs and passes per case, once the arguments are checked and there
    are the two cases a plan needs (their spread is what it plans from)."""
    _check_confidence(confidence)
    _check_target(target)
    n, c = _counts(runs, passes)
    if n.size < 2:
        raise MetricsError(f"planning needs at least 2 cases with counted runs; have {n.size}")
    return n, c


def plan_pass_at_1(
    runs: ArrayLike, passes: ArrayLike, target: float, *, confidence: float = 0.95
) -> Plan:
    """Runs per case and cases for a pass@1 interval of half-width `target`.

    Within-case variance: the unbiased c(n - c) / (n(n - 1)) of p(1 - p), averaged
    over cases with 2+ runs; between-case variance: the spread of the case rates
    minus what the within-case noise explains (method of moments, at least 0).
    """
    n, c = _planning_counts(runs, passes, target, confidence)
    cases = n.size
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
    n, c = _planning_counts(runs, passes, target, confidence)
    cases = n.size
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
