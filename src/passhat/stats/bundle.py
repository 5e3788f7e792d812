"""Everything `passhat metrics` and `passhat report` show beside the point figures,
built in one call (`uncertainty`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Unpack

from passhat._gc import without_gc
from passhat.accounting import Accounting, ErrorLedger
from passhat.errors import MetricsError
from passhat.stats._base import (
    JEFFREYS,
    Resampling,
    _check_m,
    _counted_arrays,
    _resampled,
)
from passhat.stats.dataset import DatasetIntervals, dataset_intervals
from passhat.stats.forecasts import Forecast, Prior, forecast
from passhat.stats.intervals import CaseInterval, case_intervals
from passhat.stats.planning import Plan, _check_target, plan_pass_at_1, plan_pass_hat


@dataclass(frozen=True)
class Uncertainty:
    """Everything `passhat metrics` and `passhat report` show beside the point figures."""

    confidence: float
    cases: tuple[CaseInterval, ...]
    dataset: DatasetIntervals | None
    """None when fewer than 2 cases have a counted run (see `dataset_note`)."""
    dataset_note: str | None
    forecast: Forecast
    plans: tuple[Plan, ...]
    """pass@1 and pass^j plans that could be made, when a target half-width was asked for."""
    plan_notes: tuple[str, ...]
    """Why a plan asked for could not be made (e.g. every run passed: no spread)."""
    ledger: ErrorLedger | None = None
    """The denominator ledger when runs errored: figures with errors left out, as
    failures, as passes."""


@without_gc
def uncertainty(
    accounting: Accounting,
    *,
    m: int = 10,
    prior: Prior = JEFFREYS,
    target: float | None = None,
    only: Collection[str] | None = None,
    **resampling: Unpack[Resampling],
) -> Uncertainty:
    """Case intervals, dataset intervals, the forecast, and plans when `target` is given.

    `only` limits the per-case intervals and forecasts to those case ids (a terminal
    table of 30 rows need not build 100,000); dataset figures always cover every case.
    """
    confidence = _resampled(resampling).confidence
    _check_m(m)
    n, _ = _counted_arrays(accounting)
    dataset: DatasetIntervals | None = None
    note: str | None = None
    if n.size >= 2:
        dataset = dataset_intervals(accounting, **resampling)
    else:
        note = "one case with counted runs: a dataset interval needs 2 or more cases"
    plans: list[Plan] = []
    plan_notes: list[str] = []
    if target is not None:
        _check_target(target)
        n, c = _counted_arrays(accounting)
        j = int(n.min())
        for hat in (False, True):
            try:
                plans.append(
                    plan_pass_hat(n, c, j, target, confidence=confidence)
                    if hat
                    else plan_pass_at_1(n, c, target, confidence=confidence)
                )
            except MetricsError as error:
                plan_notes.append(f"{f'pass^{j}' if hat else 'pass@1'}: {error}")
    return Uncertainty(
        confidence=confidence,
        cases=case_intervals(accounting, confidence, only),
        dataset=dataset,
        dataset_note=note,
        forecast=forecast(accounting, m, prior=prior, only=only, **resampling),
        plans=tuple(plans),
        plan_notes=tuple(plan_notes),
        ledger=accounting.error_ledger(),
    )
