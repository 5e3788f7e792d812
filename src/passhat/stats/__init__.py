"""How sure are we? Intervals, forecasts, planning and paired comparison.

The three point figures (`passhat.metrics`) say what was seen; this module says
how far to trust them, what to expect of the next runs, and how many more runs
would settle a question. Everything here is pure and vectorised with numpy: no
files, no store, no printing, and no Python loop per resample or per case.

Two sources of variation stand behind every dataset figure (Miller, "Adding
Error Bars to Evals", 2024): *between cases* (some cases are easy, some hard)
and *within a case* (the same case passes on one run and fails on the next).
The runs of one case are therefore a cluster, never independent draws, and the
intervals here respect that:

- per case: the Wilson interval of the pass rate, and for n of n passed (or
  failed) the exact one-sided bound, which the "rule of three" approximates
  (failure rate below 3/n at 95 %);
- per dataset: a cluster-robust interval for pass@1, and cluster-bootstrap
  intervals (resample cases, keep each case's runs together) for pass@1,
  pass@j and pass^j. They describe a new draw of cases like these, each run
  the same number of times;
- forecast: a Beta posterior per case (Jeffreys prior by default) gives the
  probability that the next m runs all pass, E[p^m], with a credible interval;
- planning: from the between- and within-case variance, the runs per case and
  cases that bring an interval under a target half-width;
- comparison: the same cases under configurations A and B, paired; a paired
  cluster-bootstrap interval and a sign-flip permutation p-value per metric,
  the minimum detectable difference, and a verdict in words.

The Accounting-level functions (`case_intervals`, `dataset_intervals`,
`forecast`, `plan`, `compare`, `uncertainty`) wrap array-level ones that take
counted runs and passes per case, which is what simulations and tests call. Every
resampled figure takes the same optional keywords, `Resampling` (resamples,
confidence, seed), defaulted and checked in one place.

The package is laid out by what a reader looks for: `intervals` (closed forms per
case and per dataset), `bootstrap`, `dataset` (the intervals beside the dataset
figures), `forecasts`, `planning`, `comparison` and `multiplicity` (per-case tests
and their adjustment), `bundle` (all of it in one call, `uncertainty`) and `anytime`
(the betting confidence sequence of `--spending anytime`), on `distributions`,
`_base` and `_numpy` (numpy, loaded on first use). Every name is imported from here, `passhat.stats`, as before the split.
"""

from __future__ import annotations

# Names marked `noqa` are helpers the tests reach for at their old address,
# not part of the interface.
from passhat.stats._base import (
    DEFAULT_RESAMPLES,
    JEFFREYS,
    MIN_RESAMPLES,
    UNIFORM,
    Resampling,
    _unique_rows,  # noqa: F401
    pass_at_array,
    pass_hat_array,
)
from passhat.stats.bootstrap import (
    _bootstrap_ends,  # noqa: F401
    _bootstrap_totals,  # noqa: F401
    _resample_counts,  # noqa: F401
    _weibull_quantile,  # noqa: F401
    case_rate_bootstrap,
    cluster_bootstrap,
)
from passhat.stats.bundle import (
    Uncertainty,
    uncertainty,
)
from passhat.stats.comparison import (
    CASE_RATE_METHOD,
    DISAGREE_METHOD,
    FLIP_METHOD,
    FLOOR_METHOD,
    METRICS,
    CaseDifference,
    Comparison,
    Difference,
    Metric,
    Outcome,
    Verdict,
    _flip_totals,  # noqa: F401
    check_suites,
    compare,
    compare_counts,
    decide,
    paired_differences,
)
from passhat.stats.dataset import (
    DatasetIntervals,
    dataset_intervals,
    dataset_intervals_counts,
)
from passhat.stats.distributions import (
    _FEW_VALUES,  # noqa: F401
    _beta_cf,  # noqa: F401
    _beta_cf_floats,  # noqa: F401
    _lgamma,  # noqa: F401
    _t_quantile,  # noqa: F401
    beta_moment,
    beta_quantile,
    betainc,
)
from passhat.stats.forecasts import (
    MIN_SHARE_CASES,
    CaseForecast,
    Forecast,
    Prior,
    ShareForecast,
    _beta_ends,  # noqa: F401
    beta_check,
    fitted_prior,
    forecast,
    forecast_counts,
    moment_bounds,
    share_forecast,
)
from passhat.stats.intervals import (
    AT_K_METHOD,
    LOSS_METHOD,
    CaseInterval,
    Interval,
    _binomial_floor,  # noqa: F401
    all_or_none_bound,
    at_k_bounds,
    case_intervals,
    case_mean_intervals,
    case_rate_interval,
    cluster_interval,
    loss_bounds,
    score_interval,
    wilson,
)
from passhat.stats.multiplicity import (
    CASE_ALPHA,
    CASE_CORRECTION,
    CORRECTIONS,
    Adjust,
    benjamini_hochberg,
    case_tests,
    fisher_exact,
    holm,
)
from passhat.stats.planning import (
    Plan,
    plan,
    plan_pass_at_1,
    plan_pass_hat,
)

__all__ = [
    "AT_K_METHOD",
    "CASE_ALPHA",
    "CASE_CORRECTION",
    "CASE_RATE_METHOD",
    "CORRECTIONS",
    "DEFAULT_RESAMPLES",
    "DISAGREE_METHOD",
    "FLIP_METHOD",
    "FLOOR_METHOD",
    "JEFFREYS",
    "LOSS_METHOD",
    "METRICS",
    "MIN_RESAMPLES",
    "MIN_SHARE_CASES",
    "UNIFORM",
    "Adjust",
    "CaseDifference",
    "CaseForecast",
    "CaseInterval",
    "Comparison",
    "DatasetIntervals",
    "Difference",
    "Forecast",
    "Interval",
    "Metric",
    "Outcome",
    "Plan",
    "Prior",
    "Resampling",
    "ShareForecast",
    "Uncertainty",
    "Verdict",
    "all_or_none_bound",
    "at_k_bounds",
    "benjamini_hochberg",
    "beta_check",
    "beta_moment",
    "beta_quantile",
    "betainc",
    "case_intervals",
    "case_mean_intervals",
    "case_rate_bootstrap",
    "case_rate_interval",
    "case_tests",
    "check_suites",
    "cluster_bootstrap",
    "cluster_interval",
    "compare",
    "compare_counts",
    "dataset_intervals",
    "dataset_intervals_counts",
    "decide",
    "fisher_exact",
    "fitted_prior",
    "forecast",
    "forecast_counts",
    "holm",
    "loss_bounds",
    "moment_bounds",
    "paired_differences",
    "pass_at_array",
    "pass_hat_array",
    "plan",
    "plan_pass_at_1",
    "plan_pass_hat",
    "score_interval",
    "share_forecast",
    "uncertainty",
    "wilson",
]
