"""Simulated experiments with a known truth, run through `passhat.stats.uncertainty`.

Shared by tests/test_calibration.py (a documented subset, small replication
counts) and benchmarks/bench_calibration.py (the whole grid, printing the table
in docs/numbers.md). Cases draw their success probability p from Beta(a, b); each
case is asked for k runs; with `errors`, each run errors (no verdict) with that
probability, at random. Every 95 % interval passhat reports is checked against
the truth it claims to cover:

- pass rate over runs (both methods): E[p], the population's pass rate;
- pass@j / pass^j at the dataset's j: 1 - E[(1-p)^j] and E[p^j];
- pass@k / pass^k over the cases that reached k, when shown: the same at k;
- per case, the Wilson interval of the rate: that case's p;
- per case, the credible interval of P(next m all pass): that case's p^m;
- the dataset forecast (expected share of these cases whose next m runs all
  pass): the mean of p^m over these cases, when an interval is shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from passhat.accounting import Accounting, CaseAccount
from passhat.stats import compare_counts, uncertainty

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
)
"""Every interval checked, in table order."""


@dataclass(frozen=True)
class Cell:
    """One setting of the grid."""

    a: float
    b: float
    cases: int
    k: int
    errors: float

    @property
    def name(self) -> str:
        err = f", {self.errors:.0%} errored" if self.errors else ""
        return f"Beta({self.a:g},{self.b:g}) N={self.cases} k={self.k}{err}"


@dataclass
class Tally:
    """Hits and trials per figure; `shown` counts replications where the figure had an
    interval at all (pass@k reached and the dataset forecast are not always shown)."""

    hits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIGURES, 0))
    trials: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIGURES, 0))
    replications: int = 0

    def add(self, figure: str, covered: bool) -> None:
        self.hits[figure] += int(covered)
        self.trials[figure] += 1

    def coverage(self, figure: str) -> float | None:
        n = self.trials[figure]
        return self.hits[figure] / n if n else None

    def merge(self, other: Tally) -> None:
        for f in FIGURES:
            self.hits[f] += other.hits[f]
            self.trials[f] += other.trials[f]
        self.replications += other.replications


def beta_moment(a: float, b: float, m: int) -> float:
    """E[p^m] for p ~ Beta(a, b), written out here independently of passhat."""
    return math.exp(
        math.lgamma(a + m) - math.lgamma(a) + math.lgamma(a + b) - math.lgamma(a + b + m)
    )


def _accounting(k: int, counted: np.ndarray, passes: np.ndarray) -> Accounting:
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


def _inside(low: float, value: float, high: float) -> bool:
    return low - 1e-12 <= value <= high + 1e-12


def simulate(
    cell: Cell, replications: int, seed: int, *, resamples: int = 200, m: int = 10
) -> Tally:
    """Coverage of every reported 95 % interval over `replications` simulated experiments.

    B = `resamples` inside the loop (the default is 2,000): bootstrap ends from fewer
    resamples are noisier, which can only cost coverage.
    """
    rng = np.random.default_rng(seed)
    tally = Tally()
    a, b, k = cell.a, cell.b, cell.k
    for rep in range(replications):
        p = rng.beta(a, b, cell.cases)
        counted = (
            rng.binomial(k, 1.0 - cell.errors, cell.cases)
            if cell.errors
            else np.full(cell.cases, k)
        )
        passes = rng.binomial(counted, p)
        if np.count_nonzero(counted) < 2:
            continue
        u = uncertainty(_accounting(k, counted, passes), m=m, resamples=resamples, seed=rep)
        tally.replications += 1
        d = u.dataset
        assert d is not None
        mean = a / (a + b)
        tally.add("pass rate, SE", _inside(d.pass_at_1.low, mean, d.pass_at_1.high))
        boot = d.pass_at_1_bootstrap
        tally.add("pass rate, bootstrap", _inside(boot.low, mean, boot.high))
        at_truth = 1.0 - beta_moment(b, a, d.j)
        hat_truth = beta_moment(a, b, d.j)
        tally.add("pass@j", _inside(d.pass_at_j.low, at_truth, d.pass_at_j.high))
        tally.add("pass^j", _inside(d.pass_hat_j.low, hat_truth, d.pass_hat_j.high))
        if d.at_requested is not None:
            at_k, hat_k = d.at_requested
            tally.add("pass@k reached", _inside(at_k.low, 1.0 - beta_moment(b, a, k), at_k.high))
            tally.add("pass^k reached", _inside(hat_k.low, beta_moment(a, b, k), hat_k.high))
        truth = {f"c{i}": float(v) for i, v in enumerate(p.tolist())}
        for ci in u.cases:
            tally.add("case rate", _inside(ci.low, truth[ci.case], ci.high))
        for cf in u.forecast.cases:
            tally.add("case forecast", _inside(cf.low, truth[cf.case] ** m, cf.high))
        share = u.forecast.share
        if share.low is not None and share.high is not None:
            target = float(np.mean(p[counted > 0] ** m))
            tally.add("dataset forecast", _inside(share.low, target, share.high))
    return tally


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
