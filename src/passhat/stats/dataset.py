"""The intervals beside the dataset figures (`dataset_intervals`): the closed forms of
`passhat.stats.intervals` and the bootstrap of `passhat.stats.bootstrap` together."""

from __future__ import annotations

from dataclasses import dataclass, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Unpack

from passhat.accounting import Accounting
from passhat.errors import MetricsError
from passhat.metrics import RATE_LABEL
from passhat.stats._base import (
    Resampling,
    _common_j,
    _counted_arrays,
    _counts,
    _resampled,
    pass_at_array,
    pass_hat_array,
)
from passhat.stats._numpy import np
from passhat.stats.bootstrap import _bootstrap_rate, case_rate_bootstrap
from passhat.stats.distributions import beta_moment
from passhat.stats.forecasts import _population
from passhat.stats.intervals import (
    Interval,
    at_k_bounds,
    case_mean_intervals,
    case_rate_interval,
    cluster_interval,
    loss_bounds,
    score_interval,
)

if TYPE_CHECKING:
    from passhat.stats._numpy import ArrayLike, Ints


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
    bounds: tuple[Interval, Interval, Interval] | None = None
    """The headline pass rate, pass@j and pass^j whatever the runs not counted hide
    (`loss_bounds`: every case, its lost runs as failures and as passes, with sampling
    error); None when every asked run was counted."""
    lost: int = 0
    """Runs asked of the cases with a counted run but not counted (errored or missing)."""
    unseen: int = 0
    """Cases with no counted run: out of the figures, in the `bounds` at 0 and 1."""

    @property
    def weighs_cases(self) -> bool:
        """The headline pass rate is the mean of per-case rates (cases counted different runs)."""
        return self.over_runs is not None


def dataset_intervals(
    accounting: Accounting, j: int | None = None, **resampling: Unpack[Resampling]
) -> DatasetIntervals:
    """Intervals for the dataset figures over the cases with a counted run, and their
    bounds over every case whatever the runs not counted hide."""
    n, c = _counted_arrays(accounting)
    cases = accounting.cases
    asked = np.fromiter(map(_ASKED, cases), dtype=np.int64, count=len(cases))
    if asked.size != n.size:
        asked = asked[np.fromiter(map(_COUNTED, cases), dtype=np.int64, count=len(cases)) > 0]
    return dataset_intervals_counts(
        n,
        c,
        accounting.k_least,  # the k every case was asked for (see Accounting.at_requested)
        j,
        unseen=len(cases) - int(n.size),
        asked=asked,
        **resampling,
    )


_ASKED = attrgetter("k_requested")
_COUNTED = attrgetter("counted")


def dataset_intervals_counts(
    runs: ArrayLike,
    passes: ArrayLike,
    k: int,
    j: int | None = None,
    *,
    unseen: int = 0,
    asked: ArrayLike | None = None,
    **resampling: Unpack[Resampling],
) -> DatasetIntervals:
    """`dataset_intervals` on arrays: counted runs and passes of every case with a counted
    run, and the requested k (what simulations call; the report goes through the same).
    `asked`: the runs asked of each of those cases (k when not given). `unseen` cases
    have no counted run: they enter the bounds (`loss_bounds`, `at_k_bounds`) and the
    figure at the requested k, not the figures over counted runs."""
    resamples, confidence, seed = _resampled(resampling)
    n, c = _counts(runs, passes)
    full = np.maximum(n, k if asked is None else np.asarray(asked, dtype=np.int64).ravel())
    over_runs = None
    if int(n.min()) == int(n.max()):
        # the score interval at the runs' binomial floor, as when runs differ (a
        # symmetric Wald interval covered 88 % where cases sit near 0 or 1)
        at1 = _over_runs(score_interval(RATE_LABEL, c / n, float(n.sum()), confidence), n, c)
        boot1 = _bootstrap_rate(n, c, **resampling)
    else:
        at1 = case_rate_interval(n, c, confidence)
        boot1 = case_rate_bootstrap(n, c, **resampling)
        over_runs = cluster_interval(n, c, confidence)
    j = _common_j(n, j)
    at_j, hat_j = case_mean_intervals(n, c, j, confidence)
    reached = n >= k
    requested = None
    if j < k and int(reached.sum()) >= 2:
        figures = case_mean_intervals(n[reached], c[reached], k, confidence)
        figures = _every_case_at_k(figures, n, c, k, unseen)
        requested = at_k_bounds(figures, n, c, k, unseen, confidence, full)
    lost = int((full - n).sum())
    bounds = None
    if lost or unseen:
        bounds = loss_bounds((at1, at_j, hat_j), n, c, full, j, unseen, confidence)
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
        bounds=bounds,
        lost=lost,
        unseen=unseen,
    )


def _over_runs(interval: Interval, n: Ints, c: Ints) -> Interval:
    """The figure passes / runs to the bit (the seed's rule; the mean of equal-runs rates
    may differ from it in the last place)."""
    exact = float(c.sum() / n.sum())
    return replace(
        interval, estimate=exact, low=min(interval.low, exact), high=max(interval.high, exact)
    )


def _every_case_at_k(
    figures: tuple[Interval, Interval], n: Ints, c: Ints, k: int, unseen: int
) -> tuple[Interval, Interval]:
    """pass@k and pass^k at the requested k over every case, not over the cases that
    reached k alone (those lean toward the cases errors spared): a case that reached k
    gives its unbiased C(c, k) / C(n, k) form, a case short of k (or with no counted
    run) its posterior mean under the Beta population fitted across cases
    (beta-binomial moments, as the forecast's): E[p^k] and 1 - E[(1 - p)^k] given its
    counted runs. With no spread to fit a population from, the figures over the cases
    that reached k stay."""
    try:
        a, b = _population(n, c)
    except MetricsError:
        return figures
    reached = n >= k
    short_n = np.concatenate([n[~reached], np.zeros(unseen, dtype=np.int64)])
    short_c = np.concatenate([c[~reached], np.zeros(unseen, dtype=np.int64)])
    cases = float(n.size + unseen)
    at = (
        float(pass_at_array(n[reached], c[reached], k).sum())
        + float((1.0 - beta_moment(b + short_n - short_c, a + short_c, k)).sum())
    ) / cases
    hat = (
        float(pass_hat_array(n[reached], c[reached], k).sum())
        + float(beta_moment(a + short_c, b + short_n - short_c, k).sum())
    ) / cases
    return tuple(  # type: ignore[return-value]
        replace(figure, estimate=value) for figure, value in zip(figures, (at, hat), strict=True)
    )
