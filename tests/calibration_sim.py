"""Simulated experiments with a known truth, run through `passhat.stats.uncertainty`.

Shared by tests/test_calibration.py (a documented subset, small replication
counts) and benchmarks/bench_calibration.py (the whole grid, printing the table
in docs/numbers.md). Cases draw their success probability p from Beta(a, b); each
case is asked for k runs; with `errors`, each run errors (no verdict) with that
probability, at random. Every 95 % interval passhat reports is checked against
the truth it claims to cover:

- the headline pass rate (both methods): E[p], the population's pass rate (over runs
  when every case counted the same runs, the mean of per-case rates when not);
- pass@j / pass^j at the dataset's j: 1 - E[(1-p)^j] and E[p^j];
- pass@k / pass^k over the cases that reached k, when shown: the same at k;
- per case, the Wilson interval of the rate: that case's p;
- per case, the credible interval of P(next m all pass): that case's p^m;
- the dataset forecast (expected share of these cases whose next m runs all
  pass): the mean of p^m over these cases, when an interval is shown;
- the bounds whatever the runs not counted hide (`loss_bounds`), when runs were lost:
  the headline's, pass@j's and pass^j's truths, over every case asked.

With `failing`, the loss depends on the outcome itself: a run that would fail is lost
(errored or missing: the same to the figures) with probability `errors`, and no figure
over counted runs can find the truth; only the bounds are judged there. The bias of the
headline and of the point figure at k (estimate minus truth, averaged) is tallied.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from passhat.accounting import Accounting, CaseAccount
from passhat.stats import (
    compare_counts,
    dataset_intervals_counts,
    forecast_counts,
    share_forecast,
    wilson,
)

FIGURES = (
    "pass rate, SE",
    "pass rate, bootstrap",
    "pass@j",
    "pass^j",
    "pass@k reached",
    "pass^k reached",
    "case rate",
    "case forecast",
    "dataset forecast",
    "pass rate, bounds",
    "pass@j, bounds",
    "pass^j, bounds",
)
"""Every interval checked, in table order."""
BOUNDS = FIGURES[-3:]
"""The bounds whatever the runs not counted hide: shown only where a run was lost."""
BIASED = ("pass rate, SE", "pass@k reached", "pass^k reached")
"""Point figures whose bias (estimate - truth) is tallied."""
BESIDE = ("rate over runs",)
"""Shown beside the headline but not headlined, so tallied and not judged: the pass rate
over runs when cases counted different runs (informative errors bias it)."""


@dataclass(frozen=True)
class Cell:
    """One setting of the grid.

    `dist` is how cases draw p: "beta" (Beta(a, b)), "point" (every case at p = a),
    "halves" (half the cases at 0, half at 1, in random order) or "two" (p = b with
    probability `mix`, else a). `informative` errors
    fall on hard cases: a run errors with probability errors * (1 - p) / E[1 - p] (a
    flaky sandbox on hard tasks), so the share errored is still `errors`. `k_short` > 0
    asks every other case for k_short runs instead of k (unequal k, as after an adaptive
    run; the requested k of the at-k figures is then k_short, the fewest asked)."""

    a: float
    b: float
    cases: int
    k: int
    errors: float
    dist: str = "beta"
    informative: bool = False
    k_short: int = 0
    mix: float = 0.5
    failing: bool = False

    @property
    def name(self) -> str:
        kind = "informative " if self.informative else ""
        err = f", {self.errors:.0%} {kind}errored" if self.errors else ""
        if self.failing:
            err = f", failing runs lost {self.errors:.0%}"
        ks = f"{self.k_short}/{self.k}" if self.k_short else f"{self.k}"
        if self.dist == "point":
            return f"p={self.a:g} N={self.cases} k={ks}{err}"
        if self.dist == "halves":
            return f"half 0, half 1 N={self.cases} k={ks}{err}"
        if self.dist == "two":
            return f"p={self.a:g}/{self.b:g} {1 - self.mix:.0%}/{self.mix:.0%} N={self.cases} k={ks}{err}"
        return f"Beta({self.a:g},{self.b:g}) N={self.cases} k={ks}{err}"

    @property
    def k_requested(self) -> int:
        """The k the at-k figures are labelled with: the fewest runs asked of a case."""
        return self.k_short or self.k

    def moment(self, m: int) -> float:
        """E[p^m] over the population of cases."""
        if self.dist == "point":
            return float(self.a**m)
        if self.dist == "halves":
            return 0.5
        if self.dist == "two":
            return float((1.0 - self.mix) * self.a**m + self.mix * self.b**m)
        return beta_moment(self.a, self.b, m)

    def moment_fail(self, m: int) -> float:
        """E[(1 - p)^m] over the population of cases."""
        if self.dist == "point":
            return float((1.0 - self.a) ** m)
        if self.dist == "halves":
            return 0.5
        if self.dist == "two":
            return float((1.0 - self.mix) * (1.0 - self.a) ** m + self.mix * (1.0 - self.b) ** m)
        return beta_moment(self.b, self.a, m)


GRID = tuple(
    Cell(a, b, n, k, e)
    for a, b in ((0.5, 0.5), (2.0, 2.0))
    for n in (20, 100, 500)
    for k in (3, 5, 10)
    for e in (0.0, 0.2)
)
"""The grid of issue 13, in table order: 36 cells."""

HARD_GRID = tuple(
    [Cell(2.0, 2.0, n, 5, 0.2, informative=True) for n in (5, 20, 200)]
    + [Cell(0.1, 0.1, n, 3, 0.2, informative=True) for n in (5, 20)]
    + [Cell(0.1, 0.1, n, 5, 0.0) for n in (5, 20)]
    + [Cell(0.5, 0.0, n, 5, 0.0, dist="point") for n in (5, 20)]
    + [Cell(0.9, 0.0, n, 3, 0.2, dist="point") for n in (5, 20)]
    + [Cell(0.0, 0.0, n, 3, 0.0, dist="halves") for n in (5, 20)]
    + [Cell(0.1, 0.1, n, 10, 0.0, k_short=2) for n in (5, 20)]
    + [Cell(2.0, 2.0, n, 10, 0.2, informative=True, k_short=3) for n in (5, 20)]
)
"""The designs of issue 24, where errors fall on hard cases or samples are small:
informative errors at 20 % (P(error) proportional to 1 - p), Beta(0.1, 0.1) (cases near
0 or 1), a point mass (every case alike), half the cases at 0 and half at 1, and unequal
k (every other case asked fewer runs, as an adaptive run leaves them), at 5 and 20 cases
(200 for the review's own setting; 2,000 in benchmarks/bench_calibration.py)."""


LOSS_GRID = (
    Cell(2.0, 2.0, 100, 5, 0.3, failing=True),
    Cell(0.5, 0.5, 100, 3, 0.3, failing=True),
    Cell(2.0, 2.0, 100, 5, 0.4, informative=True),
    Cell(0.0, 1.0, 50, 3, 0.0, dist="two", mix=0.9),
    Cell(0.0, 1.0, 100, 5, 0.0, dist="two", mix=0.95),
    Cell(0.9, 0.1, 30, 3, 0.0),
    Cell(0.3, 0.95, 1000, 2, 0.0, dist="two", mix=0.5),
)
"""The designs of issue 33: failing runs lost (errored or missing) 30 % of the time, 40 %
informative errors (2,000 cases in benchmarks/bench_calibration.py --hard), p in {0, 1}
at 90/10 and 95/5, Beta(0.9, 0.1), and 1,000 cases at p 0.3 or 0.95 with 2 runs each
(no Beta population: the share forecast's model cannot be checked there)."""


FLOOR = 0.93
"""What every judged figure must cover in every cell (issue 13)."""
MIN_SHOWN = 300
"""A figure shown in fewer experiments of a cell is not judged there at R = 2,000 (pass@k
over the cases that reached k, with N = 20 and k = 10: 2 cases or fewer often reach it)."""
HEADLINED = ("pass rate, SE", "pass@j", "pass^j")
DATASET_FIGURES = (*FIGURES[:6], *BOUNDS, "dataset forecast")
"""The dataset intervals and bounds passhat headlines, and the dataset forecast."""


def judged(cell: Cell) -> tuple[str, ...]:
    """The figures whose coverage a cell's design claims: every figure in issue 13's grid;
    where the loss depends on the outcome (failing runs lost, or 40 % of runs errored on
    hard cases) only the bounds and the figures at k, which no figure over counted runs
    can replace; where every run is counted in issue 33's designs the headlined ones; in
    issue 24's designs every dataset figure (the per-case forecast's Jeffreys interval
    misses cases at exactly 0 or 1, as it must: tallied, not judged)."""
    if cell in GRID:
        return FIGURES
    if cell.failing or (cell.informative and cell.errors > 0.2):
        return (*BOUNDS, "pass@k reached", "pass^k reached")
    if cell in LOSS_GRID:
        return (*HEADLINED, "dataset forecast")
    return DATASET_FIGURES


@dataclass
class Tally:
    """Hits and trials per figure; `shown` counts replications where the figure had an
    interval at all (pass@k reached and the dataset forecast are not always shown)."""

    hits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIGURES + BESIDE, 0))
    trials: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIGURES + BESIDE, 0))
    replications: int = 0
    bias: dict[str, float] = field(default_factory=lambda: dict.fromkeys(BIASED, 0.0))
    """Sum of estimate - truth over the experiments where the figure was shown."""
    shrunk: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIGURES + BESIDE, 0))
    """Hits of each interval broken on purpose: both ends moved `SHRUNK` of the way toward
    the estimate: the tests must find that break short (their experiments are enough)."""

    def add(self, figure: str, iv: Any, truth: float) -> None:
        """One interval against its truth, as `_inside` and `_shrink` judge arrays, in
        Python floats (the same IEEE operations): numpy's scalar layers were a twentieth
        of a simulated experiment."""
        low, estimate, high = float(iv.low), float(iv.estimate), float(iv.high)
        self.hits[figure] += low - 1e-12 <= truth <= high + 1e-12
        low, high = _shrink(low, estimate, high)
        self.shrunk[figure] += low - 1e-12 <= truth <= high + 1e-12
        self.trials[figure] += 1

    def coverage(self, figure: str) -> float | None:
        n = self.trials[figure]
        return self.hits[figure] / n if n else None

    def mean_bias(self, figure: str) -> float | None:
        n = self.trials[figure]
        return self.bias[figure] / n if n else None

    def short(
        self,
        figures: Sequence[str],
        floor: Callable[[int], float] = lambda _: FLOOR,
        shown: int = MIN_SHOWN,
        *,
        broken: bool = False,
    ) -> list[str]:
        """The figures shown in at least `shown` experiments that cover under their floor
        (`floor` of the number of trials); `broken`: those of the intervals shrunk on
        purpose (`shrunk`), which a test with enough experiments must find short."""
        hits = self.shrunk if broken else self.hits
        return [
            f"{f}: {hits[f] / n:.1%} of {n}"
            for f in figures
            if (n := self.trials[f]) >= shown and hits[f] / n < floor(n)
        ]

    def merge(self, other: Tally) -> None:
        for f in FIGURES + BESIDE:
            self.hits[f] += other.hits[f]
            self.shrunk[f] += other.shrunk[f]
            self.trials[f] += other.trials[f]
        for f in BIASED:
            self.bias[f] += other.bias[f]
        self.replications += other.replications


def beta_moment(a: float, b: float, m: int) -> float:
    """E[p^m] for p ~ Beta(a, b), written out here independently of passhat."""
    return math.exp(
        math.lgamma(a + m) - math.lgamma(a) + math.lgamma(a + b) - math.lgamma(a + b + m)
    )


def accounting(k: int, counted: np.ndarray, passes: np.ndarray) -> Accounting:
    """One simulated experiment as the report sees it (errored runs after the counted)."""
    return Accounting(
        k,
        tuple(
            CaseAccount(
                case=f"c{i}",
                k_requested=k,
                completed=k,
                counted=n,
                passes=c,
                errored=tuple(range(n + 1, k + 1)),
                missing=(),
            )
            for i, (n, c) in enumerate(zip(counted.tolist(), passes.tolist(), strict=True))
        ),
    )


def _inside(low: np.ndarray | float, value: np.ndarray | float, high: np.ndarray | float) -> Any:
    return (np.asarray(low) - 1e-12 <= value) & (np.asarray(value) <= np.asarray(high) + 1e-12)


SHRUNK = 0.2
"""How far the broken interval's ends move toward the estimate (`Tally.shrunk`)."""


def _shrink(low: Any, estimate: Any, high: Any) -> tuple[Any, Any]:
    """The interval (low, high) with both ends moved `SHRUNK` of the way to the estimate."""
    return low + SHRUNK * (estimate - low), high - SHRUNK * (high - estimate)


@dataclass(frozen=True)
class Draws:
    """R simulated experiments of one cell: per-case truth, counted runs and passes."""

    p: np.ndarray
    counted: np.ndarray
    passes: np.ndarray
    asked: np.ndarray


def draw(cell: Cell, replications: int, seed: int) -> Draws:
    """All experiments of a cell at once, shape (replications, cases)."""
    rng = np.random.default_rng(seed)
    shape = (replications, cell.cases)
    if cell.dist == "point":
        p = np.full(shape, cell.a)
    elif cell.dist == "halves":
        p = rng.permuted(np.tile(np.arange(cell.cases) % 2, (replications, 1)), axis=1)
        p = p.astype(np.float64)
    elif cell.dist == "two":
        p = np.where(rng.random(shape) < cell.mix, cell.b, cell.a)
    else:
        p = rng.beta(cell.a, cell.b, shape)
    asked = np.full(shape, cell.k, dtype=np.int64)
    if cell.k_short:
        asked[:, ::2] = cell.k_short
    if cell.failing:  # every run drawn, then failing ones lost
        passes = rng.binomial(asked, p)
        counted = asked - rng.binomial(asked - passes, cell.errors)
        return Draws(p, counted, passes, asked)
    error = np.full(shape, cell.errors)
    if cell.informative:
        error = cell.errors * (1.0 - p) / (1.0 - cell.moment(1))
    counted = rng.binomial(asked, 1.0 - error) if cell.errors else asked
    return Draws(p, counted, rng.binomial(counted, p), asked)


def simulate(
    cell: Cell, replications: int, seed: int, *, resamples: int = 200, m: int = 10
) -> Tally:
    """Coverage of every reported 95 % interval over `replications` simulated experiments.

    The figures go through the array-level functions `passhat.stats.uncertainty` is
    built from (`dataset_intervals_counts`, `share_forecast`, and `wilson` /
    `forecast_counts` for every case of every experiment in one call), with the
    seed `uncertainty(..., seed=rep)` would use; tests/test_calibration.py checks
    that one experiment gives the same intervals both ways. B = `resamples` inside
    the loop (the default is 2,000): bootstrap ends from fewer resamples are
    noisier, which can only cost coverage.
    """
    x = draw(cell, replications, seed)
    tally = Tally()
    k = cell.k_requested
    mean = cell.moment(1)
    truths = {
        "pass@k reached": 1.0 - cell.moment_fail(k),
        "pass^k reached": cell.moment(k),
    }
    kept = np.count_nonzero(x.counted, axis=1) >= 2
    for rep in np.flatnonzero(kept).tolist():
        seen = x.counted[rep] > 0
        n, c = x.counted[rep][seen], x.passes[rep][seen]
        unseen = cell.cases - int(np.count_nonzero(seen))
        asked = x.asked[rep][seen]
        d = dataset_intervals_counts(
            n, c, k, resamples=resamples, seed=rep, unseen=unseen, asked=asked
        )
        tally.replications += 1
        tally.add("pass rate, SE", d.pass_at_1, mean)
        tally.bias["pass rate, SE"] += d.pass_at_1.estimate - mean
        boot = d.pass_at_1_bootstrap
        tally.add("pass rate, bootstrap", boot, mean)
        if d.over_runs is not None:
            runs = d.over_runs
            tally.add("rate over runs", runs, mean)
        at_j, hat_j = 1.0 - cell.moment_fail(d.j), cell.moment(d.j)
        tally.add("pass@j", d.pass_at_j, at_j)
        tally.add("pass^j", d.pass_hat_j, hat_j)
        if d.bounds is not None:
            for figure, iv, truth in zip(BOUNDS, d.bounds, (mean, at_j, hat_j), strict=True):
                tally.add(figure, iv, truth)
        if d.at_requested is not None:
            for figure, iv in zip(
                ("pass@k reached", "pass^k reached"), d.at_requested, strict=True
            ):
                tally.add(figure, iv, truths[figure])
                tally.bias[figure] += iv.estimate - truths[figure]
        share = share_forecast(n, c, m, resamples=resamples, seed=rep)
        if share.low is not None and share.high is not None:
            target = float(np.mean(x.p[rep][seen] ** m))
            tally.add("dataset forecast", share, target)
    seen = x.counted[kept] > 0
    n, c, p = x.counted[kept][seen], x.passes[kept][seen], x.p[kept][seen]
    low, high = wilson(c, n)
    expected, f_low, f_high = forecast_counts(n, c, m)
    for figure, ends, estimate, truth in (
        ("case rate", (low, high), c / n, p),
        ("case forecast", (f_low, f_high), expected, p**m),
    ):
        hits = _inside(ends[0], truth, ends[1])
        tally.hits[figure] += int(np.count_nonzero(hits))
        tally.trials[figure] += int(hits.size)
        shrunk = _shrink(ends[0], estimate, ends[1])
        tally.shrunk[figure] += int(np.count_nonzero(_inside(shrunk[0], truth, shrunk[1])))
    return tally


def simulate_grid(
    cells: Sequence[Cell],
    replications: int | Sequence[int],
    seeds: Sequence[int],
    *,
    resamples: int = 200,
    workers: int = 2,
) -> list[Tally]:
    """`simulate` every cell (cell i from seeds[i], replications[i] times when a sequence
    is given) on up to `workers` processes. The cells are independent and each draws from
    its own seed, so the result does not depend on how they were spread; the costliest go
    first (a replication costs a fixed part and a part per case and run), so the last to
    finish are short."""
    reps = [replications] * len(cells) if isinstance(replications, int) else list(replications)
    workers = max(1, min(workers, os.cpu_count() or 1))
    order = sorted(range(len(cells)), key=lambda i: -reps[i] * (200 + cells[i].cases * cells[i].k))
    if workers == 1:
        done = {i: simulate(cells[i], reps[i], seeds[i], resamples=resamples) for i in order}
        return [done[i] for i in range(len(cells))]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {
            i: pool.submit(simulate, cells[i], reps[i], seeds[i], resamples=resamples)
            for i in order
        }
        return [futures[i].result() for i in range(len(cells))]


def aa_rate(k_a: int, k_b: int, runs: int, seed: int) -> float:
    """Share of A/A comparisons (100 cases, Beta(0.5, 0.5)) declared different."""
    rng = np.random.default_rng(seed)
    declared = 0
    for e in range(runs):
        p = rng.beta(0.5, 0.5, 100)
        na, nb = np.full(100, k_a), np.full(100, k_b)
        _, verdict = compare_counts(
            na, rng.binomial(na, p), nb, rng.binomial(nb, p), resamples=200, seed=e
        )
        declared += verdict.outcome != "none"
    return declared / runs
