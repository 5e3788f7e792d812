"""The accounting and the three numbers as plain JSON-ready data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from passhat._gc import without_gc
from passhat.accounting import Accounting, CaseAccount, ErrorLedger, MissingRuns
from passhat.errors import MetricsError
from passhat.metrics import CASE_MEAN_LABEL, RATE_LABEL
from passhat.plain import named

if TYPE_CHECKING:  # not imported with the module: `report --json` of a store that keeps
    # its figures (`Store.kept_summary`) writes cases without passhat.stats or numpy
    from passhat.stats import (
        Comparison,
        Difference,
        Interval,
        Plan,
        ShareForecast,
        Uncertainty,
    )


def case_dict(c: CaseAccount) -> dict[str, Any]:
    m = c.metrics
    return {
        **named(c, ("case", "k_requested", "completed", "counted", "passes")),
        "pass_rate": m.pass_rate if m else None,
        "pass_at_k": m.pass_at_k if m else None,
        "pass_hat_k": m.pass_hat_k if m else None,
        # no counted run: no figure, so no pass@0 / pass^0 label either
        "label_at": f"pass@{c.counted}" if c.counted else None,
        "label_hat": f"pass^{c.counted}" if c.counted else None,
        "complete": c.complete,
        "missing": list(c.missing) if len(c.missing) <= MAX_LISTED else None,
        "missing_ranges": _ranges(c.missing),
        "errored": list(c.errored),
    }


MAX_LISTED = 10_000
"""Missing runs listed one by one in JSON; past this, `missing_ranges` alone says which."""


def _ranges(missing: Sequence[int]) -> list[list[int]]:
    """Missing run indices as [first, last] pairs: compact whatever k is."""
    if isinstance(missing, MissingRuns):
        return [[a, b] for a, b in missing.ranges()]
    out: list[list[int]] = []
    for index in sorted(missing):
        if out and out[-1][1] == index - 1:
            out[-1][1] = index
        else:
            out.append([index, index])
    return out
    return [
        [a, b]
        for a, b in MissingRuns(
            max(missing, default=0), set(range(1, max(missing, default=0) + 1)) - set(missing)
        ).ranges()
    ]


@without_gc
def summary_dict(
    accounting: Accounting, *, k_inferred: bool = False, with_cases: bool = True
) -> dict[str, Any]:
    """Dataset and per-case figures, each labelled with the runs that produced it
    (`with_cases=False`: `cases` is left empty, for a writer that builds them itself)."""
    d = accounting.dataset()
    m = d.metrics
    return {
        "dataset": {
            "k": m.j,
            "k_requested": accounting.k_requested,
            "k_least": accounting.k_least,
            "k_inferred": k_inferred,
            "label_at": d.label_at,
            "label_hat": d.label_hat,
            "cases": m.cases,
            "cases_total": len(accounting.cases),
            **run_counts_dict(accounting),
            "passes": m.passes,
            "pass_at_1": m.pass_at_1,
            "pass_at_k": m.pass_at_j,
            "pass_hat_k": m.pass_hat_j,
            "short": list(d.short),
            "excluded": list(d.excluded),
            "label_rate": RATE_LABEL,
            "pass_rate_over_runs": m.pass_at_1,
            # the headline: over runs (= pass_at_1, kept as it was for readers of it) when
            # every case counted the same runs, the mean of per-case rates when they differ
            "pass_rate": m.pass_rate,
            "label_pass_rate": m.label_rate,
            "pass_rate_weighs": "cases" if m.weighs_cases else "runs",
            "mean_case_rate": m.mean_case_rate,
            "label_mean_case_rate": CASE_MEAN_LABEL,
            "at_requested_k": _at_requested(accounting),
            "error_ledger": _ledger_dict(accounting.error_ledger()),
        },
        "cases": case_dicts(accounting.cases) if with_cases else [],
    }


def case_dicts(cases: Sequence[CaseAccount]) -> list[dict[str, Any]]:
    """`case_dict` of every case. Cases of one shape (the same counts, errored and missing
    runs) differ only by id: each shape is built once and copied, lists included."""
    shapes: dict[tuple[Any, ...], dict[str, Any]] = {}
    out = []
    for c in cases:
        # id(): the accounting holds every `missing`, and cases share one per index set
        key = (c.k_requested, c.completed, c.counted, c.passes, c.errored, id(c.missing))
        shape = shapes.get(key)
        if shape is None:
            shape = shapes[key] = case_dict(c)
        d = shape.copy()
        d["case"] = c.case
        if shape["missing"] is not None:  # None past MAX_LISTED
            d["missing"] = shape["missing"].copy()
        d["missing_ranges"] = [pair.copy() for pair in shape["missing_ranges"]]
        d["errored"] = shape["errored"].copy()
        out.append(d)
    return out


def _at_requested(accounting: Accounting) -> dict[str, Any] | None:
    r = accounting.at_requested()
    if r is None:
        return None
    return {
        "k": r.k,
        "label_at": f"pass@{r.k}",
        "label_hat": f"pass^{r.k}",
        "cases": r.metrics.cases,
        "pass_at_k": r.metrics.pass_at_j,
        "pass_hat_k": r.metrics.pass_hat_j,
        "left_out": list(r.left_out),
    }


def _ledger_dict(ledger: ErrorLedger | None) -> dict[str, Any] | None:
    if ledger is None:
        return None
    return {
        "errored": ledger.errored,
        "missing": ledger.missing,
        "cases": ledger.cases,
        "rows": [
            {
                "label": r.label,
                "errors_excluded": r.excluded,
                "errors_as_failures": r.as_failures,
                "errors_as_passes": r.as_passes,
                "weighs_runs": r.weighs_runs,
            }
            for r in ledger.rows
        ],
        "rate_where_errored": ledger.rate_where_errored,
        "rate_where_completed": ledger.rate_where_completed,
        "z": ledger.z,
        "concentrated_in_low_pass_cases": ledger.concentrated,
    }


def share_dict(share: ShareForecast) -> dict[str, Any]:
    """The dataset forecast; `low` and `high` are null where no interval is calibrated."""
    return {**interval_dict(share), "note": share.note, "check": share.check}


def interval_dict(interval: Interval | ShareForecast) -> dict[str, Any]:
    """One figure with its interval and how it was found."""
    return named(interval, ("label", "estimate", "low", "high", "confidence", "method"))


def _plan_dict(p: Plan) -> dict[str, Any]:
    return {
        "label": p.label,
        "target_half_width": p.target,
        "confidence": p.confidence,
        "cases": p.cases,
        "runs_per_case": p.runs_per_case,
        "half_width_now": p.half_width,
        "between_case_variance": p.between,
        "within_case_variance": p.within,
        "runs_per_case_needed": p.runs_needed,
        "cases_needed": p.cases_needed,
        "cases_needed_with_unlimited_runs": p.cases_floor,
    }


def uncertainty_dict(u: Uncertainty) -> dict[str, Any]:
    """The intervals, the forecast and any plans, as JSON-ready data.

    Keys: `dataset` (the dataset intervals, or None with `dataset_note`),
    `forecast` (m, prior and the expected share), `cases` (by case id: the
    Wilson interval and the forecast), `plans` (present when asked for).
    """
    d = u.dataset
    f = u.forecast
    dataset = None
    if d is not None:
        dataset = {
            "cases": d.cases,
            "runs": d.runs,
            "k": d.j,
            "resamples": d.resamples,
            "seed": d.seed,
            "pass_at_1": interval_dict(d.pass_at_1),
            "pass_at_1_bootstrap": interval_dict(d.pass_at_1_bootstrap),
            "pass_rate_over_runs": None if d.over_runs is None else interval_dict(d.over_runs),
            "pass_at_k": interval_dict(d.pass_at_j),
            "pass_hat_k": interval_dict(d.pass_hat_j),
            "bounds": None
            if d.bounds is None
            else {
                "pass_rate": interval_dict(d.bounds[0]),
                "pass_at_k": interval_dict(d.bounds[1]),
                "pass_hat_k": interval_dict(d.bounds[2]),
                "runs_not_counted": d.lost,
                "cases_with_no_counted_run": d.unseen,
            },
            "at_requested_k": None
            if d.at_requested is None
            else {
                "pass_at_k": interval_dict(d.at_requested[0]),
                "pass_hat_k": interval_dict(d.at_requested[1]),
                "cases": d.requested_cases,
                "left_out": d.requested_left_out,
            },
        }
    forecasts = {c.case: c for c in f.cases}
    cases: dict[str, Any] = {}
    notes: dict[tuple[Any, ...], str | None] = {}  # a note depends on these four only
    for c in u.cases:
        fc = forecasts[c.case]
        note = None
        if c.bound is not None:
            key = (c.runs, c.passes, c.bound, c.confidence)
            note = notes.get(key)
            if note is None:
                note = notes[key] = c.note
        cases[c.case] = {
            "interval": {
                "low": c.low,
                "high": c.high,
                "confidence": c.confidence,
                "method": "Wilson score",
                "bound": c.bound,
                "note": note,
            },
            "forecast": {
                "m": fc.m,
                "all_pass_probability": fc.expected,
                "low": fc.low,
                "high": fc.high,
            },
        }
    out: dict[str, Any] = {
        "confidence": u.confidence,
        "dataset": dataset,
        "dataset_note": u.dataset_note,
        "forecast": {
            "m": f.m,
            "prior": f.prior_name,
            "prior_beta": list(f.prior),
            "expected_share": share_dict(f.share),
        },
        "cases": cases,
    }
    if u.plans or u.plan_notes:
        out["plans"] = [_plan_dict(p) for p in u.plans]
        out["plan_notes"] = list(u.plan_notes)
    return out


@without_gc
def summary_with_uncertainty(
    accounting: Accounting, u: Uncertainty, *, k_inferred: bool = False, twins: bool = False
) -> dict[str, Any]:
    """`summary_dict` with the intervals and forecasts beside the figures they qualify.

    Every key of `summary_dict` is kept; added are `dataset.intervals`,
    `dataset.intervals_note`, `dataset.forecast`, per case `interval` and
    `forecast` (None for a case with no counted run), and `plans` when asked for.

    `twins`: `u` holds the cases' intervals and forecasts for one case of each counted
    runs and passes only (`uncertainty(only=representatives(accounting))`, a fraction
    of the cost at 10,000 cases): every case takes copies of its twin's, which depend
    on those two counts alone.
    """
    out = summary_dict(accounting, k_inferred=k_inferred)
    extra = uncertainty_dict(u)
    add_dataset_uncertainty(out["dataset"], extra)
    if twins:
        _twin_figures(out["cases"], accounting, u, extra["cases"])
    else:
        for case in out["cases"]:
            per_case = extra["cases"].get(case["case"], {})
            case["interval"] = per_case.get("interval")
            case["forecast"] = per_case.get("forecast")
    if "plans" in extra:
        out["plans"] = extra["plans"]
        out["plan_notes"] = extra["plan_notes"]
    return out


def add_dataset_uncertainty(dataset: dict[str, Any], extra: dict[str, Any]) -> None:
    """Put the dataset's intervals, forecast and confidence from `uncertainty_dict` into
    the `dataset` part of `summary_dict`."""
    dataset["intervals"] = extra["dataset"]
    dataset["intervals_note"] = extra["dataset_note"]
    dataset["forecast"] = extra["forecast"]
    dataset["confidence"] = extra["confidence"]


def twin_figures(
    u: Uncertainty, held: dict[str, Any]
) -> Callable[[CaseAccount], dict[str, Any] | None]:
    """A case's interval and forecast (`uncertainty_dict`'s per-case entry, `held`) read
    from the case in `u` with the same counted runs and passes, on which they alone
    depend; None for a case with no counted run. `u` may hold one case of each
    (`uncertainty(only=representatives(accounting))`); a counted case with no such twin
    is a MetricsError."""
    by_counts: dict[tuple[int, int], dict[str, Any]] = {
        (c.runs, c.passes): held[c.case] for c in u.cases
    }

    def figures(c: CaseAccount) -> dict[str, Any] | None:
        if not c.counted:
            return None
        twin = by_counts.get((c.counted, c.passes))
        if twin is None:
            raise MetricsError(
                f"no interval for case {c.case!r}: give uncertainty(only=) its representatives()"
            )
        return twin

    return figures


def _twin_figures(
    cases: list[dict[str, Any]], accounting: Accounting, u: Uncertainty, held: dict[str, Any]
) -> None:
    """Each case dict gets copies of its twin's interval and forecast (`twin_figures`)."""
    figures = twin_figures(u, held)
    for case, c in zip(cases, accounting.cases, strict=True):
        twin = figures(c)
        case["interval"] = None if twin is None else twin["interval"].copy()
        case["forecast"] = None if twin is None else twin["forecast"].copy()


def _side_dict(accounting: Accounting, source: str, k_inferred: bool) -> dict[str, Any]:
    return {
        "source": source,
        "k_requested": accounting.k_requested,
        "k_inferred": k_inferred,
        "cases": len(accounting.cases),
        **run_counts_dict(accounting),
        "shortfalls": accounting.shortfalls(),
    }


def run_counts_dict(accounting: Accounting) -> dict[str, Any]:
    """Whether the plan was met and its runs counted, as every JSON report says them."""
    return named(accounting, _RUN_COUNTS)


_RUN_COUNTS = (
    "complete",
    "runs_requested",
    "runs_completed",
    "runs_counted",
    "runs_errored",
    "runs_missing",
)


def _difference_dict(d: Difference) -> dict[str, Any]:
    return {
        **named(d, ("label", "a", "b", "difference", "low", "high", "confidence", "p_value")),
        "p_exact": d.exact,
        "se": d.se,
        "mde": None if d.mde_note is not None else d.mde,
        **named(d, ("mde_note", "power", "method")),
    }


def comparison_dict(
    c: Comparison,
    *,
    source_a: str = "A",
    source_b: str = "B",
    k_inferred_a: bool = False,
    k_inferred_b: bool = False,
) -> dict[str, Any]:
    """A comparison of B with A as JSON-ready data, with each side's accounting."""
    from passhat.stats import CASE_ALPHA

    return {
        "a": _side_dict(c.a, source_a, k_inferred_a),
        "b": _side_dict(c.b, source_b, k_inferred_b),
        "paired_cases": len(c.cases),
        "only_a": list(c.only_a),
        "only_b": list(c.only_b),
        "left_out": list(c.left_out),
        "k": c.j,
        "resamples": c.resamples,
        "seed": c.seed,
        "metrics": {
            "pass_at_1": _difference_dict(c.pass_at_1),
            "pass_at_k": _difference_dict(c.pass_at_j),
            "pass_hat_k": _difference_dict(c.pass_hat_j),
        },
        "verdict": {
            "metric": c.verdict.metric,
            "outcome": c.verdict.outcome,
            "text": c.verdict.text,
            "cases_needed": c.verdict.cases_needed,
            "runs_per_case_needed": c.verdict.runs_needed,
        },
        "cases": [
            {
                "case": x.case,
                "a_counted": x.runs_a,
                "a_passes": x.passes_a,
                "a_rate": x.rate_a,
                "b_counted": x.runs_b,
                "b_passes": x.passes_b,
                "b_rate": x.rate_b,
                "difference": x.difference,
                "p_value": x.p_value,
                "q_value": x.q_value,
                "outcome": x.outcome,
            }
            for x in c.cases
        ],
        "case_tests": {
            "test": "Fisher exact, two-sided",
            "correction": c.correction,
            "adjust": c.adjust,
            # BH bounds the share of false verdicts, Holm the chance of any
            "false_discovery_rate": CASE_ALPHA if c.adjust == "bh" else None,
            "family_wise_error_rate": CASE_ALPHA if c.adjust == "holm" else None,
        },
        "notes": list(c.notes),
    }
