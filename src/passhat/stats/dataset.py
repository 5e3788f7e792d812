"""The intervals beside the dataset figures (`dataset_intervals`): the closed forms of
`passhat.stats.intervals` and the bootstrap of `passhat.stats.bootstrap` together."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from passhat.accounting import Accounting
from passhat.stats._base import DEFAULT_RESAMPLES, _common_j, _counted_arrays, _counts
from passhat.stats.bootstrap import _bootstrap_rate, case_rate_bootstrap
from passhat.stats.intervals import (
    Interval,
    at_k_bounds,
    case_mean_intervals,
    case_rate_interval,
    cluster_interval,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


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
