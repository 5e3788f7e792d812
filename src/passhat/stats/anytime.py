"""Anytime-valid adaptive k (`--spending anytime`): a betting confidence sequence
(Waudby-Smith & Ramdas 2023, JRSS-B) over each round's *increment* of per-case
results, so the rounds may look after every round and stop whenever they like.

What the sequence is over. Rounds add runs to the same cases; no new case arrives.
Round j gives every case i (with a counted run in that round) the pass share y_ij of
the runs that round added. Given the cases (their true pass rates p_i), the rounds'
runs are independent of one another, so y_ij has mean p_i whatever earlier rounds
showed. The target is the mean of these cases' p_i, each case once: the pass rate the
report headlines when k differs between cases, for *these* cases (not a population
of cases they were drawn from).

Why it is valid. For a bet lambda fixed before the data (one per component of a
mixture), the capital after a round is prod_i (1 + lambda (y_ij - m)). Its mean,
given the past, is prod_i (1 + lambda (p_i - m)) <= (1 + lambda (mean p - m))^N by
the AM-GM inequality (every factor is positive), which is 1 at m = mean p. So the
capital, and any average of such capitals, is a nonnegative supermartingale over the
rounds at the true m, and by Ville's inequality it ever reaches 1 / alpha with
probability at most alpha: the set of m whose capital stays below 1 / alpha holds
the truth at every round at once, so at whatever round the rule stops. The mixture
is over both signs and a fixed grid of bet sizes (no tuning from the data).

For `--until-decided` the baseline A is re-run alongside B in every round by default
(`paired_sequence`): the observations are the per-case, per-round differences
y_B - y_A, whose mean given the cases is p_B - p_A, and one sequence at the full alpha
holds mean p_B - mean p_A. Where A cannot be re-run (imported, or
`--no-rerun-baseline`), the observations are y_ij - a_i, a_i being A's pass share of
case i (A's runs are fixed before B's first run), and the sequence holds
mean p_B - mean a; what A's own runs leave uncertain, mean a - mean p_A, is bounded
once by Hoeffding's inequality over A's counted runs. Each part spends alpha / 2.

Pure functions; numpy only, imported on first use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from passhat.stats._numpy import np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from passhat.stats._numpy import ArrayLike

BETS: tuple[float, ...] = tuple(0.8 * 0.7**g for g in range(16))
"""Bet sizes of the mixture, as a share of 1 / (range of the observations): from 0.8
(the capital can lose at most 80 % a step) to about 0.004."""

GRID = 2001
"""Points of m tried across the observations' range; bounds are rounded outward."""


@dataclass(frozen=True)
class Band:
    """A confidence sequence's interval at one round."""

    low: float
    high: float
    observations: int
    """Per-case round results it rests on."""


def increments(
    history: Sequence[tuple[ArrayLike, ArrayLike]],
) -> list[tuple[NDArray[Any], NDArray[Any]]]:
    """Each round's added counted runs and passes per case, from the cumulative
    (counted, passes) per case at each look (cases in the same order every look)."""
    out = []
    before_n: NDArray[Any] | None = None
    before_c: NDArray[Any] | None = None
    for runs, passes in history:
        n = np.asarray(runs, dtype=np.int64)
        c = np.asarray(passes, dtype=np.int64)
        if before_n is None or before_c is None:
            out.append((n, c))
        else:
            out.append((n - before_n, c - before_c))
        before_n, before_c = n, c
    return out


def round_shares(
    history: Sequence[tuple[ArrayLike, ArrayLike]], centre: ArrayLike | None = None
) -> NDArray[Any]:
    """Every (round, case) pass share of the round's own runs, minus `centre` (A's
    per-case share) when given; cases with no counted run in a round give nothing."""
    parts = []
    for n, c in increments(history):
        has = n > 0
        share = np.where(has, c / np.maximum(n, 1), 0.0)
        if centre is not None:
            share = share - np.asarray(centre, dtype=float)
        parts.append(share[has])
    return np.concatenate(parts) if parts else np.zeros(0)


def betting_sequence(values: ArrayLike, lo: float, hi: float, alpha: float) -> Band:
    """The interval of m in [lo, hi] whose mixture capital stays below 1 / alpha, over
    `values` (each in [lo, hi]). Conservative by one grid step on each side."""
    x = np.clip(np.asarray(values, dtype=float).ravel(), lo, hi)
    span = hi - lo
    if x.size == 0:
        return Band(lo, hi, 0)
    distinct, counts = np.unique(x, return_counts=True)
    m = np.linspace(lo, hi, GRID)
    bets = np.asarray(BETS) / span
    lam = np.concatenate([bets, -bets])  # both signs: a two-sided sequence
    # log capital of each component at each m: sum over values of count * log(1 + lam (x - m))
    gap = distinct[None, :] - m[:, None]  # (m, values)
    logs = np.log1p(lam[:, None, None] * gap[None, :, :]) @ counts.astype(float)  # (lam, m)
    top = logs.max(axis=0)
    log_capital = top + np.log(np.exp(logs - top).mean(axis=0))  # no overflow at any n
    keep = np.flatnonzero(log_capital < math.log(1.0 / alpha))
    step = span / (GRID - 1)
    if keep.size == 0:  # cannot happen at the sample mean; stay safe
        centre = float(x.mean())
        return Band(centre - step, centre + step, int(x.size))
    low = max(lo, float(m[keep[0]]) - step)
    high = min(hi, float(m[keep[-1]]) + step)
    return Band(low, high, int(x.size))


def hoeffding(runs: ArrayLike, alpha: float) -> float:
    """Half-width t with P(|mean a - mean p| >= t) <= alpha, a_i being case i's pass
    share of its n_i counted runs (independent Bernoulli runs given p_i): Hoeffding
    over the runs, each weighing 1 / (N n_i)."""
    n = np.asarray(runs, dtype=float)
    n = n[n > 0]
    if n.size == 0:
        return math.inf
    return math.sqrt(math.log(2.0 / alpha) * float((1.0 / n).sum()) / (2.0 * n.size**2))


def pass_rate_sequence(
    history: Sequence[tuple[ArrayLike, ArrayLike]], alpha: float
) -> tuple[float, Band]:
    """The mean of per-case pass rates now, and the sequence's interval for the mean
    of these cases' true pass rates (`--until-width`)."""
    n, c = (np.asarray(v, dtype=np.int64) for v in history[-1])
    has = n > 0
    estimate = float((c[has] / n[has]).mean()) if has.any() else math.nan
    return estimate, betting_sequence(round_shares(history), 0.0, 1.0, alpha)


def difference_sequence(
    base: tuple[ArrayLike, ArrayLike],
    history: Sequence[tuple[ArrayLike, ArrayLike]],
    alpha: float,
) -> tuple[float, float, float]:
    """B - A in the mean of per-case pass rates (cases counted on A), and an interval
    for the true difference valid at every round: the sequence for mean p_B - mean a
    at alpha / 2, widened by Hoeffding's bound on A's own error at alpha / 2."""
    na = np.asarray(base[0], dtype=np.int64)
    ca = np.asarray(base[1], dtype=np.int64)
    on_a = na > 0
    a = np.where(on_a, ca / np.maximum(na, 1), 0.0)
    trimmed = [(np.asarray(n)[on_a], np.asarray(c)[on_a]) for n, c in history]
    seq = betting_sequence(round_shares(trimmed, a[on_a]), -1.0, 1.0, alpha / 2.0)
    t = hoeffding(na[on_a], alpha / 2.0)
    n, c = trimmed[-1]
    both = n > 0
    estimate = float((c[both] / n[both] - a[on_a][both]).mean()) if both.any() else math.nan
    return estimate, max(-1.0, seq.low - t), min(1.0, seq.high + t)


def best_case_low(base_runs: ArrayLike, rounds: int, alpha: float) -> float:
    """The interval's low end if B passed every run and A failed every one, after
    `rounds` rounds: above 0 only if some data could ever decide."""
    na = np.asarray(base_runs, dtype=np.int64)
    na = na[na > 0]
    if na.size == 0:
        return -1.0
    seq = betting_sequence(np.ones(na.size * rounds), -1.0, 1.0, alpha / 2.0)
    return seq.low - hoeffding(na, alpha / 2.0)


def best_paired_low(cases: int, rounds: int, alpha: float) -> float:
    """`best_case_low` when the baseline is re-run alongside B (`paired_sequence`): every
    per-round difference +1 over `cases` cases and `rounds` rounds, at the full alpha."""
    if cases < 1:
        return -1.0
    return betting_sequence(np.ones(cases * rounds), -1.0, 1.0, alpha).low


def fewest_cases(
    runs_per_case: int, rounds: int, alpha: float, most: int = 4096, *, rerun: bool = False
) -> int | None:
    """The fewest cases (each with `runs_per_case` baseline runs) with which the best
    data could decide within `rounds` rounds (the baseline re-run alongside B with
    `rerun`); None if not even `most` would."""
    cases = 2
    while cases <= most:
        if rerun:
            low = best_paired_low(cases, rounds, alpha)
        else:
            low = best_case_low(np.full(cases, runs_per_case), rounds, alpha)
        if low > 0:
            return cases
        cases = cases + 1 if cases < 64 else cases * 2
    return None


def halving_runs(base_runs: ArrayLike) -> int:
    """More baseline runs that would halve `hoeffding`'s term for a fixed baseline: it
    goes as the root of sum(1 / n_i), so four times each case's counted runs (three
    times as many again) halves it."""
    n = np.asarray(base_runs, dtype=np.int64)
    return 3 * int(n[n > 0].sum())


def paired_sequence(
    history_a: Sequence[tuple[ArrayLike, ArrayLike]],
    history_b: Sequence[tuple[ArrayLike, ArrayLike]],
    alpha: float,
) -> tuple[float, float, float]:
    """B - A in the mean of per-case pass rates when the baseline is re-run alongside B
    in every round (the same looks on both sides): per round and case with runs on both
    sides, the difference of the round's pass shares y_B - y_A, whose mean given the
    cases is p_B - p_A; one betting sequence over them at the full alpha (AM-GM and
    Ville, as for one side), with no term for a fixed baseline's own error: re-running A
    removes `hoeffding`'s penalty, which no inequality on a fixed 3-run baseline can."""
    parts = []
    for (na, ca), (nb, cb) in zip(increments(history_a), increments(history_b), strict=True):
        both = (na > 0) & (nb > 0)
        parts.append(cb[both] / nb[both] - ca[both] / na[both])
    values = np.concatenate(parts) if parts else np.zeros(0)
    seq = betting_sequence(values, -1.0, 1.0, alpha)
    na, ca = (np.asarray(v, dtype=np.int64) for v in history_a[-1])
    nb, cb = (np.asarray(v, dtype=np.int64) for v in history_b[-1])
    both = (na > 0) & (nb > 0)
    estimate = float((cb[both] / nb[both] - ca[both] / na[both]).mean()) if both.any() else math.nan
    return estimate, seq.low, seq.high
