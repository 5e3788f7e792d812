"""Forecasts of the next runs: a Beta posterior per case, and the expected share of
cases passing m in a row under a Beta population fitted across cases."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Unpack

from passhat.accounting import Accounting
from passhat.errors import MetricsError
from passhat.metrics import CASE_RATE_LABEL
from passhat.plain import plural
from passhat.stats._base import (
    JEFFREYS,
    UNIFORM,
    Resampling,
    _check_confidence,
    _check_m,
    _check_prior,
    _counted_arrays,
    _counts,
    _resampled,
    _unique_rows,
)
from passhat.stats._numpy import np
from passhat.stats.bootstrap import _bootstrap_ends, _case_record_draws, _expanded_tail
from passhat.stats.distributions import _beta_quantile_rows, _z, beta_moment
from passhat.stats.intervals import _binomial_floor, _case_rate_trials, score_interval

if TYPE_CHECKING:
    from passhat.stats._numpy import ArrayLike, Floats, Ints


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
    ends = _beta_ends(pairs.tolist(), alpha)
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
    check: str | None = None
    """The check of the Beta population against the runs, in words: not rejected,
    rejected (the interval widened), or not possible (the interval widened)."""

    @property
    def basis(self) -> str:
        """The prior the share uses, in words: the Beta fitted across cases, or the
        per-case prior when no population could be fitted. A per-case column beside it
        may use another prior (`--prior`): the share's row names its own."""
        return self.method.split(", cluster bootstrap")[0]


PRODUCT_TERMS = 1_000
"""Horizons up to this are forecast as a product of m terms; longer ones in closed form
(`beta_moment`): a product of 2**31 terms per resample took hours (`--forecast 2147483648`)."""


def _moment_products(a: Floats, b: Floats, m: int) -> Floats:
    """E[p^m] under Beta(a, b), elementwise, as prod_{i<m} (a + i) / (a + b + i)."""
    if m > PRODUCT_TERMS:
        return beta_moment(a, b, m)
    out = np.ones(np.broadcast_shapes(a.shape, b.shape))
    total = a + b  # `a + b + i` adds a + b first: the same bits, added once
    for i in range(m):
        out *= (a + i) / (total + i)
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


def _chi2_quantile(df: int, alpha: float) -> float:
    """The 1 - alpha quantile of chi-square with df degrees of freedom (Wilson-Hilferty)."""
    z = _z(1.0 - alpha)
    return df * (1.0 - 2.0 / (9.0 * df) + z * math.sqrt(2.0 / (9.0 * df))) ** 3


def _overdispersed(n: Ints, c: Ints, alpha: float) -> bool:
    """The cases differ more than their runs would if every case had the pooled rate: the
    dispersion statistic sum (c - n p)^2 / (n p (1 - p)) above the 1 - alpha quantile of
    chi-square with G - 1 degrees of freedom (Wilson-Hilferty)."""
    p = float(c.sum() / n.sum())
    if p in (0.0, 1.0):
        return False
    stat = float((((c - n * p) ** 2) / (n * p * (1.0 - p))).sum())
    return stat > _chi2_quantile(n.size - 1, alpha)


FEWEST_EXPECTED = 5.0
"""Pass counts are pooled (neighbours together) until each pool expects this many cases."""


def _beta_binomial(n: int, a: float, b: float) -> Floats:
    """P(c = j passes of n runs), j = 0..n, when p ~ Beta(a, b)."""
    lg = math.lgamma
    base = lg(n + 1.0) + lg(a + b) - lg(a) - lg(b) - lg(n + a + b)
    return np.array(
        [
            math.exp(base - lg(j + 1.0) - lg(n - j + 1.0) + lg(j + a) + lg(n - j + b))
            for j in range(n + 1)
        ]
    )


def _pooled(observed: Floats, expected: Floats) -> tuple[Floats, Floats]:
    """Neighbouring pass counts pooled until each pool expects FEWEST_EXPECTED cases."""
    obs: list[float] = []
    exp: list[float] = []
    o = e = 0.0
    for oj, ej in zip(observed.tolist(), expected.tolist(), strict=True):
        o, e = o + oj, e + ej
        if e >= FEWEST_EXPECTED:
            obs.append(o)
            exp.append(e)
            o = e = 0.0
    if obs:
        obs[-1] += o
        exp[-1] += e
    else:
        obs, exp = [o], [e]
    return np.array(obs), np.array(exp)


Check = Literal["fits", "rejected", "too few runs", "too few cases"]
"""What `beta_check` found: the share's interval is widened when the runs reject the
Beta population, or when no number of cases could check it (2 runs a case or fewer)."""


def beta_check(n: Ints, c: Ints, a: float, b: float, alpha: float) -> tuple[Check, str]:
    """Does the fitted Beta(a, b) population explain how many runs of each case passed?
    Pearson's chi-square of the beta-binomial counts against the cases' pass counts,
    per number of counted runs (neighbouring counts pooled to expect at least
    FEWEST_EXPECTED cases), with 2 degrees of freedom spent on the fit, at `alpha`.
    With 2 runs a case or fewer no degree of freedom is left however many cases there
    are (a beta-binomial fits any counts of 2 runs): "too few runs"; with more runs but
    too few cases to fill the pools: "too few cases". The reason comes in words."""
    stat = 0.0
    df = -2
    for size in sorted(set(n.tolist())):  # np.unique would load numpy.ma (8 ms of a report)
        at = n == size
        observed = np.bincount(c[at], minlength=size + 1).astype(np.float64)
        expected = _beta_binomial(size, a, b) * float(np.count_nonzero(at))
        obs, exp = _pooled(observed, expected)
        with np.errstate(divide="ignore", invalid="ignore"):
            stat += float(np.where(exp > 0, (obs - exp) ** 2 / exp, 0.0).sum())
        df += obs.size - 1
    most = int(n.max())
    if df < 1 and most <= 2:
        return "too few runs", (
            f"the Beta population cannot be checked with {plural(most, 'run')} a case "
            f"(a beta-binomial fits any counts of {plural(most, 'run')}: fitting it leaves "
            f"no degree of freedom)"
        )
    if df < 1:
        return "too few cases", (
            f"the Beta population is not checked: {plural(int(n.size), 'case')} are too few "
            f"to test it (pass counts pooled to expect {FEWEST_EXPECTED:g} cases each leave "
            f"no degree of freedom after the fit)"
        )
    limit = _chi2_quantile(df, alpha)
    if stat > limit:
        return "rejected", (
            f"the runs reject the Beta population (chi-square {stat:.3g} on {df} df, above "
            f"{limit:.3g} at {alpha:g})"
        )
    return "fits", (
        f"Beta population checked against the pass counts: chi-square {stat:.3g} on {df} "
        f"df, not rejected at {alpha:g}"
    )


def _unbiased_powers(rn: Floats, rc: Floats, j: int) -> Floats:
    """Per record, C(c, j) / C(n, j): unbiased for p^j given the case (n >= j)."""
    out = np.ones_like(rn)
    for i in range(j):
        out *= np.maximum(rc - i, 0.0) / (rn - i)
    return out


def moment_bounds(mu: Floats, m: int, top: int) -> tuple[Floats, Floats]:
    """Bounds on the mean of p^m over any population of p in [0, 1] whose moments
    E[p^j] are `mu` (columns j = 0..top, one row per resample), m > top: the two-moment
    extremes (mass at 0 and one point; mass at 1 and one point) of the measure
    p^(top - 2) dF / E[p^(top - 2)], whose first two moments are E[p^(top - 1)] and
    E[p^top] over E[p^(top - 2)] (a relaxation: valid, and exact at top = 2). With
    top = 1 only the mean is known: [mean^m, mean]."""
    if top == 1:
        mean = np.clip(mu[:, 1], 0.0, 1.0)
        return mean**m, mean
    scale = np.clip(mu[:, top - 2], 1e-300, 1.0)
    nu1 = np.clip(mu[:, top - 1] / scale, 0.0, 1.0)
    nu2 = np.clip(mu[:, top] / scale, nu1 * nu1, nu1)
    r = m - top + 2
    with np.errstate(divide="ignore", invalid="ignore"):
        at_zero = np.where(nu2 > 0, nu1 * nu1 / nu2 * (nu2 / np.maximum(nu1, 1e-300)) ** r, 0.0)
        y = np.where(nu1 < 1.0, (nu1 - nu2) / (1.0 - nu1), 1.0)
        inner = np.where(nu1 < 1.0, (1.0 - nu1) / np.maximum(1.0 - y, 1e-300), 0.0)
    at_one = (1.0 - inner) + inner * y**r
    low, high = np.minimum(at_zero, at_one), np.maximum(at_zero, at_one)
    return scale * low, scale * high


def _any_population(
    rn: Floats, rc: Floats, weights: Floats, cases: int, m: int, tail: float
) -> tuple[float, float, int]:
    """The share's interval whatever the population: the bounds `moment_bounds` gives
    from these cases' moments up to the fewest counted runs (each estimated without
    bias, C(c, j) / C(n, j)), their sampling error from the same case resamples (the
    low end's lower tail, the high end's upper); where m is within those moments, the
    share's own unbiased estimate and its percentile interval. Returns the moments used."""
    top = int(rn.min())
    if m <= top:
        shares = weights @ _unbiased_powers(rn, rc, m) / cases
        low, high = _bootstrap_ends(shares[1:], tail)
        return low, high, top
    mu = np.column_stack([weights @ _unbiased_powers(rn, rc, j) / cases for j in range(top + 1)])
    lows, highs = moment_bounds(mu, m, top)
    return _bootstrap_ends(lows[1:], tail)[0], _bootstrap_ends(highs[1:], tail)[1], top


_ENDS: dict[tuple[float, float, float], tuple[float, float]] = {}
"""`_beta_ends` memoised by (a, b, alpha): the same posteriors come back in every report
(and every replication of a simulation)."""
_ENDS_KEPT = 4096


def _beta_ends(pairs: list[list[float]], alpha: float) -> Floats:
    """Equal-tailed ends of each Beta(a, b) of `pairs`, one row each: the bits of
    `beta_quantile(a, b, [alpha / 2, 1 - alpha / 2])` (tests/test_stats_floats.py), the
    ones not yet known inverted together (`_beta_quantile_rows`)."""
    missing = [(a, b) for a, b in pairs if (a, b, alpha) not in _ENDS]
    if missing:
        shapes = np.asarray(missing, dtype=np.float64)
        a_ = np.repeat(shapes[:, :1], 2, axis=1)
        b_ = np.repeat(shapes[:, 1:], 2, axis=1)
        levels = np.empty_like(a_)
        levels[:, 0], levels[:, 1] = alpha / 2.0, 1.0 - alpha / 2.0
        ends = _beta_quantile_rows(a_, b_, levels).tolist()
        if len(_ENDS) + len(missing) > _ENDS_KEPT:
            _ENDS.clear()
        for (a, b), (low, high) in zip(missing, ends, strict=True):
            _ENDS[a, b, alpha] = (low, high)
    return np.asarray([_ENDS[a, b, alpha] for a, b in pairs], dtype=np.float64).reshape(-1, 2)


def share_forecast(
    runs: ArrayLike,
    passes: ArrayLike,
    m: int,
    *,
    prior: tuple[float, float] = JEFFREYS,
    prior_name: str | None = None,
    **resampling: Unpack[Resampling],
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
    resamples, confidence, seed = _resampled(resampling)
    alpha = 1.0 - confidence
    _check_m(m)
    _check_prior(prior)
    n, c = _counts(runs, passes)
    label = f"next {m} all pass"
    note = _share_note(n, c)
    if note is not None:
        first = beta_moment(c + prior[0], n - c + prior[1], m)
        method = f"{prior_name or _prior_name(prior)} prior, per case"
        return ShareForecast(label, float(first.mean()), None, None, confidence, method, note)
    cases = n.size
    records, counts, draws = _case_record_draws(n, c, resamples, seed)
    rn, rc = (records[:, i].astype(np.float64) for i in (0, 1))
    varied = int(n.min()) != int(n.max())
    if varied:  # each case weighs once (`_fit_case_sums`)
        rate = rc / rn
        columns = np.column_stack([rate, rate * rate, 1.0 / rn, 1.0 - 1.0 / rn])
    else:
        columns = np.column_stack([rn, rc, rn * rn, rc * rn, rc * rc, rn * (rn - 1.0)])
    weights = np.vstack([counts[None, :], draws])
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
    found, check = beta_check(n, c, float(a[0]), float(b[0]), alpha)
    if found in ("rejected", "too few runs"):  # any population's bounds
        any_low, any_high, top = _any_population(rn, rc, weights, cases, m, tail)
        low, high = min(low, any_low), max(high, any_high)
        method += (
            f"; widened to hold any population with these cases' first "
            f"{plural(top, 'moment')}: {check}"
        )
    return ShareForecast(
        label, estimate, min(low, estimate), max(high, estimate), confidence, method, None, check
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
    only: Collection[str] | None = None,
    **resampling: Unpack[Resampling],
) -> Forecast:
    """Forecast the next m runs of every case with a counted run (per case: of those in
    `only`, when given; the expected share always covers every case)."""
    n, c = _counted_arrays(accounting)
    beta_prior, name = _resolve_prior(prior, n, c)
    confidence = _resampled(resampling).confidence
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
        share=share_forecast(n, c, m, prior=beta_prior, prior_name=name, **resampling),
    )


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
