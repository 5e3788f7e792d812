"""Run accounting: requested, completed, counted, errored and missing runs.

The seed's rule made mechanical: metrics are labelled with the counts that
produced them, never with the plan. A case with 2 counted runs of 3 requested
reports pass@2 / pass^2 and names its missing and errored runs; a dataset
figure is labelled pass^j for a j every included case reaches.

A `Ledger` takes runs one at a time (so a million verdicts need no list of
objects) and refuses the same (case, run) twice; `Ledger.close(k)` gives the
`Accounting`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import get_args, overload

from passhat._gc import without_gc
from passhat.errors import InputError, NoRunsError
from passhat.metrics import (
    CASE_RATE_LABEL,
    NO_RUNS,
    RATE_LABEL,
    CaseMetrics,
    DatasetMetrics,
    case_metrics,
    dataset,
    label_at,
    label_hat,
)
from passhat.plain import MAX_K as MAX_K  # re-exported: defined low so suite/ can use it
from passhat.plain import Status as Status  # re-exported: defined low (records.py)
from passhat.plain import plural

STATUSES: tuple[str, ...] = get_args(Status)


class MissingRuns(Sequence[int]):
    """The run indices 1..k that have no record, held as the recorded ones.

    Memory follows the data, not k: a case with one run at index 100,000 holds
    one number, not 99,999. Iterating gives the indices in order; it equals any
    sequence of the same indices."""

    __slots__ = ("_present", "k")

    def __init__(self, k: int, present: Iterable[int]) -> None:
        self.k = k
        recorded = sorted(present)
        if recorded and (recorded[0] < 1 or recorded[-1] > k):
            recorded = [i for i in recorded if 1 <= i <= k]
        self._present = tuple(recorded)

    def __len__(self) -> int:
        return self.k - len(self._present)

    def __iter__(self) -> Iterator[int]:
        if len(self._present) == self.k:  # the common case: nothing missing
            return
        for start, end in self.ranges():
            yield from range(start, end + 1)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[int, ...]: ...
    def __getitem__(self, index: int | slice) -> int | tuple[int, ...]:
        if isinstance(index, slice):
            return tuple(itertools.islice(self, *index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("missing run index out of range")
        # the index-th missing run: skip one for every recorded run at or below it
        candidate = index + 1
        for recorded in self._present:
            if recorded <= candidate:
                candidate += 1
            else:
                break
        return candidate

    def ranges(self) -> list[tuple[int, int]]:
        """Consecutive missing indices as (first, last) pairs."""
        out: list[tuple[int, int]] = []
        if len(self._present) == self.k:  # the common case: nothing missing
            return out
        previous = 0
        for recorded in (*self._present, self.k + 1):
            if recorded > previous + 1:
                out.append((previous + 1, recorded - 1))
            previous = recorded
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MissingRuns):
            return (self.k, self._present) == (other.k, other._present)
        if isinstance(other, (tuple, list)):
            return len(other) == len(self) and all(
                a == b for a, b in zip(self, other, strict=False)
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.k, self._present))

    def __repr__(self) -> str:
        return f"MissingRuns({format_ranges(self.ranges())})"


def format_ranges(ranges: Iterable[tuple[int, int]], sep: str = ", ") -> str:
    """`1, 3-7, 9, 10`: three or more consecutive indices written as first-last."""
    parts: list[str] = []
    for a, b in ranges:
        parts.extend([str(a)] if a == b else [str(a), str(b)] if b == a + 1 else [f"{a}-{b}"])
    return sep.join(parts)


class DuplicateRunError(InputError):
    """The same (case, run index) was recorded twice: it would be counted twice."""


def duplicate_run(case: str, run: int) -> DuplicateRunError:
    """The error for a second record of the same run."""
    return DuplicateRunError(
        f"run {run} of case {case!r} is recorded twice; keep one record per (case, run)"
    )


class RunBeyondPlanError(InputError):
    """A run index larger than the requested k."""


@dataclass(frozen=True)
class CaseAccount:
    """How many runs of one case were asked for, made and counted."""

    case: str
    """The case id."""
    k_requested: int
    """Runs the plan asked of this case (an adaptive rule may ask a case fewer than
    the experiment's k: that is its plan, not a shortfall)."""
    completed: int
    """Runs with a record (passed, failed or errored)."""
    counted: int
    """Runs with a verdict (passed + failed): the denominator of every number."""
    passes: int
    """Counted runs that passed."""
    errored: tuple[int, ...]
    """Indices of runs that ended without a verdict."""
    missing: Sequence[int]
    """Indices of requested runs that have no record at all (a `MissingRuns`)."""

    @property
    def complete(self) -> bool:
        """Every requested run was counted."""
        return self.counted == self.k_requested

    @property
    def metrics(self) -> CaseMetrics | None:
        """The three numbers over the counted runs; None when none was counted."""
        return case_metrics(self.counted, self.passes) if self.counted else None


@dataclass(frozen=True)
class DatasetSummary:
    """Dataset figures with the accounting that stands behind them."""

    k_requested: int
    """The planned k: the fewest runs asked of a case when an adaptive rule asked cases
    for different k (`Accounting.k_least`), the experiment's k otherwise."""
    metrics: DatasetMetrics
    """pass@1 over all counted runs; pass@j / pass^j over the included cases."""
    complete: bool
    """Every case counted every requested run."""
    short: tuple[str, ...]
    """Included cases with fewer counted runs than requested."""
    excluded: tuple[str, ...]
    """Cases left out because they have no counted run."""

    @property
    def j(self) -> int:
        return self.metrics.j

    @property
    def label_at(self) -> str:
        return label_at(self.metrics.j)

    @property
    def label_hat(self) -> str:
        return label_hat(self.metrics.j)


def _total(count: Callable[[CaseAccount], int]) -> cached_property[int]:
    """A sum over an `Accounting`'s cases, computed once."""
    return cached_property(lambda accounting: sum(map(count, accounting.cases)))


@dataclass(frozen=True)
class Accounting:
    """The accounting of a whole experiment or verdict file."""

    k_requested: int
    cases: tuple[CaseAccount, ...]

    # Totals are computed once: reports ask for them many times over 100,000 cases.
    runs_requested = _total(attrgetter("k_requested"))
    runs_completed = _total(attrgetter("completed"))
    runs_counted = _total(attrgetter("counted"))
    runs_errored = _total(lambda c: len(c.errored))
    runs_missing = _total(lambda c: len(c.missing))

    @cached_property
    def complete(self) -> bool:
        return all(c.counted == c.k_requested for c in self.cases)

    @cached_property
    def k_least(self) -> int:
        """The fewest runs asked of a case: the k every case was asked for. Equal to
        `k_requested` unless an adaptive rule asked some cases fewer."""
        return min((c.k_requested for c in self.cases), default=self.k_requested)

    @property
    def k_varies(self) -> bool:
        """Cases were asked different numbers of runs (by an adaptive rule)."""
        return self.k_least != self.k_requested

    def held(self) -> dict[int, int]:
        """How many cases were asked each k (requested k -> cases), smallest k first."""
        out: dict[int, int] = {}
        for c in self.cases:
            out[c.k_requested] = out.get(c.k_requested, 0) + 1
        return dict(sorted(out.items()))

    def shortfalls(self) -> list[str]:
        """One line per case that fell short of the plan, naming its runs."""
        lines = []
        for c in self.cases:
            if c.complete:
                continue
            parts = []
            if c.missing:
                parts.append("missing run " + _indices(c.missing))
            if c.errored:
                parts.append("errored run " + _indices(c.errored))
            lines.append(
                f"{c.case}: {c.counted} of {plural(c.k_requested, 'requested run')} counted ("
                + "; ".join(parts)
                + ")"
            )
        return lines

    def at_requested(self) -> AtRequested | None:
        """pass@k / pass^k at the requested k over the cases that reached it; None when
        every case with a counted run reached it (the dataset figure is already at k) or
        none did.

        When an adaptive rule asked cases for different k, "the requested k" is the
        fewest asked of any case (`k_least`): every case was asked that many. A figure at
        the largest k would rest only on the cases the rule chose to run further (the
        undecided ones), a subset picked by their results, so none is given."""
        k = self.k_least
        counted = [c for c in self.cases if c.counted]
        reached = [c for c in counted if c.counted >= k]
        if not reached or len(reached) == len(counted):
            return None
        return AtRequested(
            k=k,
            metrics=dataset(((c.counted, c.passes) for c in reached), k),
            left_out=tuple(c.case for c in counted if c.counted < k),
        )

    def error_ledger(self) -> ErrorLedger | None:
        """The headline figures with the runs not counted (errored or missing) left out, as
        failures and as passes; None when every requested run was counted."""
        return self._error_ledger

    @cached_property
    def _error_ledger(self) -> ErrorLedger | None:
        # computed once: a report asks for it twice (summary and uncertainty)
        if not self.runs_errored and not self.runs_missing:
            return None
        return error_ledger(
            [(c.counted, c.passes, len(c.errored) + len(c.missing)) for c in self.cases],
            missing=self.runs_missing,
        )

    def dataset(self, j: int | None = None) -> DatasetSummary:
        """Dataset figures over the cases with at least one counted run."""
        if j is None:
            return self._dataset
        return self._dataset_at(j)

    @cached_property
    def _dataset(self) -> DatasetSummary:
        return self._dataset_at(None)

    def _dataset_at(self, j: int | None) -> DatasetSummary:
        included = [c for c in self.cases if c.counted]
        if not included:
            raise NoRunsError(NO_RUNS)
        return DatasetSummary(
            k_requested=self.k_least,
            metrics=dataset(((c.counted, c.passes) for c in included), j),
            complete=self.complete,
            short=tuple(c.case for c in included if not c.complete),
            excluded=tuple(c.case for c in self.cases if not c.counted),
        )


@dataclass(frozen=True)
class AtRequested:
    """pass@k / pass^k at the requested k, over the cases that reached it.

    One short case drags the dataset's j (the smallest count) down for every
    case; this figure keeps the plan's k and names how many cases it leaves out.
    """

    k: int
    """The requested k."""
    metrics: DatasetMetrics
    """The figures over the cases with at least k counted runs, at j = k."""
    left_out: tuple[str, ...]
    """Cases with a counted run but fewer than k: not in this figure."""


@dataclass(frozen=True)
class LedgerRow:
    """One headline figure three ways: errored runs left out, counted as failures, as passes."""

    label: str
    excluded: float
    """Errored runs left out of the denominator: the headline figure."""
    as_failures: float
    """Every errored run counted as a failure: the lower bound."""
    as_passes: float
    """Every errored run counted as a pass: the upper bound."""

    @property
    def weighs_runs(self) -> bool:
        """Weighs a case by its counted runs: errors that concentrate in low-pass cases
        move weight to easy ones and raise it (the ledger's warning concerns this row).
        The figures that weigh each case once are moved only by cases left out whole."""
        return self.label == RATE_LABEL


ERROR_Z = -2.326
"""One-sided 1 % normal quantile: errored runs this far into low-pass cases are no accident."""
ERROR_GAP = 0.05
"""...and at least this far (5 points) below the pass rate where runs completed."""


@dataclass(frozen=True)
class ErrorLedger:
    """How far the runs not counted (errored or missing) could move the headline figures
    (the denominator ledger)."""

    errored: int
    """Errored runs over all cases."""
    cases: int
    """Cases with at least one run not counted."""
    rows: tuple[LedgerRow, ...]
    """Pass rate, pass@j and pass^j, each three ways."""
    rate_where_errored: float | None
    """Pass rate of the cases the errored runs fell in (weighted by their errored runs);
    None when no errored run fell in a case with a counted run."""
    rate_where_completed: float
    """The same weighted by completed runs: what the first would be if errors fell at random."""
    z: float | None
    """Standardised gap between the two under errors placed at random among completed runs."""
    missing: int = 0
    """Missing runs (no record at all) over all cases: lost like the errored ones."""

    @property
    def concentrated(self) -> bool:
        """Errored runs sit in low-pass cases more than chance allows (warn the reader)."""
        return (
            self.z is not None
            and self.rate_where_errored is not None
            and self.z < ERROR_Z
            and self.rate_where_completed - self.rate_where_errored >= ERROR_GAP
        )


def _indices(indices: Iterable[int]) -> str:
    if isinstance(indices, MissingRuns):
        return format_ranges(indices.ranges())
    return ", ".join(str(i) for i in indices)


@dataclass
class Ledger:
    """Collects run statuses one at a time and closes them into an `Accounting`."""

    _runs: dict[str, dict[int, str]] = field(default_factory=dict)

    def expect(self, case: str) -> None:
        """Name a planned case, so that it is accounted even with no run at all."""
        self._runs.setdefault(case, {})

    def add(self, case: str, run: int, status: str) -> None:
        """Record one run; the same (case, run) twice is an error."""
        runs = self._runs.get(case)
        if runs is None:
            runs = self._runs[case] = {}
        elif run in runs:
            raise duplicate_run(case, run)
        runs[run] = status

    @classmethod
    def of(cls, runs: dict[str, dict[int, str]]) -> Ledger:
        """A ledger over runs already collected by case and index (a reader that
        inlines `add` for speed, e.g. `read_verdicts`); the dicts are taken, not copied."""
        return cls(runs)

    @property
    def max_run(self) -> int:
        """The largest run index seen (0 when there is none)."""
        return max((max(r) for r in self._runs.values() if r), default=0)

    @without_gc
    def close(self, k: int, case_k: Mapping[str, int] | None = None) -> Accounting:
        """The accounting against a plan of k runs per case, or `case_k[case]` for the
        cases an adaptive rule asked fewer runs of."""
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        if k > MAX_K:
            raise InputError(
                f"k is {k:,}, more than {MAX_K:,} runs per case; a run index that large is "
                "probably a typo (a run index is 1 for the first run)"
            )
        held = case_k or {}
        cases = []
        # cases recorded at the same indices share one (immutable) MissingRuns
        shared: dict[tuple[int, ...], MissingRuns] = {}
        for case, runs in self._runs.items():
            asked = held.get(case, k)
            indices = (asked, *runs)
            missing = shared.get(indices)
            if missing is None:
                if runs and max(runs) > asked:
                    raise RunBeyondPlanError(
                        f"case {case!r} has run {max(runs)} but k is {asked}; "
                        f"ask for k >= {max(runs)} or drop the extra runs"
                    )
                missing = shared[indices] = MissingRuns(asked, runs)
            statuses = list(runs.values())
            passes = statuses.count("passed")
            completed = len(statuses)
            errored = completed - passes - statuses.count("failed")
            cases.append(
                CaseAccount(
                    case,
                    asked,
                    completed,
                    completed - errored,
                    passes,
                    tuple(sorted(i for i, s in runs.items() if s == "errored")) if errored else (),
                    missing,
                )
            )
        return Accounting(k_requested=k, cases=tuple(cases))


def account(
    runs: Iterable[tuple[str, int, str]],
    k: int,
    cases: Iterable[str] = (),
    case_k: Mapping[str, int] | None = None,
) -> Accounting:
    """Account (case, run index, status) triples against a plan of k runs per case
    (`case_k[case]` for cases asked fewer)."""
    ledger = Ledger()
    for case in cases:
        ledger.expect(case)
    for case, run, status in runs:
        ledger.add(case, run, status)
    return ledger.close(k, case_k)


def error_ledger(cases: Iterable[tuple[int, int, int]], missing: int = 0) -> ErrorLedger:
    """The denominator ledger from (counted, passes, lost) per case, lost being its runs
    not counted (errored, and missing: `missing` of them over all cases); a run that
    goes missing because it would fail moves the figures as an errored one does.

    j is the headline's (the smallest counted runs), lowered to the smallest completed
    runs when a case has fewer: every version is then computed at the same j. The
    concentration check compares the pass rate of the cases errors fell in with what
    errors placed at random among completed runs would give (a normal approximation).
    """
    rows = [(n, c, e) for n, c, e in cases if n + e > 0]
    counted = [(n, c) for n, c, _ in rows if n]
    if not counted:
        raise NoRunsError(NO_RUNS)
    j = min(min(n for n, _ in counted), min(n + e for n, _, e in rows))
    excluded = dataset(counted, j)
    low = dataset([(n + e, c) for n, c, e in rows], j)
    high = dataset([(n + e, c + e) for n, c, e in rows], j)
    ledger_rows: tuple[LedgerRow, ...] = (
        LedgerRow(RATE_LABEL, excluded.pass_at_1, low.pass_at_1, high.pass_at_1),
        LedgerRow(label_at(j), excluded.pass_at_j, low.pass_at_j, high.pass_at_j),
        LedgerRow(label_hat(j), excluded.pass_hat_j, low.pass_hat_j, high.pass_hat_j),
    )
    if excluded.weighs_cases:  # the headline is then the mean of per-case rates
        case_rate = (excluded.mean_case_rate, low.mean_case_rate, high.mean_case_rate)
        ledger_rows = (*ledger_rows, LedgerRow(CASE_RATE_LABEL, *case_rate))
    seen = [(n + e, c / n, e) for n, c, e in rows if n]
    errored = sum(e for _, _, e in seen)
    completed = sum(t for t, _, _ in seen)
    where_completed = sum(t * r for t, r, _ in seen) / completed
    where_errored = z = None
    if errored:
        where_errored = sum(e * r for _, r, e in seen) / errored
        spread = sum(t * (r - where_completed) ** 2 for t, r, _ in seen) / completed
        if spread > 0:
            z = (where_errored - where_completed) * math.sqrt(errored / spread)
    return ErrorLedger(
        errored=sum(e for _, _, e in rows) - missing,
        cases=sum(1 for _, _, e in rows if e),
        rows=ledger_rows,
        rate_where_errored=where_errored,
        rate_where_completed=where_completed,
        z=z,
        missing=missing,
    )
