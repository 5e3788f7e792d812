"""What every part of `passhat.stats` shares: argument checks, the resampling keywords
(`Resampling`), the counted runs and passes of each case, the unbiased per-case
pass@j and pass^j, a mean and spread to numpy's bits, and the bootstrap's draws of
case records (the last one remembered)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from passhat.accounting import Accounting
from passhat.errors import MetricsError, NoRunsError
from passhat.metrics import NO_RUNS
from passhat.stats._numpy import np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from passhat.stats._numpy import ArrayLike, Floats, Ints


JEFFREYS: tuple[float, float] = (0.5, 0.5)
"""Beta(1/2, 1/2): the default prior of the forecast; weak, and invariant to reparametrisation."""


UNIFORM: tuple[float, float] = (1.0, 1.0)
"""Beta(1, 1): every success probability equally likely (Laplace)."""


DEFAULT_RESAMPLES = 2000


MIN_RESAMPLES = 100


MAX_RESAMPLES = 1_000_000
"""More resamples are refused: their totals are kept (16 bytes each), and a million
already puts the interval ends' own noise far below their width."""


_CHUNK = 1 << 18
"""Cells (resamples x cases) per block: small enough to stay in cache, bounded memory."""


_FEW_RECORDS = 4
"""Resample distinct case records, not cases, when there are this many times fewer of them."""


def _check_confidence(confidence: float) -> float:
    if not 0.5 <= confidence < 1:
        raise MetricsError(
            f"confidence is {confidence}; give a level between 0.5 and 1, e.g. 0.95 for 95 %"
        )
    return 1.0 - confidence


def _check_resamples(resamples: int) -> None:
    if resamples < MIN_RESAMPLES:
        raise MetricsError(
            f"resamples is {resamples}; use at least {MIN_RESAMPLES} "
            f"(default {DEFAULT_RESAMPLES}) so the interval ends are not noise"
        )
    if resamples > MAX_RESAMPLES:  # 10^8 took 1.5 GB (16 bytes a resample): MemoryError
        raise MetricsError(
            f"resamples is {resamples:,}; use at most {MAX_RESAMPLES:,} "
            f"(default {DEFAULT_RESAMPLES:,}): each resample takes memory"
        )


def _check_resampling(confidence: float, resamples: int) -> float:
    """A resampled interval's or test's level and resamples checked, in that order;
    returns 1 - confidence."""
    alpha = _check_confidence(confidence)
    _check_resamples(resamples)
    return alpha


class Resampling(TypedDict, total=False):
    """The keywords every resampled figure here takes (the bootstraps, the sign-flip
    comparison, the dataset intervals, the share forecast, `uncertainty`), each optional:
    their defaults and checks live in one place, `_resampled`."""

    resamples: int
    """Resamples (or sign-flip patterns) drawn: `DEFAULT_RESAMPLES` unless given, at
    least `MIN_RESAMPLES`."""
    confidence: float
    """The level, between 0.5 and 1: 0.95 unless given."""
    seed: int
    """The random generator's seed: 0 unless given (the same seed, the same figures)."""


class Drawn(NamedTuple):
    """`Resampling` with every field filled in and checked (`_resampled`)."""

    resamples: int
    confidence: float
    seed: int


def _resampled(given: Resampling) -> Drawn:
    """The resampling keywords a function was given, the defaults filled in, the level and
    the resamples checked (`_check_resampling`). A keyword of another name is refused as
    Python refuses one a signature does not name."""
    unknown = sorted(given.keys() - Resampling.__optional_keys__)
    if unknown:
        raise TypeError(
            f"unexpected keyword argument {unknown[0]!r}; a resampled figure takes "
            "resamples, confidence and seed"
        )
    drawn = Drawn(
        given.get("resamples", DEFAULT_RESAMPLES),
        given.get("confidence", 0.95),
        given.get("seed", 0),
    )
    _check_resampling(drawn.confidence, drawn.resamples)
    return drawn


def _blocks(cases: int, resamples: int) -> Iterator[int]:
    """Resamples per block, to `resamples` in all: `_CHUNK` cells (resamples x cases) at
    most in a block, and at least one resample."""
    rows = max(1, _CHUNK // cases)
    for start in range(0, resamples, rows):
        yield min(rows, resamples - start)


_LAST_DRAWS: dict[tuple[int, int, int, str, bytes], Ints] = {}
"""The last bootstrap draws (`_remembered`): a report's dataset bootstrap and its share
forecast read the very same (one seed, the same case records: `_case_record_draws`)."""


def _record_draws(cases: int, counts: Ints, resamples: int, seed: int) -> Ints:
    """`default_rng(seed).multinomial(cases, counts / cases, resamples)`: how many copies of
    each distinct case record `resamples` bootstrap draws of `cases` cases hold. The last
    call is remembered (`_remembered`), so the second of two equal calls costs nothing;
    the draws were most of a simulated experiment's CPU."""
    key = (seed, cases, resamples, counts.dtype.str, counts.tobytes())  # 1-d counts
    return _remembered(
        key, lambda: np.random.default_rng(seed).multinomial(cases, counts / cases, resamples)
    )


def _remembered(key: tuple[int, int, int, str, bytes], draw: Callable[[], Ints]) -> Ints:
    """The bootstrap draws kept under `key`, else `draw()` made read-only and kept in
    place of the last ones (a few MB at most)."""
    draws = _LAST_DRAWS.get(key)
    if draws is None:
        draws = draw()
        draws.setflags(write=False)
        _LAST_DRAWS.clear()
        if draws.size <= _CHUNK:
            _LAST_DRAWS[key] = draws
    return draws


def _few_records(records: int, cases: int) -> bool:
    """So few distinct case records (`_FEW_RECORDS` times fewer than cases) that drawing
    per record beats drawing case by case."""
    return records * _FEW_RECORDS <= cases


MAX_HORIZON = 1_000_000
"""The longest forecast: past it E[p^m] (`beta_moment`, lgamma differences of numbers
near m) loses its digits; at 2**63 every case's came out 1.0."""


def _check_m(m: int) -> None:
    if m < 1:
        raise MetricsError(f"the forecast horizon m is {m}; forecast at least 1 run")
    if m > MAX_HORIZON:
        raise MetricsError(f"the forecast horizon m is {m}; forecast at most {MAX_HORIZON:,} runs")


def _check_prior(prior: tuple[float, float]) -> None:
    if not (prior[0] > 0 and prior[1] > 0):
        raise MetricsError(f"a Beta prior needs two positive parameters, got {prior}")


def _need_two_cases(cases: int) -> None:
    """A dataset interval is between cases: it needs two of them."""
    if cases < 2:
        raise MetricsError(
            f"a dataset interval needs at least 2 cases with counted runs; have {cases}"
        )


def _counts(runs: ArrayLike, passes: ArrayLike) -> tuple[Ints, Ints]:
    n = np.asarray(runs, dtype=np.int64).ravel()
    c = np.asarray(passes, dtype=np.int64).ravel()
    if n.shape != c.shape:
        raise MetricsError(f"runs and passes differ in length ({n.size} and {c.size})")
    if n.size == 0 or (n < 1).any():
        raise NoRunsError(f"every case needs at least one counted run: {NO_RUNS}")
    if (c < 0).any() or (c > n).any():
        raise MetricsError("passes must lie between 0 and the counted runs of each case")
    return n, c


def _unique_rows(
    rows: NDArray[Any],
) -> tuple[NDArray[Any], NDArray[np.intp], NDArray[np.intp]]:
    """The distinct rows in sorted order, the index of each row's record, and how many
    rows each record has: `np.unique(rows, axis=0, return_inverse=True,
    return_counts=True)` (same values, same order), about ten times faster on 100,000
    rows, since it sorts with `lexsort` instead of comparing rows as structured records."""
    if rows.shape[0] == 0:
        return rows, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    if rows.shape[0] <= _LISTED_ROWS and _orderable(rows):
        return _unique_listed(rows)
    order = np.lexsort(rows.T[::-1])  # the first column is the primary key
    ordered = rows[order]
    starts = np.empty(ordered.shape[0], dtype=bool)
    starts[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=starts[1:])
    inverse = np.empty(rows.shape[0], dtype=np.intp)
    inverse[order] = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), ordered.shape[0]))
    return ordered[starts], inverse, counts


_LISTED_ROWS = 40
"""Up to this many rows, `_unique_rows` sorts Python tuples: a lexsort's dozen numpy
calls cost more there (35-45 us for 20 rows, 25 us listed; two calls a simulated
experiment)."""


def _orderable(rows: NDArray[Any]) -> bool:
    """Integers, or floats with neither NaN nor a sign bit (where tuples would not order,
    or group, as the lexsort does): a bootstrap's counts, runs and rates."""
    if rows.dtype.kind == "i":
        return True
    return rows.dtype.kind == "f" and not (np.isnan(rows).any() or np.signbit(rows).any())


def _unique_listed(
    rows: NDArray[Any],
) -> tuple[NDArray[Any], NDArray[np.intp], NDArray[np.intp]]:
    """`_unique_rows` of a few orderable rows, on Python tuples: the same records in the
    same (lexicographic) order, the same inverse and counts."""
    listed = list(map(tuple, rows.tolist()))
    records = sorted(set(listed))
    index = {record: i for i, record in enumerate(records)}
    inverse = [index[row] for row in listed]
    counts = [0] * len(records)
    for i in inverse:
        counts[i] += 1
    return (
        np.array(records, dtype=rows.dtype).reshape(len(records), rows.shape[1]),
        np.array(inverse, dtype=np.intp),
        np.array(counts, dtype=np.intp),
    )


def pass_hat_array(runs: ArrayLike, passes: ArrayLike, j: int) -> Floats:
    """Unbiased pass^j per case, C(c, j) / C(n, j), for arrays of n >= j and c.

    Integer counts under `_TABLE_RUNS` are read from a table of every (n, c) that
    `_hat_product` filled once per j: the very bits it gives each case, without its
    j rounds of array operations per call (a tenth of a simulated experiment)."""
    n = np.asarray(runs)
    c = np.asarray(passes)
    if j <= _TABLE_RUNS and n.dtype.kind == "i" and c.dtype.kind == "i" and n.size and c.size:
        either = n | c  # negative if either is; under _TABLE_RUNS if both are
        if int(either.min()) >= 0 and int(either.max()) < _TABLE_RUNS:
            return np.asarray(_hat_table(j)[n, c], dtype=np.float64)
    return _hat_product(np.asarray(n, dtype=np.float64), np.asarray(c, dtype=np.float64), j)


def _hat_product(n: Floats, c: Floats, j: int) -> Floats:
    """pass^j per case as the product of j factors (c - t) / (n - t), in that order."""
    shape = n.shape if n.shape == c.shape else np.broadcast_shapes(n.shape, c.shape)
    out = np.ones(shape)
    for t in range(j):
        # np.maximum, not np.clip(.., 0.0, None): the same values (c - t is never -0.0
        # or NaN) without np.clip's Python layers, a tenth of a simulated experiment
        out *= np.maximum(c - t, 0.0) / (n - t)
    return out


_TABLE_RUNS = 128
"""Counts below this are looked up (`_hat_table`): 128 KB a table, one per j used."""


_HAT_TABLES: dict[int, Floats] = {}


def _hat_table(j: int) -> Floats:
    """`_hat_product` of every (n, c) under `_TABLE_RUNS`, row n, column c, read-only:
    the same operations on each element, so the same bits. Pairs outside n >= j and
    c <= n (no figure asks for them) hold what the product gives there, inf or NaN."""
    table = _HAT_TABLES.get(j)
    if table is None:
        grid = np.arange(_TABLE_RUNS, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            table = _hat_product(grid[:, None], grid[None, :], j)
        table.setflags(write=False)
        _HAT_TABLES[j] = table
    return table


def pass_at_array(runs: ArrayLike, passes: ArrayLike, j: int) -> Floats:
    """Unbiased pass@j per case, 1 - C(n - c, j) / C(n, j), for arrays of n >= j and c."""
    n = np.asarray(runs)
    c = np.asarray(passes)
    if n.dtype.kind != "i" or c.dtype.kind != "i":  # integer failures stay integers (exact)
        n, c = np.asarray(n, dtype=np.float64), np.asarray(c, dtype=np.float64)
    return 1.0 - pass_hat_array(n, n - c, j)


def _mean_var(values: Floats) -> tuple[float, float]:
    """`(values.mean(), values.var(ddof=1))` of a 1-d float64 array, by the operations
    numpy's `_mean` and `_var` run, in their order (so the very same bits;
    tests/test_stats_floats.py compares them), without their Python layers: a score
    interval's mean and spread were a tenth of a simulated experiment."""
    count = values.size
    mean = np.add.reduce(values) / count
    deviations = values - mean
    np.multiply(deviations, deviations, out=deviations)
    return float(mean), float(np.add.reduce(deviations) / (count - 1))


def _common_j(n: Ints, j: int | None) -> int:
    smallest = int(n.min())
    if j is None:
        return smallest
    if j < 1:
        raise MetricsError(f"j must be at least 1, got {j}")
    if j > smallest:
        raise MetricsError(
            f"pass@{j} / pass^{j} need {j} counted runs in every case, "
            f"but one case has only {smallest}"
        )
    return j


def _counted_arrays(accounting: Accounting) -> tuple[Ints, Ints]:
    """Counted runs and passes of every case with a counted run (read in C: a report
    asks three times, of 100,000 cases)."""
    cases = accounting.cases
    n = np.fromiter(map(_COUNTED, cases), dtype=np.int64, count=len(cases))
    p = np.fromiter(map(_PASSES, cases), dtype=np.int64, count=len(cases))
    counted = n > 0
    if not counted.any():
        raise NoRunsError(NO_RUNS)
    if counted.all():
        return n, p
    return n[counted], p[counted]


_COUNTED = attrgetter("counted")


_PASSES = attrgetter("passes")
