"""Paired comparison of B with A over the same cases: the sign-flip test, its inverted
interval, the minimum detectable difference and the verdict in words."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Unpack, get_args

from passhat.accounting import Accounting
from passhat.errors import InputError, MetricsError
from passhat.metrics import CASE_RATE_LABEL, RATE_LABEL, label_at, label_hat
from passhat.plain import plural
from passhat.stats._base import (
    Resampling,
    _blocks,
    _common_j,
    _counts,
    _few_records,
    _resampled,
    pass_at_array,
    pass_hat_array,
)
from passhat.stats._numpy import np
from passhat.stats.distributions import _t_quantile, _z, betainc
from passhat.stats.multiplicity import CASE_ALPHA, CORRECTIONS, Adjust, _check_adjust, case_tests

if TYPE_CHECKING:
    from passhat.stats._numpy import ArrayLike, Floats


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
    if _few_records(records.shape[0], cases):
        swapped = rng.binomial(counts, 0.5, size=(resamples, counts.size))
        yield np.asarray(swapped @ records, dtype=np.float64)
        return
    for r in _blocks(cases, resamples):
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
    power: float = 0.8,
    **resampling: Unpack[Resampling],
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
    resamples, confidence, seed = _resampled(resampling)
    alpha = 1.0 - confidence
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
            method = FLOOR_METHOD
        elif i == 0 and varied:
            # different runs per case: a case's difference is not symmetric under "no
            # difference" (its two rates differ in spread), so the flips alone run a
            # little hot
            method = CASE_RATE_METHOD
        if method != FLIP_METHOD:  # the paired t test on the same SE must agree
            t = _t_quantile(cases - 1, alpha)
            low = min(low, max(-1.0, b - a - t * ses[i]))
            high = max(high, min(1.0, b - a + t * ses[i]))
            p = max(p, _t_sf2(abs(b - a) / ses[i], cases - 1))
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
    power: float = 0.8,
    **resampling: Unpack[Resampling],
) -> tuple[tuple[Difference, Difference, Difference], Verdict]:
    """The three paired differences and the verdict on `metric`, from paired arrays."""
    if metric not in METRICS:
        raise MetricsError(f"metric is {metric!r}; use one of {', '.join(METRICS)}")
    diffs = paired_differences(runs_a, passes_a, runs_b, passes_b, power=power, **resampling)
    chosen = diffs[METRICS.index(metric)]
    na, ca = (np.asarray(x, dtype=np.float64).ravel() for x in (runs_a, passes_a))
    nb, cb = (np.asarray(x, dtype=np.float64).ravel() for x in (runs_b, passes_b))
    runs_needed = None
    if metric == "pass@1" and chosen.difference != 0:
        factor = _z(0.5 + chosen.confidence / 2.0) + _z(power)
        runs_needed = _runs_for_difference(na, ca, nb, cb, abs(chosen.difference), factor)
    runs_now = float(np.concatenate([na, nb]).mean())
    return diffs, _verdict(chosen, na.size, runs_needed, runs_now)


def compare(
    a: Accounting,
    b: Accounting,
    *,
    metric: Metric = "pass@1",
    power: float = 0.8,
    notes: Sequence[str] = (),
    adjust: Adjust = "bh",
    **resampling: Unpack[Resampling],
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
        runs_a, passes_a, runs_b, passes_b, metric=metric, power=power, **resampling
    )
    drawn = _resampled(resampling)  # checked by compare_counts; kept on the record
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
        resamples=drawn.resamples,
        seed=drawn.seed,
        notes=tuple(notes),
        adjust=adjust,
    )
