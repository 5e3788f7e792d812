"""The accounting and the three numbers as plain JSON-ready data."""

from __future__ import annotations

from typing import Any

from passhat.accounting import Accounting, CaseAccount


def case_dict(c: CaseAccount) -> dict[str, Any]:
    m = c.metrics
    return {
        "case": c.case,
        "k_requested": c.k_requested,
        "completed": c.completed,
        "counted": c.counted,
        "passes": c.passes,
        "pass_rate": m.pass_rate if m else None,
        "pass_at_k": m.pass_at_k if m else None,
        "pass_hat_k": m.pass_hat_k if m else None,
        "label_at": f"pass@{c.counted}",
        "label_hat": f"pass^{c.counted}",
        "complete": c.complete,
        "missing": list(c.missing),
        "errored": list(c.errored),
    }


def summary_dict(accounting: Accounting, *, k_inferred: bool = False) -> dict[str, Any]:
    """Dataset and per-case figures, each labelled with the runs that produced it."""
    d = accounting.dataset()
    m = d.metrics
    return {
        "dataset": {
            "k": m.j,
            "k_requested": accounting.k_requested,
            "k_inferred": k_inferred,
            "label_at": d.label_at,
            "label_hat": d.label_hat,
            "complete": d.complete,
            "cases": m.cases,
            "cases_total": len(accounting.cases),
            "runs_requested": accounting.runs_requested,
            "runs_completed": accounting.runs_completed,
            "runs_counted": accounting.runs_counted,
            "runs_errored": accounting.runs_errored,
            "runs_missing": accounting.runs_missing,
            "passes": m.passes,
            "pass_at_1": m.pass_at_1,
            "pass_at_k": m.pass_at_j,
            "pass_hat_k": m.pass_hat_j,
            "short": list(d.short),
            "excluded": list(d.excluded),
        },
        "cases": [case_dict(c) for c in accounting.cases],
    }
