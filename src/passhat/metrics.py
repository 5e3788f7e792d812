"""Pure statistics over verdicts: no files, no store, no printing.

The three numbers answer three questions (see DESIGN.md):

- pass rate, which estimates pass@1: how often does one run succeed?
- pass@k: does the case succeed at least once in k tries?
- pass^k: does it succeed every time, k times in a row?

With n counted runs of which c passed, the unbiased estimators for j <= n are
pass@j = 1 - C(n-c, j) / C(n, j) (Chen et al. 2021) and
pass^j = C(c, j) / C(n, j) (as in tau-bench). At j = n they are exactly
"passes > 0" and "passes == n". Both are computed as running products, which
never form a large binomial coefficient, and memoised: a dataset of 100,000 cases
holds only a few distinct (n, c, j).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from operator import truediv

from passhat.errors import MetricsError, NoRunsError

NO_RUNS = "no run at all: pass@k cannot be computed"

RATE_LABEL = "pass rate (over runs)"
"""The headline: all passes / all counted runs (the seed's run-weighted pass@1 estimate)."""
CASE_MEAN_LABEL = "mean of per-case rates"
"""Each case's passes / counted runs, averaged over cases: a different number from
`RATE_LABEL` whenever cases have different numbers of counted runs."""
CASE_RATE_LABEL = f"pass rate ({CASE_MEAN_LABEL})"
"""The headline pass rate when cases counted different numbers of runs: each case weighs
once, so errors that fall on some cases (a flaky sandbox on hard tasks) cannot move it
by moving weight between cases."""


def rate_label(weighs_cases: bool) -> str:
    """The headline pass rate's label: `CASE_RATE_LABEL` when cases counted different runs,
    `RATE_LABEL` when every case counted the same (the two figures are then equal)."""
    return CASE_RATE_LABEL if weighs_cases else RATE_LABEL


def label_at(j: int) -> str:
    """The dataset label of the mean of per-case pass@j; at j = 1 that is the mean of
    per-case rates, named apart from the run-weighted pass rate."""
    return f"pass@1 ({CASE_MEAN_LABEL})" if j == 1 else f"pass@{j}"


def label_hat(j: int) -> str:
    """The dataset label of the mean of per-case pass^j (see `label_at`)."""
    return f"pass^1 ({CASE_MEAN_LABEL})" if j == 1 else f"pass^{j}"


@dataclass(frozen=True)
class CaseMetrics:
    """The seed's `aggregate`: the three numbers for one case's counted runs."""

    k: int
    """Counted runs (passed + failed) behind these numbers."""
    passes: int
    """How many of them passed."""
    pass_rate: float
    """passes / k: the estimate of pass@1."""
    pass_at_k: bool
    """At least one of the k runs passed."""
    pass_hat_k: bool
    """All k runs passed."""


def aggregate(verdicts: Sequence[bool]) -> CaseMetrics:
    """Aggregate the verdicts of one case's counted runs.

    No verdicts at all is an error, never a zero.
    """
    return case_metrics(len(verdicts), sum(1 for v in verdicts if v))


def case_metrics(k: int, passes: int) -> CaseMetrics:
    """The same as `aggregate`, from counts: k counted runs of which `passes` passed."""
    if k < 1:
        raise NoRunsError(NO_RUNS)
    if not 0 <= passes <= k:
        raise MetricsError(f"passes must lie between 0 and the {k} counted runs, got {passes}")
    return CaseMetrics(
        k=k, passes=passes, pass_rate=passes / k, pass_at_k=passes > 0, pass_hat_k=passes == k
    )


def _check(n: int, c: int, j: int) -> None:
    if n < 1:
        raise NoRunsError(NO_RUNS)
    if not 0 <= c <= n:
        raise MetricsError(f"passes must lie between 0 and the {n} counted runs, got {c}")
    if j < 1:
        raise MetricsError(f"j must be at least 1, got {j}")
    if j > n:
        raise MetricsError(
            f"pass@{j} / pass^{j} need at least {j} counted runs, but only {n} were counted"
        )


@lru_cache(maxsize=65536)
def pass_at(n: int, c: int, j: int) -> float:
    """Unbiased pass@j from n counted runs with c passes: 1 - C(n-c, j) / C(n, j)."""
    _check(n, c, j)
    if n - c < j:
        return 1.0
    all_fail = 1.0
    for i in range(j):
        all_fail *= (n - c - i) / (n - i)
    return 1.0 - all_fail


@lru_cache(maxsize=65536)
def pass_hat(n: int, c: int, j: int) -> float:
    """Unbiased pass^j from n counted runs with c passes: C(c, j) / C(n, j)."""
    _check(n, c, j)
    if c < j:
        return 0.0
    all_pass = 1.0
    for i in range(j):
        all_pass *= (c - i) / (n - i)
    return all_pass


def pass_at_curve(n: int, c: int) -> list[float]:
    """pass@j for j = 1..n."""
    return [pass_at(n, c, j) for j in range(1, n + 1)]


def pass_hat_curve(n: int, c: int) -> list[float]:
    """pass^j for j = 1..n."""
    return [pass_hat(n, c, j) for j in range(1, n + 1)]


@dataclass(frozen=True)
class DatasetMetrics:
    """The three numbers over many cases, with the seed's denominators."""

    cases: int
    """Cases included (each with at least j counted runs)."""
    runs: int
    """Counted runs over all included cases: the denominator of pass@1."""
    passes: int
    """Passed runs over all included cases."""
    j: int
    """The j of pass@j and pass^j: one every included case reaches."""
    pass_at_1: float
    """All passes / all counted runs: runs are weighed, not cases."""
    pass_at_j: float
    """Mean over cases of the unbiased pass@j: the share of cases passing at least once."""
    pass_hat_j: float
    """Mean over cases of the unbiased pass^j: the share of cases passing every time."""
    mean_case_rate: float = float("nan")
    """Mean over cases of passes / counted runs: not the pass rate over runs (`pass_at_1`)
    unless every case has the same number of counted runs."""
    weighs_cases: bool = False
    """Cases counted different numbers of runs: the headline `pass_rate` is then the
    mean of per-case rates, not the pass rate over runs."""

    @property
    def pass_rate(self) -> float:
        """The headline pass rate, which estimates pass@1: each case weighs once. With the
        same counted runs in every case that is exactly passes / runs (the seed's rule);
        otherwise the mean of per-case rates, which errors falling more on some cases
        (hard ones, long ones) cannot bias by reweighting them."""
        return self.mean_case_rate if self.weighs_cases else self.pass_at_1

    @property
    def label_rate(self) -> str:
        """The headline pass rate's label (`rate_label`)."""
        return rate_label(self.weighs_cases)


def dataset(counts: Iterable[tuple[int, int]], j: int | None = None) -> DatasetMetrics:
    """Dataset figures from (counted runs, passes) per case.

    `j` defaults to the smallest count, the largest j every case reaches; a `j`
    some case does not reach is an error naming both numbers.
    """
    pairs = list(counts)
    # columns and map(): the same sums in the same order as a loop over pairs, without
    # a Python frame per case (100,000 cases, several times per report)
    ns = [n for n, _ in pairs]
    cs = [c for _, c in pairs]
    if not pairs or not any(ns):
        raise NoRunsError(NO_RUNS)
    smallest = min(ns)
    if smallest == 0:
        raise NoRunsError(f"a case with no counted run cannot enter a dataset figure: {NO_RUNS}")
    if j is None:
        j = smallest
    elif j > smallest:
        raise MetricsError(
            f"pass@{j} / pass^{j} need {j} counted runs in every case, "
            f"but one case has only {smallest}"
        )
    runs = sum(ns)
    passes = sum(cs)
    js = repeat(j, len(pairs))
    return DatasetMetrics(
        cases=len(pairs),
        runs=runs,
        passes=passes,
        j=j,
        pass_at_1=passes / runs,
        pass_at_j=sum(map(pass_at, ns, cs, js)) / len(pairs),
        pass_hat_j=sum(map(pass_hat, ns, cs, repeat(j, len(pairs)))) / len(pairs),
        mean_case_rate=sum(map(truediv, cs, ns)) / len(pairs),
        weighs_cases=smallest != max(ns),
    )
